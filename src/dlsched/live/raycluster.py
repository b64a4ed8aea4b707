"""Ray clusters as dlsched clusters: an emulated one for tests, and any one read into the model.

``EmulatedCluster`` starts several Ray nodes on this machine with fake GPU
resources (Ray only counts GPUs; nothing touches a device), so the live
runtime and its tests run without a GPU.  ``layout_from_ray`` reads the nodes
of any Ray cluster and maps them to a ``ClusterSpec`` and a GPU-id table:

- GPUs per node: the node's ``GPU`` resource (nodes without GPUs are skipped);
- GPU type: a ``gpu_type:<name>`` custom resource, else a ``gpu_type`` node label,
  else Ray's own ``accelerator_type:<name>`` resource, else ``default_gpu``;
- rack: a ``rack:<n>`` custom resource, else a ``rack`` node label, else rack 0.

Nodes with the same (rack, type, GPUs per node) form one node group, which
the cluster model makes one rack; a rack holding two GPU types becomes two
racks in the model (the model keeps one type per group).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from dlsched.cluster.gpus import gpu_type
from dlsched.cluster.spec import ClusterSpec
from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError, UnknownNameError


@dataclass(frozen=True)
class NodeDef:
    """One emulated node: fake GPUs of a type, in a rack."""

    gpus: int = 2
    gpu_type: str = "A40"
    rack: int = 0
    cpus: int = 1  # Ray CPU slots; workers ask for none, so this only bounds plain Ray tasks

    def resources(self) -> dict[str, float]:
        return {f"gpu_type:{self.gpu_type}": float(self.gpus), f"rack:{self.rack}": 1.0}


LOOPBACK = "127.0.0.1"


def is_loopback(address: str | None) -> bool:
    host = (address or "").rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def stay_on_loopback() -> None:
    """Make this process's Ray driver reach a loopback-bound cluster on 127.0.0.1.

    ``ray.init`` rewrites a loopback address to the machine's network address
    (so that other machines could use it), which a cluster listening on
    127.0.0.1 only does not answer.  Ray skips that rewrite where multi-machine
    clusters are off (its ``ENABLE_RAY_CLUSTER`` switch, read at each call), which
    is the truth for an emulated cluster: every node is on this machine.
    """
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False

_EMU = re.compile(r"^(\d+)x(\d+)(?::([A-Za-z0-9_.-]+))?(?:@(\d+))?$")


def parse_emulation(text: str) -> list[NodeDef]:
    """``"3x2:A40"`` = 3 nodes of 2 A40s; comma-separated parts, ``@R`` puts them in rack R."""
    nodes: list[NodeDef] = []
    for part in text.split(","):
        m = _EMU.match(part.strip())
        if not m:
            raise InputError(f"bad emulated cluster part {part!r}; expected NODESxGPUS[:TYPE][@RACK], "
                             "e.g. 3x2:A40 or 2x2:A40@0,2x2:A10@1", field="--emulate")
        count, gpus, gt, rack = int(m[1]), int(m[2]), m[3] or "A40", int(m[4] or 0)
        try:
            gt = gpu_type(gt).name
        except UnknownNameError as e:
            raise InputError(e.reason, field="--emulate") from None
        nodes += [NodeDef(gpus, gt, rack) for _ in range(count)]
    return nodes


class EmulatedCluster:
    """Several Ray nodes on one machine (``ray.cluster_utils.Cluster``) with fake GPUs."""

    def __init__(self, nodes: list[NodeDef]):
        from ray.cluster_utils import Cluster as RayCluster

        if not nodes:
            raise InputError("an emulated cluster needs at least one node")
        head, *rest = nodes
        stay_on_loopback()
        self._ray = RayCluster(initialize_head=True, head_node_args=self._args(head))
        self.handles = [self._ray.head_node]
        for nd in rest:
            self.add_node(nd)
        self._ray.wait_for_nodes()

    @staticmethod
    def _args(nd: NodeDef) -> dict:
        # every emulated node on the loopback address: the GCS, raylets, object managers, agents
        # and workers then listen on 127.0.0.1 only (Ray would pick the machine's address and listen
        # on it, unauthenticated, for anyone on the network); no dashboard (nothing here uses it)
        return {"num_cpus": nd.cpus, "num_gpus": nd.gpus, "resources": nd.resources(),
                "node_ip_address": LOOPBACK, "include_dashboard": False}

    @property
    def address(self) -> str:
        return self._ray.address

    def add_node(self, nd: NodeDef):
        h = self._ray.add_node(**self._args(nd))
        self.handles.append(h)
        return h

    def wait(self, timeout_s: float = 60.0) -> None:
        """Until Ray (as seen by this process's driver) lists every node alive with its GPUs.

        ``wait_for_nodes`` only waits for registration; a node's resources can show
        up a moment later, and a layout read in between would miss its GPUs.
        """
        import time

        import ray

        self._ray.wait_for_nodes()
        want = sorted(h.node_id for h in self.handles)
        end = time.monotonic() + timeout_s
        while True:
            seen = sorted(n["NodeID"] for n in ray.nodes()
                          if n.get("Alive") and n.get("Resources", {}).get("GPU", 0) > 0)
            if set(want) <= set(seen):
                return
            if time.monotonic() > end:
                raise RuntimeError(f"emulated Ray nodes not visible after {timeout_s:.0f} s: "
                                   f"want {len(want)}, see {len(seen)}")
            time.sleep(0.2)

    def remove_node(self, handle) -> None:
        """Kill a node and everything on it (the node-failure fault)."""
        self._ray.remove_node(handle, allow_graceful=False)
        self.handles.remove(handle)

    def shutdown(self) -> None:
        self._ray.shutdown()


# ---------------------------------------------------------------- reading a cluster


@dataclass(frozen=True)
class NodeInfo:
    node_id: str  # Ray's node id (hex)
    gpu_type: str
    rack: int
    gpus: int
    address: str


@dataclass(frozen=True)
class ClusterLayout:
    """The cluster model of a Ray cluster plus where each dlsched GPU id lives."""

    spec: ClusterSpec
    nodes: tuple[NodeInfo, ...]  # in the cluster model's node order
    slots: tuple[tuple[str, int], ...]  # GPU id -> (Ray node id, local index)

    def cluster(self) -> Cluster:
        return Cluster(self.spec)

    def to_json(self) -> str:
        return json.dumps({"spec": self.spec.model_dump(mode="json"),
                           "nodes": [asdict(n) for n in self.nodes],
                           "slots": [list(s) for s in self.slots]}, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> "ClusterLayout":
        d = json.loads(text)
        return ClusterLayout(ClusterSpec.model_validate(d["spec"]), tuple(NodeInfo(**n) for n in d["nodes"]),
                             tuple((s[0], int(s[1])) for s in d["slots"]))


def _tagged(res: dict, labels: dict, prefix: str) -> str | None:
    for key in res:
        if key.startswith(prefix + ":"):
            return key.split(":", 1)[1]
    return labels.get(prefix)


def layout_from_ray(ray_nodes: list[dict], name: str = "live", default_gpu: str = "A40") -> ClusterLayout:
    """Map alive Ray nodes (``ray.nodes()``) with GPUs to a ClusterSpec and a GPU-id table."""
    infos = []
    for n in ray_nodes:
        res = n.get("Resources") or {}
        gpus = int(res.get("GPU", 0))
        if not n.get("Alive") or gpus <= 0:
            continue
        labels = n.get("Labels") or {}
        gt = _tagged(res, labels, "gpu_type") or _tagged(res, labels, "accelerator_type") or default_gpu
        try:
            gt = gpu_type(gt).name
        except UnknownNameError as e:
            raise InputError(f"Ray node {n['NodeID'][:12]}: {e.reason}") from None
        rack = _tagged(res, labels, "rack")
        infos.append(NodeInfo(n["NodeID"], gt, int(rack) if rack and rack.isdigit() else 0, gpus,
                              n.get("NodeManagerAddress", "")))
    if not infos:
        raise InputError("the Ray cluster has no alive node with GPU resources")
    groups: dict[tuple, list[NodeInfo]] = {}
    for info in sorted(infos, key=lambda i: (i.rack, i.gpu_type, i.gpus, i.node_id)):
        groups.setdefault((info.rack, info.gpu_type, info.gpus), []).append(info)
    node_groups, ordered, slots = [], [], []
    for (rack, gt, gpus), members in groups.items():
        node_groups.append({"name": f"rack{rack}-{gt}-{gpus}g", "gpu": gt, "nodes": len(members),
                            "gpus_per_node": gpus, "nodes_per_rack": len(members)})
        for info in members:  # the cluster model numbers GPUs group by group, node by node
            ordered.append(info)
            slots += [(info.node_id, local) for local in range(info.gpus)]
    spec = ClusterSpec.model_validate({"name": name, "description": "read from Ray node resources",
                                       "node_groups": node_groups})
    return ClusterLayout(spec, tuple(ordered), tuple(slots))
