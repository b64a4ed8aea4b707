"""Speed of the Gandiva cluster experiment (issue 18's target: under 1 minute in total).

The ``gandiva-100`` cluster (50 P100 + 50 P40) replaying the experiment's synthetic trace
(``dlsched.experiments.gandiva.cluster_jobs``) with the non-preemptive baseline, Gandiva
and every ablation (time-slicing only, no packing, no migration, no grow-shrink), one
after the other, as ``dlsched reproduce gandiva`` runs them.

    python benchmarks/bench_gandiva.py [--jobs 500] [--hours 2.5]
"""

from __future__ import annotations

import argparse
import json
import time

from dlsched.experiments import gandiva as exp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=exp.CLUSTER_JOBS)
    ap.add_argument("--hours", type=float, default=exp.CLUSTER_HOURS)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = exp.cluster(n_jobs=args.jobs, hours=args.hours)
    total = time.perf_counter() - t0
    print(exp.table(rows))
    print(json.dumps({"runs": {k: round(v["wall_s"], 2) for k, v in rows.items()}, "total_s": round(total, 2),
                      "target_s": 60.0, "met": total < 60.0}, indent=1))


if __name__ == "__main__":
    main()
