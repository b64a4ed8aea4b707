"""Speed of calibration and validation on every measured table (goal: calibrate < 60 s).

Times ``calibrate`` (what ``dlsched perf calibrate`` runs) on the five tables of
``../shared/anchors/profiles`` plus Gavel's isolated table, then ``validate`` under each
holdout, and checks that two calibrations write the same file (the fit is deterministic).
Wall and CPU seconds are printed; on a shared machine the wall figures are upper bounds.

    python benchmarks/bench_calibrate.py [--shared ../shared] [--holdouts size,gpu,job]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dlsched.perf.calibration.calibrate import calibrate
from dlsched.perf.calibration.validate import lines, validate

TABLES = ["profiles/arena-profiled-iteration-times.csv", "profiles/arena-estimated-plans.csv",
          "profiles/arena-dp-replica-memory.csv", "profiles/gavel-colocated-throughputs.csv",
          "profiles/gavel-unconsolidated-throughputs.csv", "traces/gavel-simulation-throughputs-isolated.csv"]


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    ap.add_argument("--holdouts", default="size,gpu,job")
    args = ap.parse_args()
    paths = [str(Path(args.shared) / "anchors" / t) for t in TABLES]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        print(f"missing tables: {', '.join(missing)}", file=sys.stderr)
        return 2
    first, wall, cpu = timed(lambda: calibrate(paths))
    second, _, _ = timed(lambda: calibrate(paths))
    same = json.dumps(first.params.to_json(), sort_keys=True) == json.dumps(second.params.to_json(), sort_keys=True)
    print(f"calibrate, all tables: {wall:.1f} s wall, {cpu:.1f} s CPU (goal < 60 s); deterministic: {same}")
    for h in [h for h in args.holdouts.split(",") if h]:
        rep, wall, cpu = timed(lambda: validate(paths, h))
        print(f"validate --holdout {h}: {wall:.1f} s wall, {cpu:.1f} s CPU; {lines(rep)[-1]}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
