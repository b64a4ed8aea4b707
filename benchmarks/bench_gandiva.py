"""Speed of Gandiva (issue 18's targets).

Default: the ``gandiva-100`` cluster (50 P100 + 50 P40) replaying the experiment's synthetic
trace (``dlsched.experiments.gandiva.cluster_jobs``) with the non-preemptive baseline, Gandiva
and every ablation (time-slicing only, no packing, no migration, no grow-shrink), one after the
other, as ``dlsched reproduce gandiva`` runs them (target: under 1 minute in total).

``--large`` adds the runs that made Gandiva the slow row of other experiments: one Gandiva run
of each Dally workload on ``dally-4racks`` (as ``dlsched reproduce dally`` runs it) and the
benchmark trace on crius-sim (13,000 jobs over two weeks by default, ``--crius-jobs`` to slice it),
as ``dlsched simulate --policy gandiva --workload benchmark`` runs it: the default workload before
it moved to an offered load (docs/workloads.md), passed explicitly so figures stay comparable.  CPU seconds are printed beside wall seconds:
on a shared machine they are the figure to compare.

    python benchmarks/bench_gandiva.py [--jobs 500] [--hours 2.5] [--large] [--crius-jobs 13000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from dlsched.experiments import gandiva as exp


def _timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, round(time.perf_counter() - w0, 2), round(time.process_time() - c0, 2)


def _large(crius_jobs: int) -> dict:
    from dlsched import cli
    from dlsched.experiments import dally

    out = {}
    for arrival in ("poisson", "batch"):
        m, wall, cpu = _timed(lambda a=arrival: dally.run_one(a, 4, "gandiva"))
        out[f"dally-4racks {arrival}"] = {"wall_s": wall, "cpu_s": cpu, "finished": f"{m['finished']}/{m['jobs']}"}
    with tempfile.TemporaryDirectory(prefix="bench-gandiva-") as tmp:
        # exactly the command a user types (the CLI's synthetic default: 13,000 jobs over 14 days)
        argv = ["simulate", "--policy", "gandiva", "--workload", "benchmark", "--jobs", str(crius_jobs), "--quiet",
                "--out", tmp]
        rc, wall, cpu = _timed(lambda: cli.main(argv))
        summary = json.loads((Path(tmp) / "summary.json").read_text())["summary"]
    out[f"crius-sim {crius_jobs} jobs"] = {"wall_s": wall, "cpu_s": cpu, "rc": rc,
                                           "finished": f"{summary['finished']}/{summary['jobs']}"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=exp.CLUSTER_JOBS)
    ap.add_argument("--hours", type=float, default=exp.CLUSTER_HOURS)
    ap.add_argument("--large", action="store_true", help="also dally-4racks (both workloads) and crius-sim")
    ap.add_argument("--crius-jobs", type=int, default=13000)
    args = ap.parse_args()
    rows, total, cpu = _timed(lambda: exp.cluster(n_jobs=args.jobs, hours=args.hours))
    print(exp.table(rows))
    report = {"runs": {k: round(v["wall_s"], 2) for k, v in rows.items()}, "total_s": total, "total_cpu_s": cpu,
              "target_s": 60.0, "met": total < 60.0}
    if args.large:
        report["large"] = _large(args.crius_jobs)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
