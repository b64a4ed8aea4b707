"""``dlsched reproduce NAME``: run a paper's experiment set and put our figures beside the paper's."""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="reproduce a paper's headline figures (crius, dally, gandiva, crux)",
                       description="Run a paper's experiment set, print our headline figures beside the "
                                   "paper's with the ratio, and write the results, the table and an HTML "
                                   "report to --out.")
    p.add_argument("paper", help="crius, gandiva, dally or crux (crius-4x: Crius with the simulation's "
                                 "arrivals compressed 4x)")
    p.add_argument("--quick", action="store_true", help="a reduced set that finishes in under 2 minutes")
    p.add_argument("--out", default=None, help="results root (default runs/reproduce-PAPER)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _fmt(v: float | None, unit: str) -> str:
    from dlsched.experiments.grid import fmt  # imported when a table is printed, not at start-up

    return fmt(v, unit, signed=False)


def headline_table(heads) -> tuple[list[str], list[list[str]]]:
    if any(getattr(h, "verdict", "") for h in heads):  # run over a grid: range and verdict, not a point
        from dlsched.experiments.grid import fmt_range

        header = ["scenario", "figure", "paper", "ours (range over grid)", "per setting", "verdict", "note"]
        rows = [[h.scenario, h.metric, "-" if h.metric.startswith("[ours]") else _fmt(h.paper, h.unit),
                 fmt_range(h.lo, h.hi, h.unit), h.per_setting, h.verdict, h.note] for h in heads]
        return header, rows
    header = ["scenario", "figure", "paper", "ours", "ours / paper", "note"]
    rows = [[h.scenario, h.metric, _fmt(h.paper, h.unit), _fmt(h.ours, h.unit),
             "-" if h.ratio is None else f"{h.ratio:.2f}", h.note] for h in heads]
    return header, rows


def run(args) -> int:
    import json
    import time
    from pathlib import Path

    from dlsched.errors import InputError
    from dlsched.experiments.registry import get_experiment
    from dlsched.report.html import write_report
    from dlsched.report.provenance import args_config, write_provenance
    from dlsched.report.tables import print_table

    exp = get_experiment(args.paper)
    missing = exp.available()
    if missing:
        raise InputError(f"cannot reproduce {exp.name}: {missing}")
    out = Path(args.out or f"runs/reproduce-{exp.name}")
    out.mkdir(parents=True, exist_ok=True)
    runs, expected = exp.plan(args.quick)
    print(f"reproducing {exp.paper}: {runs} simulations{' (quick set)' if args.quick else ''}, "
          f"expected about {expected / 60:.1f} min on an idle 2-core machine", flush=True)
    t0 = time.perf_counter()
    with _progress(args.quiet, runs) as cb:
        heads = exp.run(args.quick, out, cb)
    header, rows = headline_table(heads)
    print_table(header, rows, title=f"{exp.name}: our figures beside the paper's")
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    (out / "headline.md").write_text(f"# {exp.paper}\n\n" + "\n".join(md) + "\n")
    (out / "headline.json").write_text(json.dumps([h.__dict__ | {"ratio": h.ratio} for h in heads], indent=1,
                                                  sort_keys=True) + "\n")
    pages = []
    for scen in sorted({h.scenario for h in heads}):
        if not (out / scen).is_dir():  # a scenario with no simulation runs (e.g. a micro-benchmark)
            continue
        dirs = sorted(p for p in (out / scen).iterdir() if (p / "jobs.csv").exists())
        page, _ = write_report(dirs, out / f"report_{scen}.html", title=f"{exp.name} reproduction: {scen}")
        pages.append(str(page))
    write_provenance(out, args_config(args), 0, getattr(args, "argv", None))
    print(f"done in {time.perf_counter() - t0:.0f} s; table in {out / 'headline.md'}; reports: {', '.join(pages)}")
    return 0


def _progress(quiet: bool, total: int):
    """A rich progress bar over the experiment's simulations (nothing when quiet; a plain line now
    and then when stderr is not a terminal)."""
    import contextlib

    if quiet:
        return contextlib.nullcontext(None)
    if not sys.stderr.isatty():
        from dlsched.report.progress import plain_steps

        return plain_steps("simulations")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextlib.contextmanager
    def bar():
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      transient=True) as prog:
            task = prog.add_task("simulating", total=total)
            yield lambda done, total_, label: prog.update(task, completed=done, description=label)
    return bar()
