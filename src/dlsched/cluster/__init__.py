"""Cluster model: GPU types, topology built from YAML specs, GPU-level free map.

The names below are imported on first use (PEP 562): importing a submodule such as
``dlsched.cluster.shipped`` must not pull numpy and pydantic into the CLI's start-up.
"""

from importlib import import_module

_WHERE = {"FreeMap": "freemap", "GPU_TYPES": "gpus", "GPUType": "gpus", "gpu_type": "gpus",
          "ClusterSpec": "spec", "load_spec": "spec", "parse_spec": "spec", "shipped_specs": "shipped",
          "Cluster": "topology", "LinkCost": "topology", "Node": "topology", "Tier": "topology"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(f"dlsched.cluster.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'dlsched.cluster' has no attribute {name!r}")
