"""Reproduce Dally's headline comparisons (section V) and print them beside the paper's.

    python experiments/dally/run.py [--arrival batch|poisson|both] [--racks 2,4,8,16]
                                    [--pricing tier-profile|flow] [--sensitivity] [--timers] [--out DIR]

The experiment lives in the package (``dlsched.experiments.dally``), where
``dlsched reproduce dally [--quick]`` runs it too; this script picks parts of
the grid, the pricing mode, and runs the sensitivity of the inferred priority
formula on its own.  ``--timers`` runs the grid's points (seeds x load) with the
auto-tuner beside fixed delay timers of 0 h to infinity and prints, per timer,
its average JCT against the fixed 12 h (docs/dally.md, "The auto-tuner").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dlsched.errors import InputError
from dlsched.experiments.dally import (ARRIVALS, PAPER_TEXT, PRICING, RACKS, SCHEDULERS, headlines, run_grid,
                                       sensitivity, table)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arrival", default="both", choices=[*ARRIVALS, "both"])
    ap.add_argument("--racks", default=",".join(map(str, RACKS)), help="comma-separated rack counts (2,4,8,16)")
    ap.add_argument("--pricing", default="tier-profile", choices=PRICING)
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS))
    ap.add_argument("--sensitivity", action="store_true", help="only the priority-formula sensitivity (batch)")
    ap.add_argument("--timers", action="store_true", help="only the fixed-timer sweep beside the auto-tuner")
    ap.add_argument("--out", type=Path, default=None, help="write every run's results under this folder")
    args = ap.parse_args()
    try:
        racks = tuple(int(x) for x in args.racks.split(","))
    except ValueError:
        ap.error(f"--racks: not a comma-separated list of whole numbers: {args.racks!r}")
    if any(r not in RACKS for r in racks):
        ap.error(f"--racks: shipped clusters have {', '.join(map(str, RACKS))} racks")
    try:
        if args.timers:
            from dlsched.experiments.dally_grid import sweep_table, timer_sweep

            arrivals = tuple(ARRIVALS) if args.arrival == "both" else (args.arrival,)
            for key, rows in timer_sweep(arrivals, racks).items():
                print(sweep_table(key, rows))
            return 0
        if args.sensitivity:
            for r in racks:
                print(table(("sensitivity of the inferred priority, batch", r), sensitivity(racks=r, out=args.out)))
            return 0
        arrivals = tuple(ARRIVALS) if args.arrival == "both" else (args.arrival,)
        grid = run_grid(arrivals, racks, args.schedulers.split(","), args.pricing, out=args.out,
                        progress=lambda d, t, what: print(f"  [{d}/{t}] {what}", file=sys.stderr, flush=True))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for key, rows in grid.items():
        print(table(key, rows))
    print(f"Paper: {PAPER_TEXT}\n")
    for h in headlines(grid):
        print(f"{h.metric}: paper {h.paper:.0f}%, ours " + ("-" if h.ours is None else f"{h.ours:.1f}%")
              + f" at {h.scenario} ({h.note})")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "grid.json").write_text(json.dumps({f"{a}-{r}racks": rows for (a, r), rows in grid.items()},
                                                       indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
