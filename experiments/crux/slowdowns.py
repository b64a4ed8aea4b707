"""Which jobs one communication scheduler slows against another, from two runs' ``jobs.csv``.

    PYTHONPATH=src python experiments/crux/slowdowns.py RUN_A/jobs.csv RUN_B/jobs.csv [--min-gpus 9]

For every job of at least ``--min-gpus`` GPUs (default 9: jobs beyond one 8-GPU host) that finished in
both runs: its run time in A over its run time in B.  Prints per job size how many run slower in A
(ratio above 1 + 1e-9), how many faster, the median and largest slow-down, and the exposed
communication share (comm_time / run_time summed) in each run.  docs/crux.md reads ECMP against
CRUX this way.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict


def read_jobs(path: str) -> dict[str, tuple[int, float, float]]:
    """Finished jobs: job -> (GPUs, run_time, comm_time)."""
    with open(path, newline="") as f:
        return {r["job_id"]: (int(r["num_gpus"]), float(r["run_time"]), float(r["comm_time"]))
                for r in csv.DictReader(f) if r["status"] == "finished"}


def slowdowns(a: dict, b: dict, min_gpus: int) -> list[tuple]:
    groups = defaultdict(list)
    for j, (gpus, run_a, comm_a) in a.items():
        if j in b and gpus >= min_gpus:
            _, run_b, comm_b = b[j]
            groups[gpus].append((run_a, comm_a, run_b, comm_b))
            groups["all"].append((run_a, comm_a, run_b, comm_b))
    rows = []
    for key in sorted((k for k in groups if k != "all")) + (["all"] if "all" in groups else []):
        g = groups[key]
        ratio = [ra / rb for ra, _, rb, _ in g]
        slow = [r for r in ratio if r > 1 + 1e-9]
        rows.append((key, len(g), len(slow), sum(r < 1 - 1e-9 for r in ratio),
                     statistics.median(slow) if slow else float("nan"), max(ratio),
                     sum(c for _, c, _, _ in g) / sum(r for r, _, _, _ in g),
                     sum(c for _, _, _, c in g) / sum(r for _, _, r, _ in g)))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-gpus", type=int, default=9)
    args = ap.parse_args()
    try:
        a, b = read_jobs(args.a), read_jobs(args.b)
    except (OSError, KeyError, ValueError) as e:
        print(f"error: {args.a} / {args.b}: {e!r}", file=sys.stderr)
        return 2
    print(f"A = {args.a}\nB = {args.b}\njobs of {args.min_gpus}+ GPUs finished in both")
    print(f"{'GPUs':>6} {'jobs':>6} {'slower in A':>12} {'faster':>7} {'median x':>9} {'max x':>7} "
          f"{'exposed A':>10} {'exposed B':>10}")
    for key, n, slow, fast, med, mx, ea, eb in slowdowns(a, b, args.min_gpus):
        print(f"{key:>6} {n:>6} {slow:>12} {fast:>7} {med:>9.2f} {mx:>7.2f} {ea:>10.1%} {eb:>10.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
