"""Reproduce Crius's headline comparisons (sections 8.3-8.6) and print them beside the paper's.

    python experiments/crius/run.py [--scenario testbed|sim|both] [--compress 4] [--out DIR]

The experiment itself lives in the package (``dlsched.experiments.crius``),
where ``dlsched reproduce crius [--quick]`` runs it too; this script keeps the
scenario options (compression, horizon, iteration divisor, deadline slack).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dlsched.experiments import crius_scenarios as scenarios
from dlsched.experiments.crius import BASELINES, POLICIES, run_scenario, table  # noqa: F401 (BASELINES: tests)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="both", choices=["testbed", "sim", "both"])
    ap.add_argument("--compress", type=float, default=4.0, help="arrival compression of the sim trace")
    ap.add_argument("--horizon-days", type=float, default=None,
                    help="stop the sim run here (jobs still active count as unfinished)")
    ap.add_argument("--iter-div", type=int, default=100, help="testbed: divide iterations by this")
    ap.add_argument("--ddl-scale", type=float, default=10.0,
                    help="stretch deadline slack (arena deadlines are ~7x tighter than our perf model)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--render", type=Path, default=None, help="print the tables of a saved results JSON")
    args = ap.parse_args()
    if args.render:
        saved = json.loads(args.render.read_text())
        print("\n".join(table(name, rows) for name, rows in saved.items()))
        return
    if not scenarios.arena_available():
        print(f"skipped: arena trace not found at {scenarios.ARENA}")
        return
    results = {}
    text = []
    if args.scenario in ("testbed", "both"):
        cluster, jobs, removed = scenarios.testbed(iter_div=args.iter_div, ddl_scale=args.ddl_scale)
        results["testbed"] = run_scenario("testbed", cluster, jobs, POLICIES)
        text.append(table("testbed", results["testbed"]) + f"({len(removed)} job(s) fit no shape, left out)\n")
    if args.scenario in ("sim", "both"):
        cluster, jobs, removed = scenarios.sim(compress=args.compress, ddl_scale=args.ddl_scale)
        horizon = None if args.horizon_days is None else args.horizon_days * 86400
        results["sim"] = run_scenario("sim", cluster, jobs, POLICIES, max_time=horizon)
        text.append(table("sim", results["sim"]) + f"({len(removed)} job(s) fit no shape, left out)\n")
    print("\n".join(text))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "crius_results.json").write_text(json.dumps(results, indent=1, default=float))
        (args.out / "crius_results.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
