"""Searches over a Cell's plans: full space, Crius's agile estimate, Cell-guided tuning.

Every stage's cost depends only on its own (dp, tp) choice (the receive from
the previous stage is charged to the receiver and its all-gather depends on
the receiver's tensor degree), so a plan's time is

    sum_s T_s + (B - 1) x max_s steady_s + max_s sync_s.

The exact optimum over the product of per-stage choices therefore needs no
enumeration: for every pair of thresholds (bound on the steady-state maximum,
bound on the sync maximum) each stage independently takes its cheapest choice
within both bounds; the best pair is the optimum.  This costs O((S k)^3) for
S stages of k choices instead of k^S, which is what keeps a cold full-space
search for 16 GPUs in milliseconds.  The "cost" reported for a search is what
a real system would pay: the plans it profiles (the full space for the
baseline tuner, two physical profilings for Crius's estimate, the pruned
space for Cell-guided tuning).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from dlsched.perf.parallel.cost import (DEFAULT_PARAMS, CostParams, StageCost, compute_floor, stage_cost,
                                       stage_costs)
from dlsched.perf.parallel.hardware import Hardware
from dlsched.perf.parallel.partition import balanced_partition, stage_counts, stage_partition
from dlsched.perf.parallel.plan import Plan, StageSplit
from dlsched.perf.parallel.profile import profile
from dlsched.perf.parallel.space import (Favour, degree_options, endpoint_options, half_options, offsets,
                                         space_size)
from dlsched.workload.models import ModelInfo

Options = Callable[[int, int, int], Sequence[tuple[int, int]]]  # (stage, GPUs, offset) -> (dp, tp) choices


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A plan a search found, its time and what finding it cost."""

    iter_time: float
    plan: Plan
    cost: int  # plans a real system profiles to obtain this result
    space: int  # plans in the Cell's full (dp, tp) space


@dataclass(frozen=True, slots=True)
class CellEstimate:
    """Crius's agile estimate of a Cell (section 5.1)."""

    iter_time: float
    plan: Plan  # the best assembled plan
    favours: tuple[Favour, ...]  # per stage: which profiled plan the best assembly used
    profilings: int  # physical profilings: DP-only and TP-only plans (1 if every stage has one GPU)
    assembled: int  # plans assembled and priced arithmetically: 2^Ns (fewer for 1-GPU stages)
    space: int  # plans in the Cell's full space
    # single-device profiling GPU time of the sampled plans (see _profiling_gpu_s); None when the
    # caller did not ask for it (``profile_time=False``: the scheduler's Cell cache never reads it)
    profile_gpu_s: float | None

    @property
    def cost(self) -> int:
        return self.profilings


def _stage_table(model: ModelInfo, batch: float, hw: Hardware, split: StageSplit, options: Options,
                 params: CostParams) -> list[list[tuple[tuple[int, int], StageCost]]] | None:
    """Per stage, the usable choices that fit in memory with their costs; None if a stage has none."""
    prof = profile(model)
    n_micro = 4 * split.n_stages
    cap = hw.gpu.memory_bytes
    table = []
    offset = 0
    for i, ((a, b), g) in enumerate(zip(split.ranges(), split.gpus)):
        choices = options(i, g, offset)
        costs = stage_costs(prof, hw, a, b, choices, offset, batch, n_micro,
                            params.in_flight(i, split.n_stages), params)
        row = [(choice, c) for choice, c in zip(choices, costs) if c is not None and c.memory <= cap]
        if not row:
            return None
        table.append(row)
        offset += g
    return table


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-D array without NaNs, as it computes it (sort, keep each run's first),
    without its per-call overhead and its first call's import of numpy.ma (start-up)."""
    s = np.sort(values)
    keep = np.empty(s.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _select(table, n_micro: int) -> tuple[float, list[int]]:
    """Exact best choice per stage for the pipeline formula (threshold method, see module doc)."""
    S = len(table)
    if S < _SMALL_STAGES and sum(len(row) for row in table) <= _SMALL_CHOICES:
        costs = [c for row in table for _, c in row]
        if all(math.isfinite(c.micro) and math.isfinite(c.steady) and math.isfinite(c.sync) for c in costs):
            return _select_small(table, n_micro)
    return _select_arrays(table, n_micro)


# The plan search's tables are mostly tiny (one to four stages of one to four choices), where
# numpy's per-call overhead is most of ``_select_arrays``'s cost; ``_select_small`` makes the
# same choice with the same floats in plain Python.  It must add a stage's times in the order
# numpy does: left to right below 8 terms (numpy sums 8 or more pairwise), hence the stage bound.
_SMALL_STAGES = 8
# choices over all stages: the plain scan grows with their cube, and beyond 7 the arrays win
_SMALL_CHOICES = 7


def _select_small(table, n_micro: int) -> tuple[float, list[int]]:
    """``_select_arrays`` for a table of finite costs and fewer than 8 stages, in plain Python.

    The same thresholds (sorted distinct steady and sync times), the same per-stage choice
    within them (the first cheapest), the same sums in the same order, and the first
    pair of thresholds with the least total, so the same answer to the bit.
    """
    rows = [[(c.steady, c.sync, c.micro) for _, c in row] for row in table]
    if all(len(row) == 1 for row in rows):
        total = sum(row[0][2] for row in rows)
        exact = total + (n_micro - 1) * max(row[0][0] for row in rows) + max(row[0][1] for row in rows)
        return exact, [0] * len(rows)
    tc = sorted({c for row in rows for c, _, _ in row})
    ta = sorted({a for row in rows for _, a, _ in row})
    best_total, best_choice = math.inf, None
    for ci in tc:
        # per stage, the choices within the steady-time threshold: (sync, micro, index)
        within = [[(a, t, k) for k, (c, a, t) in enumerate(row) if c <= ci] for row in rows]
        for aj in ta:
            total = 0.0
            choice = []
            for cands in within:
                bt, bk = math.inf, 0
                for a, t, k in cands:
                    if a <= aj and t < bt:
                        bt, bk = t, k
                total += bt
                choice.append(bk)
            total = total + (n_micro - 1) * ci + aj
            if best_choice is None or total < best_total:
                best_total, best_choice = total, choice
    picked = [rows[s][k] for s, k in enumerate(best_choice)]
    exact = (sum(t for _, _, t in picked) + (n_micro - 1) * max(c for c, _, _ in picked)
             + max(a for _, a, _ in picked))
    return exact, best_choice


def _select_arrays(table, n_micro: int) -> tuple[float, list[int]]:
    """Exact best choice per stage for the pipeline formula, vectorised over threshold pairs."""
    S = len(table)
    K = max(len(r) for r in table)
    T = np.full((S, K), np.inf)
    C = np.full((S, K), np.inf)
    A = np.full((S, K), np.inf)
    for s, row in enumerate(table):
        for k, (_, c) in enumerate(row):
            T[s, k], C[s, k], A[s, k] = c.micro, c.steady, c.sync
    if K == 1:
        return float(T[:, 0].sum() + (n_micro - 1) * C[:, 0].max() + A[:, 0].max()), [0] * S
    tc = _sorted_distinct(C[np.isfinite(C)])
    ta = _sorted_distinct(A[np.isfinite(A)])
    ok = (C[None, None] <= tc[:, None, None, None]) & (A[None, None] <= ta[None, :, None, None])
    Tm = np.where(ok, T[None, None], np.inf)  # (nc, na, S, K)
    best_k = Tm.argmin(axis=-1)
    total = Tm.min(axis=-1).sum(axis=-1) + (n_micro - 1) * tc[:, None] + ta[None, :]
    i, j = np.unravel_index(int(np.argmin(total)), total.shape)
    choice = [int(k) for k in best_k[i, j]]
    exact = (sum(T[s, k] for s, k in enumerate(choice)) + (n_micro - 1) * max(C[s, k] for s, k in enumerate(choice))
             + max(A[s, k] for s, k in enumerate(choice)))
    return float(exact), choice


def search_split(model: ModelInfo, batch: float, hw: Hardware, split: StageSplit, options: Options,
                 params: CostParams = DEFAULT_PARAMS) -> tuple[float, Plan] | None:
    """Best plan of ``split`` over the given per-stage choices (None if none fits)."""
    table = _stage_table(model, batch, hw, split, options, params)
    if table is None:
        return None
    t, choice = _select(table, 4 * split.n_stages)
    if not np.isfinite(t):
        return None
    return t, split.with_degrees([table[s][k][0] for s, k in enumerate(choice)])


def _all_for(hw: Hardware) -> Options:
    gpn = hw.gpus_per_node
    return lambda i, g, off: degree_options(g, gpn, off)


def cell_optimum(model: ModelInfo, batch: float, hw: Hardware, n_gpus: int, n_stages: int,
                 split: StageSplit | None = None, params: CostParams = DEFAULT_PARAMS) -> SearchResult | None:
    """The best plan inside a Cell (its stage split fixed, every (dp, tp) per stage)."""
    split = split or stage_partition(model, n_gpus, n_stages)
    found = search_split(model, batch, hw, split, _all_for(hw), params)
    if found is None:
        return None
    size = space_size(split, hw.gpus_per_node)
    return SearchResult(found[0], found[1], size, size)


def _profiling_gpu_s(model: ModelInfo, batch: float, hw: Hardware, split: StageSplit, ends,
                     params: CostParams) -> float:
    """GPU seconds Crius's single-device profiler spends on the sampled plans.

    It compiles each stage shard as the distributed plan would and times one
    micro-batch of each *distinct* operator once (repeated Transformer layers
    or residual blocks of one shape are profiled once: "eliminates redundant
    execution of the same partitions", section 8.2); communication is not run
    but interpolated from offline tables.
    """
    prof = profile(model)
    n_micro = 4 * split.n_stages
    gpn = hw.gpus_per_node
    total = 0.0
    for end in ends:
        offset = 0
        for i, ((a, b), g) in enumerate(zip(split.ranges(), split.gpus)):
            dp, tp = endpoint_options(g, gpn, offset)[end]
            seen = set()
            for op in range(a, b):
                sig = _signature(model, op)
                if sig in seen:
                    continue
                seen.add(sig)
                c = stage_cost(prof, hw, op, op + 1, dp, tp, offset, batch, n_micro, 1, params)
                if c is not None:
                    total += c.compute
            offset += g
    return total


def _signature(model: ModelInfo, op: int) -> tuple:
    layer = model.layers[op]
    return (layer.name.split(".", 1)[0], layer.params, layer.fwd_flops, layer.activation_bytes)


def estimate_cell(model: ModelInfo, batch: float, hw: Hardware, n_gpus: int, n_stages: int,
                  split: StageSplit | None = None, params: CostParams = DEFAULT_PARAMS,
                  profile_time: bool = True) -> CellEstimate | None:
    """Crius's agile estimate: per stage DP-only or TP-only, best of the 2^Ns assemblies.

    Stages whose profiled plans both run out of memory make the Cell infeasible
    (Crius drops OOM plans per stage, section 5.1).
    """
    split = split or stage_partition(model, n_gpus, n_stages)
    gpn = hw.gpus_per_node
    table = _stage_table(model, batch, hw, split, lambda i, g, off: endpoint_options(g, gpn, off), params)
    if table is None:
        return None
    t, choice = _select(table, 4 * split.n_stages)
    if not np.isfinite(t):
        return None
    degrees = [table[s][k][0] for s, k in enumerate(choice)]
    favours = tuple("tp" if tp > 1 else "dp" for dp, tp in degrees)
    two = max(split.gpus) > 1
    gpu_s = _profiling_gpu_s(model, batch, hw, split, (0, -1) if two else (0,), params) if profile_time else None
    return CellEstimate(
        iter_time=t,
        plan=split.with_degrees(degrees),
        favours=favours,
        profilings=2 if two else 1,
        assembled=math.prod(len(endpoint_options(g, gpn, o)) for g, o in zip(split.gpus, offsets(split))),
        space=space_size(split, gpn),
        profile_gpu_s=gpu_s,
    )


def tune_cell(model: ModelInfo, batch: float, hw: Hardware, n_gpus: int, n_stages: int,
              estimate: CellEstimate | None = None, split: StageSplit | None = None,
              params: CostParams = DEFAULT_PARAMS) -> SearchResult | None:
    """Cell-guided tuning (section 5.2): each stage searched only in its favoured half."""
    split = split or stage_partition(model, n_gpus, n_stages)
    estimate = estimate or estimate_cell(model, batch, hw, n_gpus, n_stages, split, params, profile_time=False)
    if estimate is None:
        return None
    favours, gpn = estimate.favours, hw.gpus_per_node
    found = search_split(model, batch, hw, split, lambda i, g, off: half_options(g, favours[i], gpn, off),
                         params)
    if found is None:  # cannot happen: the estimate's plan lies in the pruned space
        return None
    return SearchResult(found[0], found[1], space_size(split, gpn, favours), space_size(split, gpn))


def _split_fits(model: ModelInfo, batch: float, hw: Hardware, split: StageSplit, params: CostParams) -> bool:
    """Whether ``search_split`` over every (dp, tp) finds a plan: each stage has a choice that fits
    in memory at a finite cost (then the thresholds at the largest such costs admit one per stage)."""
    prof = profile(model)
    n_micro = 4 * split.n_stages
    cap = hw.gpu.memory_bytes
    gpn = hw.gpus_per_node
    offset = 0
    for i, ((a, b), g) in enumerate(zip(split.ranges(), split.gpus)):
        # widest tensor degree first: it holds the least per GPU, so a fitting stage stops early
        for dp, tp in reversed(degree_options(g, gpn, offset)):
            c = stage_cost(prof, hw, a, b, dp, tp, offset, batch, n_micro,
                           params.in_flight(i, split.n_stages), params)
            if (c is not None and c.memory <= cap and math.isfinite(c.micro) and math.isfinite(c.recv)
                    and math.isfinite(c.sync)):
                break
        else:
            return False
        offset += g
    return True


def plan_fits(model: ModelInfo, batch: float, hw: Hardware, n_gpus: int,
              params: CostParams = DEFAULT_PARAMS) -> bool:
    """Whether ``optimal_plan`` finds any plan, at a fraction of its cost.

    The same stage counts and splits, but a split stops at the first stage with no usable
    choice and each stage at its first usable one, and nothing is priced through the
    pipeline formula.  Preflight (``fit_requests``) only asks this question, mostly for
    GPU types and counts a job never runs on.
    """
    for ns in stage_counts(n_gpus, profile(model).n_layers):
        for split in {stage_partition(model, n_gpus, ns), balanced_partition(model, n_gpus, ns)}:
            if _split_fits(model, batch, hw, split, params):
                return True
    return False


_FLOOR_MARGIN = 1e-9  # relative: ``compute_floor`` is rounded a few ulps differently from the stage costs


def optimal_plan(model: ModelInfo, batch: float, hw: Hardware, n_gpus: int,
                 params: CostParams = DEFAULT_PARAMS) -> tuple[float, Plan] | None:
    """Full-space optimum ("adaptive parallelism"): every stage count, split and (dp, tp)."""
    best: tuple[float, Plan] | None = None
    prof = profile(model)
    for ns in stage_counts(n_gpus, prof.n_layers):
        splits = {stage_partition(model, n_gpus, ns), balanced_partition(model, n_gpus, ns)}
        for split in sorted(splits, key=lambda s: s.bounds):
            # A split whose computation alone is slower than the best plan so far cannot replace
            # it (the margin is far above rounding and far below the 1e-12 a win needs): most
            # deep pipelines are dropped here without pricing their stages.
            if best is not None and (compute_floor(prof, hw, split.bounds, split.gpus, batch, 4 * ns, params)
                                     * (1 - _FLOOR_MARGIN) > best[0]):
                continue
            found = search_split(model, batch, hw, split, _all_for(hw), params)
            if found is not None and (best is None or found[0] < best[0] - 1e-12):
                best = found
    return best
