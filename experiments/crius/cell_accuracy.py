"""Crius Cell estimation and Cell-guided tuning, measured against the full space.

For every Table 2 model x global batch x GPU type of the crius-sim cluster x
GPU count x pipeline depth (a Cell), compare

- the agile estimate (best of the 2^Ns assembled DP-only / TP-only plans)
  with the Cell's full-space optimum: accuracy 1 - (Te - To) / To
  (paper, Fig. 12a: 93.4% average, 90.5% worst);
- its cost with full exploration of the Cell: plans profiled, and GPU time
  (paper, Fig. 12b: 18.1x less GPU time on average, against profiling the job);
- Cell-guided tuning (each stage searched in its favoured half) with the
  Cell's optimum: accuracy 1 - (Tc - To) / To (paper, Fig. 13a: 96.2%) and
  search-space reduction (paper, Fig. 13b: 5.48x average, 10.88x at most).

Run:  python experiments/crius/cell_accuracy.py [--counts 1,2,4,8,16] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from dlsched.cluster import Cluster
from dlsched.perf.parallel import (cell_optimum, estimate_cell, plan_space, plan_time, stage_counts,
                                   stage_partition, tune_cell)
from dlsched.perf.parallel.estimator import CellEstimator
from dlsched.workload.zoo_large import table2_models

GPU_TYPES = ("A100-40G", "V100", "A40", "A10")
# Crius Table 2 global batch sizes per family.
BATCHES = {"cnn": (256, 512, 1024), "transformer": (128, 256, 512), "moe": (256, 512, 1024)}
PAPER = {"est_avg": 93.4, "est_worst": 90.5, "est_cost": 18.1, "tune_acc": 96.2, "tune_red": 5.48,
         "tune_red_max": 10.88}


def _accuracy(t: float, ref: float) -> float:
    return 100.0 * (1.0 - (t - ref) / ref)


def run(counts: tuple[int, ...], quick: bool) -> dict:
    cluster = Cluster.load("crius-sim")
    est = CellEstimator(cluster)
    rows = []
    missed = 0
    job_rows = []
    t0 = time.perf_counter()
    for model in table2_models():
        batches = BATCHES[model.family][1:2] if quick else BATCHES[model.family]
        for batch in batches:
            for gpu in GPU_TYPES:
                hw = est.hardware(gpu)
                for n in counts:
                    opt = est.optimum(model, batch, gpu, n)
                    best = est.best_cell(model, batch, gpu, n)
                    if opt is not None:
                        job_rows.append((opt.iter_time, best.iter_time if best else None))
                    for ns in stage_counts(n, len(model.layers)):
                        split = stage_partition(model, n, ns)
                        o = cell_optimum(model, batch, hw, n, ns, split)
                        if o is None:
                            continue
                        e = estimate_cell(model, batch, hw, n, ns, split)
                        if e is None:
                            missed += 1
                            continue
                        tuned = tune_cell(model, batch, hw, n, ns, e, split)
                        # Full exploration: every plan of the Cell run on its n GPUs
                        # (an OOM plan is dropped at compile time and costs nothing).
                        full_gpu_s = sum(n * t for p in plan_space(model, n, ns, split, hw.gpus_per_node)
                                         if (t := plan_time(model, batch, p, hw)) is not None)
                        rows.append(dict(
                            model=model.name, batch=batch, gpu=gpu, n=n, ns=ns,
                            est_acc=_accuracy(e.iter_time, o.iter_time),
                            tune_acc=_accuracy(tuned.iter_time, o.iter_time),
                            space=e.space, pruned=tuned.cost, profilings=e.profilings,
                            assembled=e.assembled,
                            cost_plans=e.space / e.profilings,
                            cost_gpu_full=full_gpu_s / e.profile_gpu_s,
                            cost_gpu_job=n * e.iter_time / e.profile_gpu_s,
                        ))
    elapsed = time.perf_counter() - t0
    job_acc = [_accuracy(b, o) for o, b in job_rows if b is not None]
    return dict(rows=rows, missed=missed, job_acc=job_acc,
                job_missed=sum(1 for _, b in job_rows if b is None), elapsed=elapsed)


def _mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def _gmean(xs):
    return statistics.geometric_mean(xs) if xs else float("nan")


def report(res: dict, counts) -> str:
    rows = res["rows"]
    est = [r["est_acc"] for r in rows]
    tune = [r["tune_acc"] for r in rows]
    red = [r["space"] / r["pruned"] for r in rows]
    red_multi = [r["space"] / r["pruned"] for r in rows if r["space"] > 1]
    lines = [
        f"Cells evaluated: {len(rows)} (Table 2 models x batches x {', '.join(GPU_TYPES)} x GPUs {counts} "
        f"x stage counts); {res['missed']} Cells feasible only with hybrid plans "
        f"(both profiled plans OOM in some stage) are left out.  {res['elapsed']:.1f} s.",
        "",
        f"{'metric':58s} {'measured':>10s} {'paper':>8s}",
        f"{'Cell estimation accuracy, average':58s} {_mean(est):9.1f}% {PAPER['est_avg']:7.1f}%",
        f"{'Cell estimation accuracy, worst':58s} {min(est):9.1f}% {PAPER['est_worst']:7.1f}%",
        f"{'Cells estimated exactly (estimate = Cell optimum)':58s} "
        f"{100 * sum(a > 99.999 for a in est) / len(est):9.1f}% {'':>8s}",
        f"{'estimation cost, plans (space / profilings): mean':58s} "
        f"{_mean([r['cost_plans'] for r in rows]):9.1f}x {PAPER['est_cost']:7.1f}x",
        f"{'  geometric mean / max':58s} {_gmean([r['cost_plans'] for r in rows]):9.1f}x "
        f"{max(r['cost_plans'] for r in rows):9.0f}x",
        f"{'estimation cost, GPU time vs full exploration: gmean':58s} "
        f"{_gmean([r['cost_gpu_full'] for r in rows]):9.1f}x {'':>8s}",
        f"{'estimation cost, GPU time vs running the job: gmean':58s} "
        f"{_gmean([r['cost_gpu_job'] for r in rows]):9.1f}x {PAPER['est_cost']:7.1f}x",
        f"{'  minimum':58s} {min(r['cost_gpu_job'] for r in rows):9.1f}x {2.55:7.2f}x",
        f"{'Cell-guided tuning accuracy, average':58s} {_mean(tune):9.1f}% {PAPER['tune_acc']:7.1f}%",
        f"{'Cell-guided tuning accuracy, worst':58s} {min(tune):9.1f}% {'':>8s}",
        f"{'tuning search-size reduction, mean (all Cells)':58s} {_mean(red):9.2f}x "
        f"{PAPER['tune_red']:7.2f}x",
        f"{'tuning search-size reduction, mean (Cells with >1 plan)':58s} {_mean(red_multi):9.2f}x {'':>8s}",
        f"{'tuning search-size reduction, max':58s} {max(red):9.2f}x {PAPER['tune_red_max']:7.2f}x",
        f"{'job level: best estimated Cell vs full optimum, average':58s} {_mean(res['job_acc']):9.1f}% {'':>8s}",
        f"{'job level: best estimated Cell vs full optimum, worst':58s} {min(res['job_acc']):9.1f}% {'':>8s}",
        f"{'job level: optimum feasible but no Cell estimate':58s} {res['job_missed']:10d} {'':>8s}",
        "",
        "Per model (Cell estimation avg / worst, tuning avg):",
    ]
    for name in dict.fromkeys(r["model"] for r in rows):
        sub = [r for r in rows if r["model"] == name]
        lines.append(f"  {name:18s} {_mean([r['est_acc'] for r in sub]):6.1f}% "
                     f"{min(r['est_acc'] for r in sub):6.1f}%  {_mean([r['tune_acc'] for r in sub]):6.1f}%"
                     f"  ({len(sub)} Cells)")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="1,2,4,8,16", help="GPU counts, comma-separated")
    ap.add_argument("--quick", action="store_true", help="one batch size per model")
    args = ap.parse_args(argv)
    counts = tuple(int(x) for x in args.counts.split(","))
    print(report(run(counts, args.quick), counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
