"""Network demands of a job beyond one data-parallel ring: pipeline, expert and tensor parallelism.

From a parallelism plan (``perf.parallel.plan.Plan``: stages on consecutive
ranks of the allocation, tensor-parallel ranks innermost) and the model's
per-operator profile (``perf.parallel.profile``), the bytes each pair of GPUs
exchanges per iteration, the same quantities ``perf.parallel.cost`` prices:

- **data parallel**: per stage and tensor rank, a ring all-reduce of the
  stage's dense gradient shard over the hosts of its replicas
  (``2 (h - 1) / h`` of it per hop, as ``traffic.ring_flows``);
- **pipeline**: between consecutive stages, the boundary activation forward
  and its gradient backward, ``batch x act_out`` bytes each way per
  iteration, split evenly over the receiving stage's ranks, each fed by the
  proportional rank of the sending stage;
- **expert parallel** (MoE): inside each expert-parallel group every rank
  sends ``1/ep`` of its dispatch/combine bytes to every other rank;
- **tensor parallel**, only where a tensor group spans hosts: a ring
  all-reduce of its activations over those hosts.

Only GPU pairs on different hosts are network demands (NVLink and PCIe
traffic inside a host stays with the perf model).  Demands between the same
pair of NICs are merged into one flow, so an all-to-all gives one flow per
ordered pair of NICs, not per pair of GPUs (simplification: the merged
traffic takes one ECMP path).  Simplifications of timing are the network
model's (docs/network.md): all of a job's flows advance together in one
communication phase per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dlsched.perf.parallel.cost import DEFAULT_PARAMS
from dlsched.perf.parallel.plan import Plan
from dlsched.perf.parallel.profile import profile
from dlsched.workload.models import ModelInfo

GPU = tuple[int, int]  # (host index, local GPU)


@dataclass(frozen=True, slots=True)
class Demand:
    src: GPU
    dst: GPU
    nbytes: float  # per iteration
    kind: str  # "dp", "pp", "ep" (expert all-to-all) or "tp"


def ring_demands(members: Sequence[GPU], nbytes: float, kind: str = "dp") -> list[Demand]:
    """A ring all-reduce of ``nbytes`` over the hosts of ``members``, entering and leaving each host once.

    Hosts in the order of their first member; each host's first member is its end of the ring.
    """
    ends: dict[int, GPU] = {}
    for g in members:
        ends.setdefault(g[0], g)
    k = len(ends)
    if k < 2 or nbytes <= 0:
        return []
    hop = 2.0 * (k - 1) / k * nbytes
    order = list(ends.values())
    return [Demand(order[i], order[(i + 1) % k], hop, kind) for i in range(k)]


def alltoall_demands(members: Sequence[GPU], per_rank: float, kind: str = "ep") -> list[Demand]:
    """Every member sends ``per_rank / len(members)`` to every other member (those on other hosts only)."""
    p = len(members)
    if p < 2 or per_rank <= 0:
        return []
    share = per_rank / p
    return [Demand(a, b, share, kind) for a in members for b in members if a[0] != b[0]]


def plan_demands(placement: Sequence[GPU], model: ModelInfo, batch: float, plan: Plan) -> list[Demand]:
    """Per-iteration network demands of ``model`` at global ``batch`` on ``placement`` (GPU order) under ``plan``."""
    if plan.n_gpus != len(placement):
        raise ValueError(f"plan {plan.describe()} needs {plan.n_gpus} GPUs, the placement has {len(placement)}")
    prof = profile(model)
    bpp = prof.bytes_per_param
    passes = DEFAULT_PARAMS.comm_passes  # all-to-alls run forward, in the rematerialised forward, backward
    out: list[Demand] = []
    offsets = plan.offsets()
    for s, (st, off) in enumerate(zip(plan.stages, offsets)):
        dp, tp, a, b = st.dp, st.tp, st.start, st.stop

        def rank(d: int, k: int) -> GPU:
            return placement[off + d * tp + k]

        dense = prof.total(prof.dense_params, a, b)
        for k in range(tp):
            out += ring_demands([rank(d, k) for d in range(dp)], dense / tp * bpp, "dp")
        ep = min(dp, prof.max_experts_shard) if prof.max_experts_shard else dp
        a2a = prof.total(prof.a2a_bytes, a, b)
        if ep > 1 and a2a > 0:
            per_rank = a2a * batch / (dp * tp) * passes  # mb x n_micro = batch / dp samples per replica
            for k in range(tp):
                for g in range(dp // ep):
                    out += alltoall_demands([rank(g * ep + e, k) for e in range(ep)], per_rank)
        tp_bytes = prof.total(prof.tp_bytes, a, b)
        if tp > 1 and tp_bytes > 0:
            for d in range(dp):
                out += ring_demands([rank(d, k) for k in range(tp)], tp_bytes * batch / dp, "tp")
        if s > 0:
            prev, prev_off = plan.stages[s - 1].n_gpus, offsets[s - 1]
            n = st.n_gpus
            cut = float(prof.act_out[a - 1]) * batch / n  # each receiving rank's share of the boundary
            for i in range(n):
                src, dst = placement[prev_off + i * prev // n], placement[off + i]
                if src[0] != dst[0]:
                    out += [Demand(src, dst, cut, "pp"), Demand(dst, src, cut, "pp")]
    return out


def expert_alltoall_demands(placement: Sequence[GPU], per_rank: float) -> list[Demand]:
    """A data-parallel MoE job's token all-to-alls: every GPU is an expert-parallel rank."""
    return alltoall_demands(list(placement), per_rank)
