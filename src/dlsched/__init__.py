"""dlsched: scheduling deep-learning training jobs on GPU clusters.

Layers (imports point downward only): cluster -> workload -> perf -> policies
-> sim / live -> run -> report -> api / cli.  See docs/architecture.md.

The Python API (``dlsched.simulate``, ``compare``, ``load_results``; docs/api.md) loads on first
use, so ``import dlsched`` and ``dlsched --version`` stay cheap (no pandas, no engine).
"""

__version__ = "0.1.0"

_API = ("simulate", "compare", "load_results", "make_spec", "Results", "Comparison")
__all__ = [*_API, "RunSpec", "__version__"]


def __getattr__(name: str):
    if name in _API:
        from dlsched import api

        return getattr(api, name)
    if name == "RunSpec":
        from dlsched.run.spec import RunSpec

        return RunSpec
    raise AttributeError(f"module 'dlsched' has no attribute {name!r}")
