"""Gavel: heterogeneity-aware throughput maximisation, round-based (``gavel``) and as the Crius paper
ran it (``gavel-admit``), with the exact solvers its LPs use."""
