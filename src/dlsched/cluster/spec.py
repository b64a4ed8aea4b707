"""Cluster specs: the YAML schema, validation, and line-accurate errors.

A spec lists node groups (N nodes of one GPU type each, with an intra-node
interconnect and a NIC) and the network above them.  Racks are formed inside
each group, ``nodes_per_rack`` nodes at a time.  Link figures that are not
given fall back to per-kind defaults (``INTRA_DEFAULTS`` in ``intra_defaults``), cited there.
``Cluster.load`` reads the shipped specs without this schema (``plainspec``; a test keeps the
two equal); a user's file is validated here.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dlsched.cluster.gpus import gpu_type
from dlsched.cluster.intra_defaults import INTRA_DEFAULTS, intra_value  # noqa: F401  (re-exported)
from dlsched.cluster.shipped import path_given, shipped_name, shipped_specs  # noqa: F401  (shipped_specs re-exported)
from dlsched.errors import UnknownNameError
from dlsched.yamlinput import load_yaml, read_yaml_file, validate

IntraKind = Literal["nvswitch", "nvlink", "pcie"]

# Largest cluster a spec may describe: the simulator builds per-GPU state, so a typo such as
# ``nodes: 100000000000`` would otherwise exhaust memory instead of failing.
MAX_GPUS = 1_000_000


class _Strict(BaseModel):
    # strict: no true -> 1 or "4" -> 4; allow_inf_nan: an infinite bandwidth is a typo, not a spec
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class IntraSpec(_Strict):
    kind: IntraKind = "pcie"
    sockets: int = Field(1, ge=1)
    gpus_per_switch: int | None = Field(None, ge=1)  # PCIe switch fan-out; default: all GPUs of a socket
    bandwidth_GBps: float | None = Field(None, gt=0)
    latency_us: float | None = Field(None, ge=0)
    cross_socket_GBps: float | None = Field(None, gt=0)
    cross_socket_latency_us: float | None = Field(None, ge=0)

    def value(self, key: str) -> float:
        return intra_value(self, key)


class NodeGroupSpec(_Strict):
    name: str
    gpu: str
    nodes: int = Field(ge=1)
    gpus_per_node: int = Field(ge=1)
    intra: IntraSpec = IntraSpec()
    nic_gbps: float = Field(100.0, gt=0)  # per node, Gbit/s
    nics: int = Field(1, ge=1)  # NICs sharing nic_gbps (network layer: GPUs split evenly over them)
    nodes_per_rack: int = Field(8, ge=1)

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: str) -> str:
        try:
            return gpu_type(v).name
        except UnknownNameError as e:
            raise ValueError(e.reason) from None

    @model_validator(mode="after")
    def _layout(self):
        if self.gpus_per_node % self.intra.sockets:
            raise ValueError(f"gpus_per_node {self.gpus_per_node} is not divisible by sockets "
                             f"{self.intra.sockets}")
        per_socket = self.gpus_per_node // self.intra.sockets
        if self.intra.gpus_per_switch and per_socket % self.intra.gpus_per_switch:
            raise ValueError(f"GPUs per socket ({per_socket}) is not divisible by gpus_per_switch "
                             f"{self.intra.gpus_per_switch}")
        return self


class NetworkSpec(_Strict):
    # double-sided and lingjun: CRUX's link graphs (section 6.1 and the Lingjun topo.csv), built by
    # dlsched.comm.fabric for the flow model; the alpha-beta perf model still prices them by tiers
    topology: Literal["tiered", "clos", "double-sided", "lingjun"] = "tiered"
    rack_gbps: float | None = Field(None, gt=0)  # intra-rack per-port speed; default: the NIC's
    rack_latency_us: float = Field(5.0, ge=0)
    inter_rack_gbps: float | None = Field(None, gt=0)  # per-host speed across racks; default: the NIC's
    inter_rack_latency_us: float = Field(15.0, ge=0)
    oversubscription: float = Field(1.0, ge=1.0)  # rack uplink oversubscription ratio
    spines: int = Field(1, ge=1)  # clos: spine (aggregation) switches, i.e. equal-cost paths between racks
    # topology and spines shape the link graph of dlsched.network (``--network flow``); without
    # it the alpha-beta perf model prices a Clos fabric by its tiers (machine, rack, across racks)

    @model_validator(mode="after")
    def _spines_need_clos(self):
        if self.topology != "clos" and self.spines != 1:  # the tiered model has one path between racks
            raise ValueError(f"spines {self.spines} describes a Clos fabric; set topology: clos (the "
                             f"{self.topology} model would ignore it)")
        return self


class ClusterSpec(_Strict):
    name: str
    description: str = ""
    node_groups: list[NodeGroupSpec] = Field(min_length=1)
    network: NetworkSpec = NetworkSpec()

    @model_validator(mode="after")
    def _unique_groups(self):
        names = [g.name for g in self.node_groups]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate node group names: {sorted(dup)}")
        if self.total_gpus > MAX_GPUS:
            raise ValueError(f"{self.total_gpus} GPUs in all; at most {MAX_GPUS:,} are supported")
        return self

    @property
    def total_gpus(self) -> int:
        return sum(g.nodes * g.gpus_per_node for g in self.node_groups)


# ---------------------------------------------------------------- loading


def parse_spec(text: str, source: str = "<string>") -> ClusterSpec:
    """Parse and validate a cluster spec; errors name the file, line and field."""
    root, data = load_yaml(text, source, "a cluster spec must be a mapping with 'name' and 'node_groups'")
    return validate(ClusterSpec, data, root, source)


def load_spec(name_or_path: str | Path) -> ClusterSpec:
    """Load a spec from a file path, or by the name of a shipped spec."""
    name = shipped_name(name_or_path)
    if name is None:
        path = Path(name_or_path)
        if path.suffix in (".yaml", ".yml") or path_given(path):
            return parse_spec(read_yaml_file(path), str(path))
        from dlsched.cluster.shipped import cluster_names, plugin_spec_file

        plugin = plugin_spec_file(str(name_or_path))
        if plugin is None:
            raise UnknownNameError("cluster spec", str(name_or_path), cluster_names())
        return parse_spec(plugin.read_text(), f"{name_or_path} ({plugin})")
    text = (resources.files("dlsched.cluster") / "specs" / f"{name}.yaml").read_text()
    return parse_spec(text, f"{name}.yaml")
