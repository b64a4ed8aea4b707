"""Reproduce Crius's headline comparisons (sections 8.3-8.6) and print them beside the paper's.

    python experiments/crius/run.py [--scenario testbed|sim|both|heldout|all] [--settings derived,authors]
                                    [--compress 4] [--out DIR]

Every scenario runs under two settings (docs/crius.md, "Two settings"):
``derived`` (re-planning and Cell profiling priced by our own search model;
jobs run at a truth separate from every policy's estimate) and ``authors``
(the authors' simulator's constants; jobs run at the analytic optimum).  For
each baseline it prints Crius's JCT change under both, beside the paper's
figure, then Crius's Cell estimation accuracy against the truth.  ``heldout``
runs the same comparison on traces the reproduction was not tuned on
(arena-helios at its own rate, 4x and 16x; the Philly validation subset at 8x).

The experiment itself lives in the package (``dlsched.experiments.crius``),
where ``dlsched reproduce crius [--quick]`` runs it too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dlsched.experiments import crius_scenarios as scenarios
from dlsched.experiments.crius import (BASELINES, HELD_OUT_POLICIES, POLICIES, SETTINGS,  # noqa: F401 (BASELINES: tests)
                                       accuracy_line, held_out_scenarios, run_scenario, settings_table, table)


def _both(name: str, cluster, jobs, removed, policies, settings, max_time=None) -> tuple[dict, str]:
    by_setting = {s: run_scenario(name, cluster, jobs, policies, max_time=max_time, setting=s) for s in settings}
    out = "\n".join(f"_setting: {s}_\n\n{table(name, rows)}" for s, rows in by_setting.items())
    out += f"({len(removed)} job(s) fit no shape, left out)\n\n" + settings_table(name, by_setting)
    if "derived" in settings:
        out += "\n" + accuracy_line(cluster, jobs) + "\n"
    return by_setting, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="both", choices=["testbed", "sim", "both", "heldout", "all"])
    ap.add_argument("--settings", default="derived,authors", help="comma-separated: derived, authors")
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
        for name, by_setting in saved.items():
            print("\n".join(table(f"{name}", rows) for rows in by_setting.values()))
            print(settings_table(name, by_setting))
        return
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    bad = [s for s in settings if s not in SETTINGS]
    if bad:
        ap.error(f"--settings: unknown {', '.join(bad)}; choose from {', '.join(SETTINGS)}")
    if not scenarios.arena_available():
        print(f"skipped: arena trace not found at {scenarios.ARENA}")
        return
    results, text = {}, []
    if args.scenario in ("testbed", "both", "all"):
        cluster, jobs, removed = scenarios.testbed(iter_div=args.iter_div, ddl_scale=args.ddl_scale)
        results["testbed"], t = _both("testbed", cluster, jobs, removed, POLICIES, settings)
        text.append(t)
        # the DDL comparison with the trace's own deadlines too (the table above stretches them)
        cluster, jobs, _ = scenarios.testbed(iter_div=args.iter_div, ddl_scale=1.0)
        results["testbed-ddl1"], t = _both("testbed-ddl1", cluster, jobs, [], ["crius-ddl", "elasticflow"],
                                           settings)
        text.append("Deadlines as in the trace (not stretched):\n\n" + t)
    if args.scenario in ("sim", "both", "all"):
        cluster, jobs, removed = scenarios.sim(compress=args.compress, ddl_scale=args.ddl_scale)
        horizon = None if args.horizon_days is None else args.horizon_days * 86400
        results["sim"], t = _both("sim", cluster, jobs, removed, POLICIES, settings, max_time=horizon)
        text.append(t)
    if args.scenario in ("heldout", "all"):
        for name, build in held_out_scenarios().items():
            cluster, jobs, removed = build()
            results[name], t = _both(name, cluster, jobs, removed, HELD_OUT_POLICIES, settings)
            text.append(t)
    print("\n".join(text))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "crius_results.json").write_text(json.dumps(results, indent=1, default=float))
        (args.out / "crius_results.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
