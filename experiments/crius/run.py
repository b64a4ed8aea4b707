"""Reproduce Crius's headline comparisons (sections 8.3-8.6) and print them beside the paper's.

    python experiments/crius/run.py [--scenario testbed|sim|both|heldout|all] [--settings derived,authors]
                                    [--policies crius,sia,...] [--compress 4] [--out DIR]
    python experiments/crius/run.py --render RESULTS.json [MORE.json ...]

Every scenario runs under two settings (docs/crius.md, "Two settings"):
``derived`` (re-planning and Cell profiling priced by our own search model;
jobs run at a truth separate from every policy's estimate) and ``authors``
(the authors' simulator's constants; jobs run at the analytic optimum).  For
each baseline it prints Crius's JCT change under both, beside the paper's
figure, then Crius's Cell estimation accuracy against the truth.  ``heldout``
runs the same comparison on traces the reproduction was not tuned on
(arena-helios at its own rate, 4x and 16x; the Philly validation subset at 8x).

The full run is long on a small machine (docs/crius.md, "Speed"): ``--policies``
runs a subset (name ``crius`` too, or merge with a run that has it), and
``--render`` merges the JSON of several such runs into one set of tables
(later files win where they measured the same scenario, setting and policy).

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


def _both(name: str, cluster, jobs, removed, policies, settings, max_time=None, only=None) -> tuple[dict, str]:
    if only:
        policies = [p for p in policies if p in only]
        if not policies:
            return {}, ""
    by_setting = {s: run_scenario(name, cluster, jobs, policies, max_time=max_time, setting=s) for s in settings}
    out = _render(name, by_setting) + f"({len(removed)} job(s) fit no shape, left out)\n"
    if "derived" in settings:
        out += "\n" + accuracy_line(cluster, jobs) + "\n"
    return by_setting, out


def _render(name: str, by_setting: dict) -> str:
    out = "\n".join(f"_setting: {s}_\n\n{table(name, rows)}" for s, rows in by_setting.items())
    return out + settings_table(name, by_setting)


def _merge(paths: list[Path]) -> dict:
    """Results of several runs, scenario -> setting -> policy -> metrics; later files win."""
    merged: dict = {}
    for path in paths:
        for name, by_setting in json.loads(path.read_text()).items():
            for setting, rows in by_setting.items():
                merged.setdefault(name, {}).setdefault(setting, {}).update(rows)
    return merged


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
    ap.add_argument("--policies", default=None,
                    help="comma-separated subset of the scenario's policies (tables compare with crius where present)")
    ap.add_argument("--render", type=Path, nargs="+", default=None,
                    help="print the tables of saved results JSON files, merged")
    args = ap.parse_args()
    if args.render:
        for name, by_setting in _merge(args.render).items():
            print(_render(name, by_setting))
        return
    only = None
    if args.policies:
        only = {p.strip() for p in args.policies.split(",") if p.strip()}
        known = set(POLICIES) | set(HELD_OUT_POLICIES)
        if only - known:
            ap.error(f"--policies: unknown {', '.join(sorted(only - known))}; choose from {', '.join(sorted(known))}")
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
        results["testbed"], t = _both("testbed", cluster, jobs, removed, POLICIES, settings, only=only)
        text.append(t)
        # the DDL comparison with the trace's own deadlines too (the table above stretches them)
        cluster, jobs, _ = scenarios.testbed(iter_div=args.iter_div, ddl_scale=1.0)
        results["testbed-ddl1"], t = _both("testbed-ddl1", cluster, jobs, [], ["crius-ddl", "elasticflow"],
                                           settings, only=only)
        if t:
            text.append("Deadlines as in the trace (not stretched):\n\n" + t)
    if args.scenario in ("sim", "both", "all"):
        cluster, jobs, removed = scenarios.sim(compress=args.compress, ddl_scale=args.ddl_scale)
        horizon = None if args.horizon_days is None else args.horizon_days * 86400
        results["sim"], t = _both("sim", cluster, jobs, removed, POLICIES, settings, max_time=horizon, only=only)
        text.append(t)
    if args.scenario in ("heldout", "all"):
        for name, build in held_out_scenarios().items():
            cluster, jobs, removed = build()
            results[name], t = _both(name, cluster, jobs, removed, HELD_OUT_POLICIES, settings, only=only)
            text.append(t)
    results = {k: v for k, v in results.items() if v}
    print("\n".join(text))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        # per-job fields ("_jct") serve in-memory comparisons only
        lean = {k: {s: {p: {m: v for m, v in r.items() if not m.startswith("_")} for p, r in rows.items()}
                    for s, rows in by.items()} for k, by in results.items()}
        (args.out / "crius_results.json").write_text(json.dumps(lean, indent=1, default=float))
        (args.out / "crius_results.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
