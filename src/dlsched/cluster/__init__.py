"""Cluster model: GPU types, topology built from YAML specs, GPU-level free map."""

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.gpus import GPU_TYPES, GPUType, gpu_type
from dlsched.cluster.spec import ClusterSpec, load_spec, parse_spec, shipped_specs
from dlsched.cluster.topology import Cluster, LinkCost, Node, Tier

__all__ = ["Cluster", "ClusterSpec", "FreeMap", "GPUType", "GPU_TYPES", "LinkCost", "Node", "Tier",
           "gpu_type", "load_spec", "parse_spec", "shipped_specs"]
