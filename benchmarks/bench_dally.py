"""Speed of the Dally reproduction (issue 19's target; figures go to docs/dally.md).

The 16-rack Poisson experiment (400 jobs, 1,024 GPUs) with every scheduler of
``dlsched.experiments.dally.SCHEDULERS``: target under 1 minute in total on the
project's 2-core machine with tier-profile pricing.  ``--pricing flow`` times the
flow-level network model once it is merged.

    python benchmarks/bench_dally.py [--racks 16] [--arrival poisson] [--pricing tier-profile]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from dlsched.errors import InputError
from dlsched.experiments.dally import ARRIVALS, PRICING, RACKS, SCHEDULERS, run_one

TARGET_S = 60.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--racks", type=int, default=16, choices=RACKS)
    ap.add_argument("--arrival", default="poisson", choices=list(ARRIVALS))
    ap.add_argument("--pricing", default="tier-profile", choices=PRICING)
    args = ap.parse_args()
    walls = {}
    t0 = time.perf_counter()
    try:
        for pol in SCHEDULERS:
            walls[pol] = round(run_one(args.arrival, args.racks, pol, args.pricing)["wall_s"], 2)
    except InputError as e:
        sys.exit(f"bench_dally: {e}")
    total = time.perf_counter() - t0
    print(json.dumps({"racks": args.racks, "arrival": args.arrival, "pricing": args.pricing,
                      "per_scheduler_s": walls, "total_s": round(total, 2), "target_s": TARGET_S,
                      "met": total < TARGET_S}, indent=1))


if __name__ == "__main__":
    main()
