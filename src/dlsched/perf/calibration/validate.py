"""Score a calibration on rows it never saw: ``dlsched perf validate``.

Holdouts (``--holdout``): ``size`` fits on every (family, size) of the
iteration table but one and prices the one left out, in turn; ``gpu`` leaves
out a GPU type; ``job`` leaves out a model family of the iteration table and,
for packing and spreading, a Gavel job type; ``none`` scores in-sample only.
Each fold refits everything from scratch on the remaining rows (the DP-memory
rows of a held-out size or family are left out too), so no held-out
measurement reaches the parameters that price it.  In-sample figures (one fit
on every row, scored on the same rows) are reported beside the held-out ones.

Scores: relative error |predicted / measured - 1| of iteration time, median
and p90, by GPU type and family; out-of-memory agreement both ways; plan
sensitivity (data parallelism alone over the best plan), ours on the scored
placements beside the Crius authors' own estimates (``plans`` table) on the
same placements; packed / isolated speed against Gavel's co-located table;
spread / consolidated speed against Gavel's unconsolidated table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.perf.calibration import fit as F
from dlsched.perf.calibration import packing as PK
from dlsched.perf.calibration.calibrate import ProfileSet, fit_all, load_profiles
from dlsched.perf.parallel.cost import CostParams, plan_time, scaled_links
from dlsched.perf.parallel.hardware import Hardware
from dlsched.perf.parallel.plan import Plan, StagePlan
from dlsched.perf.parallel.profile import profile

HOLDOUTS = ("size", "gpu", "job", "none")

# goals of the issue, printed beside the figures (never used by a fit)
GOALS = {"size": (0.10, 0.30), "gpu": (0.20, None)}
PLAN_GOAL = (0.05, 0.15)
PACKING_GOAL = 0.10


@dataclass(frozen=True, slots=True)
class ScoredRun:
    run: F.MeasuredRun
    predicted: float | None  # None: priced out of memory
    dp_ratio: float | None  # data-parallel-only time / best plan time (inf: DP does not fit)
    cell: float | None = None  # Crius's agile estimate: best estimated Cell over depths (None: none feasible)


@dataclass
class Report:
    holdout: str
    held_out: list[ScoredRun]
    in_sample: list[ScoredRun]
    folds: int
    authors_dp: dict[tuple, float]  # placement -> the authors' DP-only / best estimate
    authors_best: dict[tuple, float] = field(default_factory=dict)  # placement -> their best estimate (s)
    packing_held: np.ndarray | None = None  # relative errors
    packing_in: np.ndarray | None = None
    packing_rows: int = 0
    spread_held: np.ndarray | None = None
    spread_in: np.ndarray | None = None
    skipped: list[F.Skipped] = field(default_factory=list)


def _key(run: F.MeasuredRun) -> tuple:
    r = run.row
    return (r.model, r.param, r.batch, r.gpu_type, r.nodes, r.gpus_per_node)


def _group_of(holdout: str) -> Callable[[F.MeasuredRun], str]:
    return {"size": lambda r: f"{r.row.model} {r.row.param}", "gpu": lambda r: r.gpu,
            "job": lambda r: r.family}[holdout]


def _dp_ratio(run: F.MeasuredRun, params: CostParams, best: float) -> float:
    hw = Hardware.of(run.gpu, scaled_links(run.links, run.gpu, params, run.family))
    plan = Plan((StagePlan(0, profile(run.model).n_layers, run.row.gpus, 1),))
    t = plan_time(run.model, run.row.batch, plan, hw, params)
    return math.inf if t is None else t / best


def _best_cell(run: F.MeasuredRun, params: CostParams) -> float | None:
    """The best of Crius's Cell estimates (DP-only / TP-only per stage) over pipeline depths."""
    from dlsched.perf.parallel.partition import stage_counts
    from dlsched.perf.parallel.search import estimate_cell

    hw = Hardware.of(run.gpu, scaled_links(run.links, run.gpu, params, run.family))
    found = [e.iter_time for ns in stage_counts(run.row.gpus, profile(run.model).n_layers)
             if (e := estimate_cell(run.model, run.row.batch, hw, run.row.gpus, ns, params=params,
                                    profile_time=False)) is not None]
    return min(found) if found else None


def _score(runs: Sequence[F.MeasuredRun], params: CostParams) -> list[ScoredRun]:
    out = []
    for r in runs:
        found = F.best_plan(r, params)
        if found is None:
            out.append(ScoredRun(r, None, None, _best_cell(r, params)))
        else:
            out.append(ScoredRun(r, found[0], _dp_ratio(r, params, found[0]), _best_cell(r, params)))
    return out


def authors_best(ps: ProfileSet) -> dict[tuple, float]:
    """Per placement, the authors' best estimated plan (what their estimator would pick)."""
    best: dict[tuple, float] = {}
    for p in ps.rows("plans"):
        if p.gpus == p.nodes * p.gpus_per_node:
            k = (p.model, p.param, p.batch, p.gpu_type, p.nodes, p.gpus_per_node)
            best[k] = min(best.get(k, math.inf), p.iter_time_s)
    return {k: v for k, v in best.items() if math.isfinite(v)}


def authors_dp_ratios(ps: ProfileSet) -> dict[tuple, float]:
    """Per placement of the authors' plan estimates: best DP-only estimate over best estimate."""
    best: dict[tuple, float] = {}
    dp: dict[tuple, float] = {}
    for p in ps.rows("plans"):
        if p.gpus != p.nodes * p.gpus_per_node:
            continue  # a plan for another GPU count than the placement (see the reader)
        k = (p.model, p.param, p.batch, p.gpu_type, p.nodes, p.gpus_per_node)
        best[k] = min(best.get(k, math.inf), p.iter_time_s)
        if p.dp_only:
            dp[k] = min(dp.get(k, math.inf), p.iter_time_s)
    return {k: dp[k] / b for k, b in best.items() if k in dp and math.isfinite(b)}


def validate(paths: Sequence[str], holdout: str = "size", cluster_name: str = F.DEFAULT_CLUSTER,
             progress: Callable[[str], None] | None = None) -> Report:
    if holdout not in HOLDOUTS:
        raise InputError(f"unknown holdout {holdout!r}; choose one of {', '.join(HOLDOUTS)}", field="--holdout")
    ps = load_profiles(paths)
    cluster = Cluster.load(cluster_name)
    runs, skipped = F.resolve_runs(ps.rows("iterations"), cluster)
    pairs = PK.resolve_pairs(ps.rows("colocated"), ps.isolated)[0] if ps.isolated is not None else []
    spread = PK.resolve_spread(ps.rows("unconsolidated"), ps.isolated) if ps.isolated is not None else []
    mem_rows = ps.rows("dp-memory")

    whole = fit_all(ps, cluster, runs=runs, memory_rows=mem_rows, pairs=pairs, spread_rows=spread)
    in_sample = _score(runs, whole.params.cost_params())
    report = Report(holdout, [], in_sample, 0, authors_dp_ratios(ps), authors_best(ps), skipped=skipped)
    if pairs:
        report.packing_in = _packing_error(pairs, whole.params.contention, whole.params.utilisation)
        report.packing_rows = len(pairs)
    if spread and whole.params.spread_keep is not None:
        report.spread_in = _spread_error(spread, whole.params.spread_keep)
    if holdout == "none":
        report.held_out = in_sample
        return report

    group = _group_of(holdout)
    names = sorted({group(r) for r in runs})
    for name in names:
        if progress:
            progress(f"fold {name}")
        test = [r for r in runs if group(r) == name]
        train = [r for r in runs if group(r) != name]
        if holdout == "size":
            mem = [m for m in mem_rows if f"{m.model} {m.param}" != name]
        elif holdout == "job":
            fam = test[0].family
            mem = [m for m in mem_rows if _family(m.model) != fam]
        else:
            mem = mem_rows
        fitted = fit_all(ps, cluster, runs=train, reference=test, memory_rows=mem, pairs=[], spread_rows=[])
        report.held_out.extend(_score(test, fitted.params.cost_params()))
        report.folds += 1
    if holdout == "job":
        if pairs:
            errs = []
            for jt in sorted({q.job_type for q in pairs}):
                train = [q for q in pairs if jt not in (q.job_type, q.other_job_type)]
                test = [q for q in pairs if q.job_type == jt]
                f = PK.fit_packing(train)
                errs.append(_packing_error(test, f.contention, f.utilisation))
            report.packing_held = np.concatenate(errs)
        if spread:
            errs = []
            for jt in sorted({s.job_type for s in spread}):
                keep = PK.fit_spread([s for s in spread if s.job_type != jt])
                if keep is not None:
                    errs.append(_spread_error([s for s in spread if s.job_type == jt], keep))
            report.spread_held = np.concatenate(errs) if errs else None
    return report


def _family(model: str) -> str:
    from dlsched.workload.models import get_model

    try:
        return get_model(model).family
    except InputError:
        # sized families are registered under "<family>-<size>"; the family name is enough here
        return {"bert": "transformer", "gpt": "transformer", "moe": "moe", "wide_resnet": "cnn"}.get(model, model)


def _packing_error(pairs, contention, utilisation) -> np.ndarray:
    pred = PK.predict(pairs, contention, utilisation)
    return np.abs(pred / np.array([q.measured for q in pairs]) - 1.0)


def _spread_error(rows, keep) -> np.ndarray:
    return np.abs(PK.predict_spread(rows, keep) / np.array([r.measured for r in rows]) - 1.0)


def write_rows(rep: Report, path) -> int:
    """One CSV row per scored run: measured, held-out and in-sample prices (``perf validate --rows``)."""
    import csv

    inside = {id(s.run): s for s in rep.in_sample}  # the folds score the same run objects
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("line", "model", "param", "batch_size", "gpu_type", "nodes", "gpus_per_node", "measured_s",
                    "held_out_s", "in_sample_s", "held_out_dp_over_best", "authors_dp_over_best"))
        for s in sorted(rep.held_out, key=lambda s: s.run.row.line):
            r = s.run.row
            ins = inside.get(id(s.run))

            def fmt(v):
                return "" if v is None else ("inf" if not math.isfinite(v) else f"{v:.6f}")
            w.writerow((r.line, r.model, r.param, r.batch, r.gpu_type, r.nodes, r.gpus_per_node,
                        "oom" if r.oom else fmt(r.iter_time_s), fmt(s.predicted) if s.predicted else "oom",
                        (fmt(ins.predicted) if ins.predicted else "oom") if ins else "",
                        fmt(s.dp_ratio), fmt(rep.authors_dp.get(_key(s.run)))))
    return len(rep.held_out)


# ----------------------------------------------------------------------------- the printed report


def _errors(scored: Sequence[ScoredRun]) -> np.ndarray:
    return np.array([abs(s.predicted / s.run.row.iter_time_s - 1.0) for s in scored
                     if s.predicted is not None and not s.run.row.oom])


def _pct(v: np.ndarray, q: float) -> str:
    return f"{100 * np.percentile(v, q):.1f}%" if len(v) else "-"


def _sens(values: Sequence[float]) -> tuple[float, float] | None:
    v = [x for x in values if math.isfinite(x)]
    return (float(np.median(v)), float(np.percentile(v, 90))) if v else None


def lines(rep: Report) -> list[str]:
    out = [f"Iteration time vs measured (held out by {rep.holdout}, {rep.folds} folds; in-sample = one fit "
           "on every row)"]
    head = f"{'group':<14}{'rows':>6}  {'held-out median':>16}{'p90':>8}  {'in-sample median':>17}{'p90':>8}"
    out.append(head)

    def row(label, pick):
        h = _errors([s for s in rep.held_out if pick(s.run)])
        i = _errors([s for s in rep.in_sample if pick(s.run)])
        out.append(f"{label:<14}{len(h):>6}  {_pct(h, 50):>16}{_pct(h, 90):>8}  {_pct(i, 50):>17}{_pct(i, 90):>8}")

    for g in sorted({s.run.gpu for s in rep.held_out}):
        row(g, lambda r, g=g: r.gpu == g)
    for f in sorted({s.run.family for s in rep.held_out}):
        row(f, lambda r, f=f: r.family == f)
    row("all", lambda r: True)

    def oom(scored):
        ok = [s for s in scored if not s.run.row.oom]
        bad = [s for s in scored if s.run.row.oom]
        return (sum(s.predicted is None for s in ok), len(ok), sum(s.predicted is not None for s in bad), len(bad))
    a, b, c, d = oom(rep.held_out)
    e, f_, g_, h = oom(rep.in_sample)
    out.append(f"out of memory: measured runs priced OOM {a} of {b} held out ({e} of {f_} in-sample; goal 0); "
               f"measured OOM priced runnable {c} of {d} held out ({g_} of {h} in-sample)")
    for s in rep.skipped:
        out.append(f"  not priced: line {s.line}: {s.reason}")

    def sens(scored):
        pairs = [(s.dp_ratio, rep.authors_dp[_key(s.run)]) for s in scored
                 if s.dp_ratio is not None and not s.run.row.oom and _key(s.run) in rep.authors_dp]
        return pairs
    views = ((("in-sample", rep.in_sample),) if rep.holdout == "none"
             else (("held out", rep.held_out), ("in-sample", rep.in_sample)))
    for label, scored in views:
        pairs = sens(scored)
        both = [(o, t) for o, t in pairs if math.isfinite(o) and math.isfinite(t)]
        ours, theirs = _sens([o for o, _ in both]), _sens([t for _, t in both])
        if ours and theirs:
            dm, dp = abs(ours[0] - theirs[0]), abs(ours[1] - theirs[1])
            out.append(f"plan sensitivity (DP-only / best), {label}, {len(both)} placements: ours median "
                       f"{ours[0]:.2f} p90 {ours[1]:.2f}; authors' estimates median {theirs[0]:.2f} p90 "
                       f"{theirs[1]:.2f}; gap {dm:.2f} / {dp:.2f} (goal <= {PLAN_GOAL[0]} / {PLAN_GOAL[1]}); "
                       f"DP out of memory: ours {sum(not math.isfinite(o) for o, _ in pairs)}, authors' "
                       f"{sum(not math.isfinite(t) for _, t in pairs)} of {len(pairs)}")
    for label, scored in views:
        both = [(s.cell, rep.authors_best[_key(s.run)], s.run.row.iter_time_s) for s in scored
                if s.cell is not None and not s.run.row.oom and _key(s.run) in rep.authors_best]
        if both:
            ours = np.array([1 - abs(c / m - 1) for c, _, m in both])
            theirs = np.array([1 - abs(a / m - 1) for _, a, m in both])
            out.append(f"Cell estimation accuracy vs the measured optimum (1 - |T - T_measured| / T_measured), "
                       f"{label}, {len(both)} placements: ours average {100 * ours.mean():.1f}% worst "
                       f"{100 * ours.min():.1f}%; authors' estimates average {100 * theirs.mean():.1f}% worst "
                       f"{100 * theirs.min():.1f}% (paper: 93.4% / 90.5%)")
    if rep.packing_in is not None:
        held = (f"held out by job type median {_pct(rep.packing_held, 50)} p90 {_pct(rep.packing_held, 90)}; "
                if rep.packing_held is not None else "held out: only under --holdout job; ")
        out.append(f"packed / isolated speed vs Gavel's co-located table ({rep.packing_rows} rows): {held}"
                   f"in-sample median {_pct(rep.packing_in, 50)} p90 {_pct(rep.packing_in, 90)} "
                   f"(goal held-out median <= {100 * PACKING_GOAL:.0f}%)")
    if rep.spread_in is not None:
        held = (f"held out by job type median {_pct(rep.spread_held, 50)} p90 {_pct(rep.spread_held, 90)}; "
                if rep.spread_held is not None else "")
        out.append(f"spread / consolidated speed vs Gavel's unconsolidated table ({len(rep.spread_in)} rows): "
                   f"{held}in-sample median {_pct(rep.spread_in, 50)} p90 {_pct(rep.spread_in, 90)}")
    goal = GOALS.get(rep.holdout)
    if goal:
        out.append(f"goals ({rep.holdout} holdout): median <= {100 * goal[0]:.0f}%"
                   + (f", p90 <= {100 * goal[1]:.0f}%" if goal[1] else ""))
    h = _errors(rep.held_out)
    out.append(f"held-out median {100 * np.median(h):.1f}% p90 {100 * np.percentile(h, 90):.1f}% (rows {len(h)})"
               if len(h) else "held-out median - p90 - (rows 0)")
    return out
