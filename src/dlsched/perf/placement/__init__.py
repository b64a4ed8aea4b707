"""Iteration time of a job on concrete GPUs, and the shape key that decides it."""
