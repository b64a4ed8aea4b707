"""Reproduce Gandiva's evaluation (section 6) and print ours beside the paper's.

    python experiments/gandiva/run.py [--scenario timeslice|growshrink|cluster|automl|all] [--jobs N] [--hours H]

The experiment lives in the package (``dlsched.experiments.gandiva``), where
``dlsched reproduce gandiva [--quick]`` runs it too; this script runs one
scenario at a time and lets the cluster trace be resized.
"""

from __future__ import annotations

import argparse

from dlsched.experiments import gandiva as exp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="all", choices=["timeslice", "growshrink", "cluster", "automl", "all"])
    ap.add_argument("--jobs", type=int, default=exp.CLUSTER_JOBS, help="cluster scenario: number of jobs")
    ap.add_argument("--hours", type=float, default=exp.CLUSTER_HOURS, help="cluster scenario: arrival window")
    args = ap.parse_args()
    run = args.scenario
    if run in ("timeslice", "all"):
        r = exp.timeslice()
        print(f"timeslice (Fig. 9): long jobs' share {r.long_share:.3f} (paper 4/6 = 0.667), short jobs' "
              f"{r.short_share:.3f}, aggregate throughput drop {r.aggregate_drop * 100:.2f}% (paper < 2%)")
    if run in ("growshrink", "all"):
        line = ", ".join(f"{t:.0f} min: {g} GPU(s)" for t, g in exp.growshrink())
        print(f"growshrink (Fig. 11): {line}\n  paper: {exp.PAPER['growshrink']}")
    if run in ("cluster", "all"):
        rows = exp.cluster(n_jobs=args.jobs, hours=args.hours)
        print(f"cluster (section 6.4, gandiva-100, {args.jobs} jobs over {args.hours} h):")
        print(exp.table(rows))
        g, f = rows["gandiva"], rows["fcfs"]
        print(f"  avg JCT {(1 - g['avg_jct_h'] / f['avg_jct_h']) * 100:.1f}% lower (paper 26.8%), makespan "
              f"{(1 - g['makespan_h'] / f['makespan_h']) * 100:.1f}% lower (paper 17.8%), "
              f"{g['migrations_per_h']:.1f} migrations/h (paper ~3/h)")
    if run in ("automl", "all"):
        am = exp.automl()
        print(f"automl (section 6.2): mean time to first result {am['timeslice-only']:.0f} min with Gandiva, "
              f"{am['fcfs']:.0f} min with FCFS ({(1 - am['timeslice-only'] / am['fcfs']) * 100:.0f}% sooner; "
              f"paper: 77% sooner)")


if __name__ == "__main__":
    main()
