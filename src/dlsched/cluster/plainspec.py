"""The shipped cluster specs as plain frozen dataclasses: no pydantic on a simulation's start-up.

Importing pydantic and building the schema in ``dlsched.cluster.spec`` costs about 0.13 CPU s,
a third of a FIFO run on a peer's trace (issue 21).  The specs that ship with the package are
checked by the test suite against that schema (``tests/cluster/test_plainspec.py``: every one
validates, and its plain form equals the validated one field by field, defaults included), so
``Cluster.load`` of a shipped name reads it here without validating again.  A user's YAML file
still goes through the schema, with its errors naming file, line and field.

The classes mirror ``IntraSpec``, ``NodeGroupSpec``, ``NetworkSpec`` and ``ClusterSpec`` (same
fields, defaults and derived values); the test above fails when either side changes alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from dlsched.cluster.gpus import gpu_type
from dlsched.cluster.intra_defaults import intra_value


@dataclass(frozen=True, slots=True)
class PlainIntra:
    """How a node's GPUs connect, as a spec gives it."""

    kind: str = "pcie"
    sockets: int = 1
    gpus_per_switch: int | None = None
    bandwidth_GBps: float | None = None
    latency_us: float | None = None
    cross_socket_GBps: float | None = None
    cross_socket_latency_us: float | None = None

    def value(self, key: str) -> float:
        return intra_value(self, key)


@dataclass(frozen=True, slots=True)
class PlainNodeGroup:
    """Nodes of one kind, as a spec gives them."""

    name: str
    gpu: str
    nodes: int
    gpus_per_node: int
    intra: PlainIntra = PlainIntra()
    nic_gbps: float = 100.0
    nics: int = 1
    nodes_per_rack: int = 8


@dataclass(frozen=True, slots=True)
class PlainNetwork:
    """The network between nodes, as a spec gives it."""

    topology: str = "tiered"
    rack_gbps: float | None = None
    rack_latency_us: float = 5.0
    inter_rack_gbps: float | None = None
    inter_rack_latency_us: float = 15.0
    oversubscription: float = 1.0
    spines: int = 1


@dataclass(frozen=True, slots=True)
class PlainClusterSpec:
    """A cluster spec as plain data (read without pydantic)."""

    name: str
    node_groups: tuple[PlainNodeGroup, ...]
    description: str = ""
    network: PlainNetwork = field(default_factory=PlainNetwork)

    @property
    def total_gpus(self) -> int:
        return sum(g.nodes * g.gpus_per_node for g in self.node_groups)


def _build(cls, data: dict, where: str):
    """``cls(**data)`` refusing unknown keys (a shipped spec with one fails its test, not silently here)."""
    types = {f.name: f.type for f in fields(cls)}
    extra = sorted(set(data) - types.keys())
    if extra:
        raise ValueError(f"{where}: unknown field(s) {extra} for {cls.__name__}")
    # the schema stores a float field given as an integer (``nic_gbps: 100``) as a float
    return cls(**{k: float(v) if type(v) is int and "float" in types[k] else v for k, v in data.items()})


def plain_spec(data: dict, source: str) -> PlainClusterSpec:
    """A shipped spec's parsed YAML mapping as a ``PlainClusterSpec`` (GPU names made canonical,
    as the schema's validator does)."""
    groups = []
    for g in data["node_groups"]:
        g = dict(g)
        g["intra"] = _build(PlainIntra, g.get("intra") or {}, source)
        g["gpu"] = gpu_type(g["gpu"]).name
        groups.append(_build(PlainNodeGroup, g, source))
    out = dict(data)
    out["node_groups"] = tuple(groups)
    if "network" in data:
        out["network"] = _build(PlainNetwork, data["network"] or {}, source)
    return _build(PlainClusterSpec, out, source)
