"""Stage determination of a Cell (Crius section 4.2, Figure 7).

Allocated GPUs are first mapped to operators in proportion to their FLOPs, so
every operator would take the same time on its (fractional) GPUs; any
clustering of consecutive operators into stages is then balanced as long as
each stage gets the GPUs its operators were mapped.  Crius clusters at the
smallest inter-operator communication (the activation crossing a cut) and
lands on stage GPU counts near powers of two, the usual cluster topology.

Here each stage's GPU count is fixed first (the allocation split as evenly as
possible, powers of two when the allocation and stage count are), and cut k
is the operator boundary with the smallest activation among those whose
cumulative mapped GPUs lie within ``tolerance`` of the stage boundary's GPUs;
``tolerance`` is a fraction of the smaller neighbouring stage (0.25, Alpa's
default stage imbalance tolerance in its benchmark suites).  ``balanced`` is
the same without the communication criterion: the boundary nearest to the
target; the full-space search tries both.
"""

from __future__ import annotations

from functools import lru_cache

from dlsched.perf.parallel.plan import StageSplit
from dlsched.perf.parallel.profile import ModelProfile, profile
from dlsched.workload.models import ModelInfo

DEFAULT_TOLERANCE = 0.25


def stage_gpus(n_gpus: int, n_stages: int) -> tuple[int, ...]:
    """GPUs per stage: as even as possible, larger stages first."""
    if not 1 <= n_stages <= n_gpus:
        raise ValueError(f"cannot split {n_gpus} GPUs into {n_stages} stages")
    base, extra = divmod(n_gpus, n_stages)
    return tuple(base + (1 if i < extra else 0) for i in range(n_stages))


def stage_counts(n_gpus: int, n_layers: int) -> tuple[int, ...]:
    """Pipeline depths a Cell may take: 1, 2, 4, ... up to the GPUs (Crius 6.1: log N_G choices)."""
    out, s = [], 1
    while s <= min(n_gpus, n_layers):
        out.append(s)
        s *= 2
    return tuple(out)


@lru_cache(maxsize=4096)  # the search asks again for every batch and GPU type; a profile hashes by identity
def _split(prof: ModelProfile, n_gpus: int, n_stages: int, tolerance: float, by_comm: bool) -> StageSplit:
    L = prof.n_layers
    if n_stages > L:
        raise ValueError(f"{prof.name} has {L} operators, fewer than {n_stages} stages")
    gpus = stage_gpus(n_gpus, n_stages)
    # plain Python over the profile's lists (a model has tens of operators): the same doubles and
    # the same first-minimum choices as numpy's argmin and lexsort, without their per-call cost
    total = prof.total_flops
    mapped = [f / total * n_gpus for f in prof.lists.flops]  # cumulative mapped GPUs at each boundary
    act_out = prof.lists.act_out
    cuts = [0]
    target = 0.0
    for k in range(1, n_stages):
        target += gpus[k - 1]
        lo, hi = cuts[-1] + 1, L - (n_stages - k)  # leave an operator for every later stage
        dist = {i: abs(mapped[i] - target) for i in range(lo, hi + 1)}
        choice = min(dist, key=dist.__getitem__)
        if by_comm:
            slack = tolerance * min(gpus[k - 1], gpus[k])
            near = [i for i, d in dist.items() if d <= slack + 1e-9]
            if near:
                # smallest activation crossing the cut; ties go to the closest to the target
                choice = min(near, key=lambda i: (act_out[i - 1], dist[i]))
        cuts.append(choice)
    cuts.append(L)
    return StageSplit(tuple(cuts), gpus)


def stage_partition(model: ModelInfo, n_gpus: int, n_stages: int,
                    tolerance: float = DEFAULT_TOLERANCE) -> StageSplit:
    """Crius's stage determination: FLOPs-proportional GPU mapping, cuts at small activations."""
    return _split(profile(model), n_gpus, n_stages, tolerance, by_comm=True)


def balanced_partition(model: ModelInfo, n_gpus: int, n_stages: int) -> StageSplit:
    """FLOPs-balanced cuts ignoring communication (an alternative the full search also tries)."""
    return _split(profile(model), n_gpus, n_stages, 0.0, by_comm=False)
