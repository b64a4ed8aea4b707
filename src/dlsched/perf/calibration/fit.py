"""Fit the plan cost model to measured iteration times and data-parallel memory.

Deterministic: fixed starting point, finite differences, scipy's trust-region
least squares; no random restarts.

**Memory** (``fit_memory``, on ``dp-memory`` tables): the per-GPU memory of a
pure data-parallel replica is ``s_f x state + a_f x activations + reserve``,
where state and activations are what the cost model holds for that plan
(``cost.stage_cost``); ``s_f``, ``a_f`` per family and one ``reserve`` are a
bounded linear least squares on *relative* error (each row divided by its
measurement, so 8 GB and 30 GB replicas weigh alike).

**Iteration time** (``fit_times``, on ``iterations`` tables): the model prices
each measured placement at its optimal plan (``search.optimal_plan``, the
same search the simulator's ``CellEstimator.optimum`` runs) on the cluster's
links for that GPU type with the row's GPUs per node.  Parameters, in log
space: per GPU type g and family f the compute efficiency is the analytic
default x exp(a_f + b_g + i_gf); the intra- and inter-node bandwidths are the
spec's x exp(c + d_g + dd_gf) and x exp(c' + e_g + ee_gf) (the measured runs move
each family's tensors with a different efficiency).  Residuals are
log(predicted / measured); every parameter also gets a weak ridge residual
(``RIDGE``), so a GPU type or family with no rows (held out) takes the
shared figures (a_f, c, c') and the analytic ratios between GPU types rather
than an arbitrary value.  Rows the model prices out of memory have no time
and are left out of the time fit (counted).  The iteration time is piecewise
smooth in the parameters (the best plan switches), so the Jacobian is taken
by finite differences with a step well above rounding (``DIFF_STEP``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.perf.parallel.cost import (DEFAULT_PARAMS, CostParams, compute_efficiency, plan_costs, plan_time,
                                        scaled_links)
from dlsched.perf.parallel.hardware import Hardware, TierLinks
from dlsched.perf.parallel.plan import Plan, StagePlan
from dlsched.perf.parallel.profile import profile
from dlsched.perf.parallel.search import optimal_plan
from dlsched.workload.models import ModelInfo, get_model
from dlsched.workload.readers.profiles import IterationRow, MemoryRow

RIDGE = 0.05  # weight of the pull of each log-parameter toward 0 (the analytic default / shared figure)
BOUND = 3.0  # log-parameters stay within exp(+-3) of the default
DIFF_STEP = 1e-2  # relative finite-difference step on the log-parameters
K0 = 4.0  # samples: the small-batch overhead the fit starts from (and held-out groups fall back to)
LOSS, F_SCALE = "soft_l1", 0.1  # robust: a few measured rows contradict their neighbours (docs)
# Each operator's working set is written once and read once in the forward, the recomputed forward
# and the backward's two passes (``CostParams.forward_passes`` = 4): a physical count, not fitted.
ACTIVATION_PASSES = 2 * DEFAULT_PARAMS.forward_passes
MAX_NFEV = 100
MARGIN_PERCENTILE = 90  # of the DP-memory fit's over-statement: the slack a new run's plan is given
TOL = 1e-4  # relative change of cost or parameters at which a group stops (deterministic)
DEFAULT_CLUSTER = "crius-sim"  # whose link figures the fitted scales multiply


@dataclass(frozen=True, slots=True)
class Skipped:
    line: int
    reason: str


@dataclass(frozen=True)
class MeasuredRun:
    """A measured iteration row resolved to a zoo model and the cluster's links for its placement."""

    row: IterationRow
    model: ModelInfo
    links: TierLinks  # the cluster spec's figures for the row's GPU type, at the row's GPUs per node

    @property
    def family(self) -> str:
        return self.model.family

    @property
    def gpu(self) -> str:
        return self.row.gpu_type


def resolve_runs(rows: Sequence[IterationRow], cluster: Cluster) -> tuple[list[MeasuredRun], list[Skipped]]:
    """Rows the model can price (zoo model known, GPU type in the cluster), and why the rest are not."""
    runs, skipped = [], []
    base: dict[str, TierLinks] = {}
    for r in rows:
        try:
            model = get_model(r.model, r.param or None)
        except InputError:
            skipped.append(Skipped(r.line, f"model {r.model} {r.param} is not in the zoo"))
            continue
        if r.gpu_type not in base:
            try:
                base[r.gpu_type] = TierLinks.from_cluster(cluster, r.gpu_type)
            except InputError:
                skipped.append(Skipped(r.line, f"cluster {cluster.name} has no {r.gpu_type} nodes"))
                continue
        b = base[r.gpu_type]
        runs.append(MeasuredRun(r, model, TierLinks(b.intra, b.rack, b.network, r.gpus_per_node, b.nodes_per_rack)))
    return runs, skipped


def price_run(run: MeasuredRun, params: CostParams) -> float | None:
    """Seconds per iteration of the run's optimal plan under ``params`` (None: out of memory)."""
    hw = Hardware.of(run.gpu, scaled_links(run.links, run.gpu, params, run.family))
    found = optimal_plan(run.model, run.row.batch, hw, run.row.gpus, params)
    return None if found is None else found[0]


def best_plan(run: MeasuredRun, params: CostParams) -> tuple[float, Plan] | None:
    hw = Hardware.of(run.gpu, scaled_links(run.links, run.gpu, params, run.family))
    return optimal_plan(run.model, run.row.batch, hw, run.row.gpus, params)


# ----------------------------------------------------------------------------- memory


@dataclass(frozen=True)
class MemoryFit:
    scales: dict[str, tuple[float, float]]  # family -> (state, activation)
    reserved_bytes: float
    rows: int
    median_error: float  # relative, in-sample
    skipped: list[Skipped] = field(default_factory=list)
    # family -> p90 of (predicted / measured - 1) on its rows, and "" -> over every row: how far
    # the fitted memory model over-states a replica's memory (``fit_headroom``'s margin)
    over: dict[str, float] = field(default_factory=dict)

    def margin(self, family: str) -> float:
        """Relative over-statement to leave as slack for ``family`` (the pooled figure without rows)."""
        return max(0.0, self.over.get(family, self.over.get("", 0.0)))


def _dp_parts(model: ModelInfo, batch: int, gpus: int, gpu_type: str) -> tuple[float, float] | None:
    """(state bytes, activation bytes) per GPU of a data-parallel replica in the cost model."""
    links = TierLinks.uniform(gpus, 100.0, 100.0)  # memory does not depend on the links
    hw = Hardware.of(gpu_type, links)
    plan = Plan((StagePlan(0, profile(model).n_layers, gpus, 1),))
    parts = []
    for s_state, s_act in ((1.0, 0.0), (0.0, 1.0)):
        p = replace(DEFAULT_PARAMS, memory_scale=((model.family, s_state, s_act),), reserved_bytes=0.0)
        costs = plan_costs(model, batch, plan, hw, p)
        if costs is None:
            return None
        parts.append(costs[0].memory)
    return parts[0], parts[1]


def fit_memory(rows: Sequence[MemoryRow]) -> MemoryFit:
    """Per-family state and activation scales and one reserve, from measured DP replica memory."""
    from scipy.optimize import lsq_linear

    data, skipped = [], []
    for r in rows:
        if not r.bytes_per_gpu:
            continue  # an oom row (or a 0 entry) has no figure to fit
        try:
            model = get_model(r.model, r.param)
        except InputError:
            skipped.append(Skipped(r.line, f"model {r.model} {r.param} is not in the zoo"))
            continue
        parts = _dp_parts(model, r.batch, r.gpus, "A100-40G")
        if parts is None:
            skipped.append(Skipped(r.line, f"batch {r.batch} gives less than one sample per GPU"))
            continue
        data.append((model.family, parts[0], parts[1], r.bytes_per_gpu))
    if not data:
        return MemoryFit({}, DEFAULT_PARAMS.reserved_bytes, 0, math.nan, skipped)
    fams = sorted({d[0] for d in data})
    A = np.zeros((len(data), 2 * len(fams) + 1))
    y = np.ones(len(data))
    for k, (fam, st, act, meas) in enumerate(data):
        j = fams.index(fam)
        A[k, 2 * j] = st / meas
        A[k, 2 * j + 1] = act / meas
        A[k, -1] = 1e9 / meas  # reserve in GB, so the columns are of similar size
    lo = [0.05] * (2 * len(fams)) + [0.0]
    hi = [20.0] * (2 * len(fams)) + [8.0]
    sol = lsq_linear(A, y, bounds=(lo, hi), method="bvls")
    x = sol.x
    rel = A @ x - 1.0
    scales = {f: (float(x[2 * j]), float(x[2 * j + 1])) for j, f in enumerate(fams)}
    fam_of = np.array([d[0] for d in data])
    over = {f: float(np.percentile(rel[fam_of == f], MARGIN_PERCENTILE)) for f in fams}
    over[""] = float(np.percentile(rel, MARGIN_PERCENTILE))
    return MemoryFit(scales, float(x[-1] * 1e9), len(data), float(np.median(np.abs(rel))), skipped, over)


# ----------------------------------------------------------------------------- iteration times


@dataclass(frozen=True)
class TimeFit:
    efficiency: dict[tuple[str, str], float]
    batch_overhead: dict[tuple[str, str], float]  # (GPU type, family) -> samples (``CostParams.batch_overhead``)
    links: dict[tuple[str, str], tuple[float, float]]  # (GPU type, family) -> (intra, inter) scales
    rows: int  # rows fitted
    out_of_memory: int  # measured runs the (memory-calibrated) model cannot fit: left out of the fit
    evaluations: int


def _base_efficiency(gpu: str, model: ModelInfo, base: CostParams) -> float:
    from dlsched.cluster.gpus import gpu_type

    return compute_efficiency(gpu_type(gpu), model.family, profile(model).bytes_per_param, base)


class _Pricer:
    """Prices runs at given log-parameters: the full plan search (memoised), or one fixed plan.

    Why the fixed plan: the model's time is the minimum over plans, whose derivative is the
    derivative of the best plan's time (the envelope theorem, away from ties), so the Jacobian
    prices only the plan the search found at the current point, about 20x cheaper than a search.
    """

    def __init__(self, runs: Sequence[MeasuredRun], base: CostParams):
        self.runs, self.base = list(runs), base
        self.eff0 = [_base_efficiency(r.gpu, r.model, base) for r in self.runs]
        self.memo: dict[tuple, tuple[float, Plan] | None] = {}
        self.evaluations = 0

    def params_for(self, k: int, log_eff: float, log_in: float, log_out: float, log_k: float) -> CostParams:
        r = self.runs[k]
        return replace(self.base, family_efficiency=((r.gpu, r.family, self.eff0[k] * math.exp(log_eff)),),
                       link_scale=((r.gpu, r.family, math.exp(log_in), math.exp(log_out)),),
                       batch_overhead=((r.gpu, r.family, K0 * math.exp(log_k)),))

    def best(self, k: int, *values: float) -> tuple[float, Plan] | None:
        key = (k, *values)
        hit = self.memo.get(key, self)
        if hit is self:
            self.evaluations += 1
            hit = self.memo[key] = best_plan(self.runs[k], self.params_for(k, *values))
        return hit

    def price(self, k: int, *values: float) -> float | None:
        found = self.best(k, *values)
        return None if found is None else found[0]

    def price_plan(self, k: int, plan: Plan, *values: float) -> float | None:
        r = self.runs[k]
        params = self.params_for(k, *values)
        hw = Hardware.of(r.gpu, scaled_links(r.links, r.gpu, params, r.family))
        return plan_time(r.model, r.row.batch, plan, hw, params)


def fit_times(runs: Sequence[MeasuredRun], base: CostParams = DEFAULT_PARAMS,
              reference: Sequence[MeasuredRun] = ()) -> TimeFit:
    """Efficiency, link scales and small-batch overhead per (GPU type, family), fitted to measured times.

    ``reference`` lists further runs whose GPU types and families need figures (e.g. a held-out
    group); only their names and models are read, never their times.  A pair without fitted
    rows takes the mean log-correction of its family on the other GPU types (or, if the family
    has none, of the GPU type's other families): see the module notes.
    """
    every = [*runs, *reference]
    gpus = sorted({r.gpu for r in every})
    families = sorted({r.family for r in every})
    models = {r.family: r.model for r in every}
    ok = [r for r in runs if r.row.iter_time_s is not None]
    pricer = _Pricer(ok, base)
    groups: dict[tuple[str, str], list[int]] = {}
    for k, r in enumerate(ok):
        groups.setdefault((r.gpu, r.family), []).append(k)
    fitted: dict[tuple[str, str], np.ndarray] = {}
    rows = oom = 0
    for key in sorted(groups):
        x, n_fit = _fit_group(pricer, groups[key])
        rows += n_fit
        oom += len(groups[key]) - n_fit
        if n_fit:
            fitted[key] = x
    eff, links, over = {}, {}, {}
    for g in gpus:
        for f in families:
            x = fitted.get((g, f))
            if x is None:
                x = _fallback(fitted, g, f)
            eff[(g, f)] = _base_efficiency(g, models[f], base) * math.exp(x[0])
            links[(g, f)] = (math.exp(x[1]), math.exp(x[2]))
            over[(g, f)] = K0 * math.exp(x[3])
    return TimeFit(eff, over, links, rows, oom, pricer.evaluations)


def _fallback(fitted: dict[tuple[str, str], np.ndarray], gpu: str, family: str) -> np.ndarray:
    """Log-parameters of a (GPU type, family) with no rows: the mean over the family's fitted GPU types,
    else over the GPU type's fitted families, else the analytic defaults."""
    same_family = [x for (g, f), x in fitted.items() if f == family]
    if same_family:
        return np.mean(same_family, axis=0)
    same_gpu = [x for (g, f), x in fitted.items() if g == gpu]
    return np.mean(same_gpu, axis=0) if same_gpu else np.zeros(N_LOG_PARAMS)


N_LOG_PARAMS = 4  # log efficiency factor, log intra scale, log inter scale, log(small-batch overhead / K0)


def _fit_group(pricer: _Pricer, members: list[int]) -> tuple[np.ndarray, int]:
    """Least squares on log time for one (GPU type, family); returns its log-parameters and rows fitted."""
    from scipy.optimize import least_squares

    zero = np.zeros(N_LOG_PARAMS)
    # rows the memory model already refuses carry no time information for these parameters
    fit = [k for k in members if pricer.price(k, *zero) is not None]
    if not fit:
        return zero, 0
    logm = np.array([math.log(pricer.runs[k].row.iter_time_s) for k in fit])
    ridge = math.sqrt(RIDGE)

    def residuals(x: np.ndarray) -> np.ndarray:
        out = np.empty(len(fit) + N_LOG_PARAMS)
        for j, k in enumerate(fit):
            t = pricer.price(k, *x)
            # memory does not depend on these parameters, so a fitted row stays priced; a large
            # finite residual keeps the optimiser well-defined regardless
            out[j] = 5.0 if t is None else math.log(t) - logm[j]
        out[len(fit):] = ridge * x
        return out

    def jacobian(x: np.ndarray) -> np.ndarray:
        J = np.zeros((len(fit) + N_LOG_PARAMS, N_LOG_PARAMS))
        for j, k in enumerate(fit):
            found = pricer.best(k, *x)
            if found is None:
                continue
            t0, plan = found
            for c in range(N_LOG_PARAMS):
                step = x.copy()
                step[c] += DIFF_STEP
                t = pricer.price_plan(k, plan, *step)
                J[j, c] = 0.0 if t is None else (math.log(t) - math.log(t0)) / DIFF_STEP
        J[len(fit):] = ridge * np.eye(N_LOG_PARAMS)
        return J

    sol = least_squares(residuals, zero, jac=jacobian, bounds=(-BOUND, BOUND), method="trf",
                        xtol=TOL, ftol=TOL, max_nfev=MAX_NFEV, loss=LOSS, f_scale=F_SCALE)
    return sol.x, len(fit)


# ----------------------------------------------------------------------------- memory headroom


def fit_headroom(runs: Sequence[MeasuredRun], base: CostParams,
                 memory: MemoryFit | None = None) -> dict[str, tuple[float, float]]:
    """Per family, the memory scales of ``base`` shrunk so that every measured run fits, with a margin.

    The DP-replica fit (``fit_memory``) sets how memory grows with state and activations; a
    measured run is proof that *some* plan fits, so where the fitted scales still call one out
    of memory, the family's scales are multiplied by the largest factor <= 1 under which every
    measured run of the family fits (bisection; measured-oom rows are not used, they only score).
    That leaves the tightest measured run with no slack, and a run the fit has not seen (another
    model size, another GPU type) is predicted no better than the memory model predicts the DP
    replicas: so the factor is further divided by 1 + the DP fit's p90 over-statement for the
    family (``MemoryFit.margin``): a plan is refused only when it overflows by more than the
    memory model's own error.  The price: more measured-OOM runs are called runnable.
    """
    from dlsched.perf.parallel.search import plan_fits

    scales = {f: base.memory_scales(f) for f in {r.family for r in runs}}
    out = {}
    for fam in sorted(scales):
        s_state, s_act = scales[fam]

        def fits(run: MeasuredRun, kappa: float) -> bool:
            p = replace(base, memory_scale=((fam, s_state * kappa, s_act * kappa),))
            hw = Hardware.of(run.gpu, run.links)  # memory does not depend on the links
            return plan_fits(run.model, run.row.batch, hw, run.row.gpus, p)

        kappa = 1.0
        for run in runs:
            if run.family != fam or run.row.oom or fits(run, kappa):
                continue
            lo, hi = 0.0, kappa  # fits at lo (no state, no activations: only the reserve), not at hi
            if not fits(run, 1e-6):
                continue  # the reserve alone overflows: no scale can help, counted by validation
            for _ in range(20):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if fits(run, mid) else (lo, mid)
            kappa = lo
        kappa /= 1.0 + (memory.margin(fam) if memory is not None else 0.0)
        out[fam] = (s_state * kappa, s_act * kappa)
    return out
