"""Crius (Cell-based scheduling with adaptive parallelism on heterogeneous GPUs): the policy, its
bounded scaling search, and the shape tables the Crius comparison's baselines share."""
