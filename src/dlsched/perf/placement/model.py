"""``PlacementPerfModel``: iteration time of a data-parallel job on concrete GPUs.

iteration = compute (one GPU, per-GPU batch, slowest GPU type of the allocation)
          + gradient synchronisation still running when backward ends
            (buckets all-reduced on the placement's link hierarchy, overlapped
            with backward; see ``gradsync`` and ``collectives``).

Pure: the answer depends only on the job's (model, size variant, global
batch) and the placement *shape* (``shape.PlacementShape``), so it is cached
twice: by the exact GPU tuple (a dict lookup) and by shape.

Also here: ``placement_tier`` (Dally's machine / rack / network) and
``network_sensitivity`` (slowdown at each tier relative to the machine tier).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from dlsched.cluster.topology import Cluster, Tier
from dlsched.perf import compute as cmp
from dlsched.perf.comm import gradsync
from dlsched.perf.base import IterCost, PerfModel
from dlsched.perf.comm.collectives import ALGORITHMS, allreduce_time, alltoall_time
from dlsched.perf.sharing.interference import PackingResult, pack, packed_job
from dlsched.perf.placement.shape import PlacementShape, shape_index
from dlsched.workload.job import JobSpec
from dlsched.workload.models import ModelInfo, get_model

TIERS = ("machine", "rack", "network")
_EXACT_CACHE_MAX = 1 << 18  # exact-GPU memo entries before it is cleared (the shape cache stays)


def tier_name(tier: Tier) -> str:
    """Dally's three tiers: every intra-node tier is the machine tier."""
    if tier <= Tier.CROSS_SOCKET:
        return "machine"
    return "rack" if tier == Tier.RACK else "network"


def placement_tier(cluster: Cluster, gpus) -> str:
    """``"machine"``, ``"rack"`` or ``"network"``: the slowest tier the GPUs span."""
    return tier_name(cluster.tier(gpus))


class PlacementPerfModel(PerfModel):
    """Placement-aware pricing: compute + bucketed, overlapped all-reduce on the real topology.

    Options: ``bucket_mb`` (DDP bucket size; <= 0 means one all-reduce per layer),
    ``overlap`` (communication overlaps backward), ``profile`` (CSV path or
    ``ProfileTable`` of measured iteration times, overriding the FLOPs model and
    the built-in public figures), ``algorithm`` (``ring`` | ``tree`` |
    ``hierarchical`` | ``auto``).  ``plan`` is accepted for the contract and
    ignored: this model prices data parallelism; tensor/pipeline plans are the
    parallelism model's (``dlsched.perf.parallel``).
    """

    spec_keyed = True

    def __init__(self, cluster: Cluster, bucket_mb: float = 25.0, overlap: bool = True,
                 profile: str | Path | cmp.ProfileTable | None = None, algorithm: str = "auto",
                 contention: dict[str, float] | None = None, utilisation: dict[str, float] | None = None):
        super().__init__(cluster)
        # packing figures per family (None: interference.CONTENTION and the model's utilisation)
        self.contention, self.utilisation = contention, utilisation
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
        self.bucket_mb = float(bucket_mb)
        self.overlap = bool(overlap)
        self.algorithm = algorithm
        base = cmp.ProfileTable.from_measured()
        if profile is None:
            self.table = base
        else:
            user = profile if isinstance(profile, cmp.ProfileTable) else cmp.ProfileTable.load(profile)
            self.table = user.merged_over(base)
        self.profile_path = None if profile is None or isinstance(profile, cmp.ProfileTable) else str(profile)
        self._index = shape_index(cluster)
        self._exact: dict = {}
        self._by_shape: dict = {}
        self._models: dict = {}

    # ------------------------------------------------------------------ pricing

    def price(self, job: JobSpec, gpus: Sequence[int], plan=None) -> IterCost:
        gl = gpus if type(gpus) is tuple else tuple(gpus.tolist() if hasattr(gpus, "tolist") else gpus)
        key = (job.model, job.params, job.batch_size, gl)
        hit = self._exact.get(key)
        if hit is not None:
            return hit
        if not gl:
            raise ValueError("a placement needs at least one GPU")
        shape = self._index.shape(gl)
        cost = self.price_shape(job.model, job.params, job.batch_size, shape)
        if len(self._exact) >= _EXACT_CACHE_MAX:
            self._exact.clear()
        self._exact[key] = cost
        return cost

    def price_shape(self, model_name: str, params: str | None, batch: int, shape: PlacementShape) -> IterCost:
        """Iteration cost of a (model, variant, global batch) on a placement shape; cached."""
        key = (model_name, params, batch, shape)
        hit = self._by_shape.get(key)
        if hit is None:
            hit = self._by_shape[key] = self._price(self._model(model_name, params), batch, shape)
        return hit

    def _model(self, name: str, params: str | None) -> ModelInfo:
        m = self._models.get((name, params))
        if m is None:
            m = self._models[(name, params)] = get_model(name, params)
        return m

    def _price(self, model: ModelInfo, batch: int, shape: PlacementShape) -> IterCost:
        n = shape.n
        per_gpu = batch / n
        gpus = [self.cluster.gpu_types[t] for t in shape.types]
        # a mixed-type allocation runs at the pace of its slowest GPU (synchronous SGD)
        compute = max(cmp.compute_time(model, g, per_gpu, self.table) for g in gpus)
        if n <= 1:
            return IterCost(compute, compute, 0.0)
        links = self._index.links(shape)
        backward = gradsync.BACKWARD_SHARE * max(0.0, compute - cmp.overhead_s(model))
        algo = self.algorithm
        ep = model.family == "moe"
        exposed, _ = gradsync.exposed_comm(gradsync.buckets(model, self.bucket_mb, ep), backward,
                                           lambda nb: allreduce_time(nb, links, algo), self.overlap)
        # expert parallelism: token dispatch/combine all-to-alls sit on the critical path
        a2a = sum(count * alltoall_time(nbytes * per_gpu / count, links)
                  for nbytes, count in _alltoall_traffic(model)) if ep else 0.0
        comm = exposed + a2a
        return IterCost(compute + comm, compute, comm)

    def comm_breakdown(self, job: JobSpec, gpus: Sequence[int]) -> dict:
        """Compute, total and exposed communication seconds of one iteration (for reports)."""
        gl = gpus.tolist() if hasattr(gpus, "tolist") else list(gpus)
        shape = self._index.shape(gl)
        model = self._model(job.model, job.params)
        cost = self.price(job, gl)
        total = 0.0
        if shape.n > 1:
            links = self._index.links(shape)
            ep = model.family == "moe"
            total = sum(allreduce_time(b.nbytes, links, self.algorithm)
                        for b in gradsync.buckets(model, self.bucket_mb, ep))
            per_gpu = job.batch_size / shape.n
            total += sum(k * alltoall_time(nb * per_gpu / k, links)
                         for nb, k in _alltoall_traffic(model)) if ep else 0.0
        return {"compute_s": cost.compute, "comm_total_s": total, "comm_exposed_s": cost.comm,
                "iteration_s": cost.total, "tier": tier_name(shape.tier)}

    # ------------------------------------------------------------------ packing

    def packing(self, jobs: Sequence[JobSpec], gpu_type: str) -> PackingResult:
        """As ``PerfModel.packing``, with utilisation from this model's compute profile."""
        gpu = self.cluster.gpu_types[self.cluster.type_id(gpu_type)]
        return pack([packed_job(j, gpu, self.table) for j in jobs], gpu, self.contention, self.utilisation)

    def describe(self) -> dict:
        return {"perf_model": type(self).__name__, "bucket_mb": self.bucket_mb, "overlap": self.overlap,
                "algorithm": self.algorithm, "profile": self.profile_path}


def _alltoall_traffic(model: ModelInfo) -> list[tuple[float, int]]:
    """(bytes per sample, number of all-to-alls) of each expert layer, per training step.

    From the zoo's per-operator traits when it has them; otherwise each expert
    layer dispatches and combines its input activations forward and backward
    (4 all-to-alls of the layer's activation size, when the zoo gives one).
    """
    try:
        from dlsched.workload.zoo_large import layer_traits

        traits = layer_traits(model)
    except ImportError:  # the large-model zoo is optional here
        traits = None
    if traits and len(traits) == len(model.layers):
        return [(t.a2a_bytes, t.a2a_collectives) for t in traits if t.a2a_bytes > 0 and t.a2a_collectives > 0]
    return [(4 * l.activation_bytes, 4) for l in model.layers
            if gradsync.is_expert(l.name) and l.activation_bytes > 0]


# ---------------------------------------------------------------------- tier probes


def tier_placements(cluster: Cluster, n_gpus: int, gpu_type: str | None = None) -> dict[str, list[int]]:
    """Representative GPU ids of ``n_gpus`` at each tier the cluster has (empty cluster).

    machine: the first GPUs of one node (if a node is big enough);
    rack: spread one node at a time over one rack's nodes (as Dally's Fig. 1 "same rack");
    network: spread over racks first, then nodes.  Spreading as far as each tier
    allows is the tier's worst case, the one Dally's Table I reports.
    """
    c = cluster
    t = c.type_id(gpu_type) if gpu_type else int(c.gpu_type_idx[0])
    nodes = [nd for nd in c.nodes if c.node_type[nd.id] == t]
    out: dict[str, list[int]] = {}
    big = [nd for nd in nodes if nd.num_gpus >= n_gpus]
    if big:
        out["machine"] = list(big[0].gpus)[:n_gpus]
    by_rack: dict[int, list] = {}
    for nd in nodes:
        by_rack.setdefault(nd.rack, []).append(nd)
    racks = sorted(by_rack.values(), key=len, reverse=True)

    def spread(node_lists: list[list]) -> list[int] | None:
        # round-robin over the given node lists' GPUs: node by node, then GPU by GPU
        order = []
        slots = [[list(nd.gpus) for nd in lst] for lst in node_lists]
        depth = 0
        while len(order) < n_gpus:
            added = False
            for r in range(max(len(s) for s in slots)):
                for s in slots:
                    if r < len(s) and depth < len(s[r]):
                        order.append(s[r][depth])
                        added = True
                        if len(order) == n_gpus:
                            return order
            if not added:
                return None
            depth += 1
        return order

    if n_gpus > 1 and racks and len(racks[0]) > 1:
        got = spread([racks[0]])
        if got is not None and c.tier(got) == Tier.RACK:
            out["rack"] = got
    if n_gpus > 1 and len(racks) > 1:
        got = spread(racks)
        if got is not None:
            out["network"] = got
    return out


def network_sensitivity(model: str | ModelInfo, n_gpus: int, cluster: Cluster, batch: int | None = None,
                        perf: PerfModel | None = None, gpu_type: str | None = None) -> dict[str, float]:
    """Slowdown of ``n_gpus`` data-parallel workers at each tier, relative to the machine tier.

    ``{"machine": 1.0, "rack": x, "network": y}`` (tiers the cluster cannot
    form are left out; without a machine-tier placement the tightest one
    present is the reference).  ``batch`` is the global batch (default: the
    model's per-GPU default x ``n_gpus``).  ``perf`` may be any perf model
    (e.g. one with a tier profile, so a policy sees the world the engine
    prices); a ``ModelInfo`` outside the zoo needs a ``PlacementPerfModel``.
    """
    perf = perf or PlacementPerfModel(cluster)
    places = tier_placements(cluster, n_gpus, gpu_type)
    if isinstance(perf, PlacementPerfModel):
        if isinstance(model, ModelInfo):
            # priced as given, under its own key so a zoo model of the same name is not shadowed
            info, name = model, f"{model.name}@given-{hash(model):x}"
            perf._models[(name, None)] = model
        else:
            info, name = get_model(model), model
        batch = batch or info.default_batch * n_gpus
        times = {tier: perf.price_shape(name, None, batch, perf._index.shape(g)).total
                 for tier, g in places.items()}
    else:
        if isinstance(model, ModelInfo):
            raise TypeError("pricing a model outside the zoo needs a PlacementPerfModel")
        info = get_model(model)
        job = JobSpec("sensitivity", 0.0, model, n_gpus, batch_size=batch or info.default_batch * n_gpus,
                      total_iterations=1)
        times = {tier: perf.price(job, g).total for tier, g in places.items()}
    if not times:
        return {}
    ref = next(times[t] for t in TIERS if t in times)
    return {t: times[t] / ref for t in TIERS if t in times}
