"""dlsched: scheduling deep-learning training jobs on GPU clusters.

Layers (imports point downward only): cluster -> workload -> perf -> policies
-> sim / live -> report -> cli.  See docs/architecture.md.
"""

__version__ = "0.1.0"
