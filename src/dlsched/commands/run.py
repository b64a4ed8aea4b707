"""``dlsched run EXP.yaml``: an experiment file's runs (a sweep, several seeds and policies) in parallel."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run an experiment file (policies x seeds x sweep) in parallel",
                       description="Run every combination of an experiment file's sweep, seeds and policies "
                                   "in parallel worker processes (or as Ray tasks with --ray/--address); "
                                   "write each run's results, one table (results.csv) and one HTML report.")
    p.add_argument("experiment", help="experiment YAML (see docs/reports.md)")
    p.add_argument("--out", default=None, help="results root (default runs/<experiment name>)")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPU count)")
    p.add_argument("--ray", action="store_true", help="run the simulations as tasks on a new local Ray cluster")
    p.add_argument("--address", default=None, help="run them as tasks on the Ray cluster at this address")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def results_table(runs, results) -> tuple[list[str], list[list[str]]]:
    """One row per run: the sweep values, the seed, the policy and the headline figures."""
    from dlsched.report.tables import summary_rows

    keys = [k for k, _ in runs[0].values] if runs else []
    header, rows = summary_rows({r.label: res["summary"] for r, res in zip(runs, results)})
    header = [k.split(".")[-1] for k in keys] + ["seed", "policy"] + header[1:]
    rows = [[str(v) for _, v in r.values] + [str(r.seed), r.policy] + row[1:] for r, row in zip(runs, rows)]
    return header, rows


def _expanding():
    """A callback printing how far a sweep's expansion has got: at once, then once a second."""
    import sys

    from dlsched.report.progress import throttled

    due = throttled(1.0, first=True)

    def show(done: int, total: int) -> None:
        if due()[0]:
            print(f"expanding the sweep: {done:,} of {total:,} runs' settings checked", file=sys.stderr, flush=True)
    return show


def run(args) -> int:
    import csv
    import os
    import time
    from pathlib import Path

    from dlsched.experiments.expfile import dump_point, load_experiment
    from dlsched.experiments.sweep import run_local, run_ray
    from dlsched.report.io import write_results
    from dlsched.report.provenance import write_provenance
    from dlsched.report.tables import print_table

    exp, runs = load_experiment(args.experiment, None if args.quiet else _expanding())
    out = Path(args.out or f"runs/{exp.name}")
    where = (f"Ray cluster at {args.address}" if args.address else "a new local Ray cluster" if args.ray
             else f"{min(args.workers or os.cpu_count() or 1, len(runs))} worker process(es)")
    print(f"{exp.name}: {len(runs)} simulation(s) ({len({r.point for r in runs})} point(s) x "
          f"{len(exp.policies)} polic{'y' if len(exp.policies) == 1 else 'ies'}) on {where}", flush=True)
    t0 = time.perf_counter()
    with _progress(args.quiet, len(runs)) as cb:
        if args.ray or args.address:
            results = run_ray(runs, args.address, cb)
        else:
            results = run_local(runs, args.workers or os.cpu_count() or 1, cb)
    dirs = []
    for r, res in zip(runs, results):
        d = out / r.point / r.policy
        write_results(d, res["records"], res["series"], res["summary"], res["params"])
        (d / "experiment.yaml").write_text(dump_point(r.doc))
        write_provenance(d, r.doc, r.seed, ["run", str(d / "experiment.yaml")])
        dirs.append(d)
    header, rows = results_table(runs, results)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    write_provenance(out, {"experiment": str(Path(args.experiment).resolve())}, None, getattr(args, "argv", None))
    print_table(header, rows, title=f"{exp.name} ({len(runs)} runs, {time.perf_counter() - t0:.0f} s)")
    if not args.no_report:
        from dlsched.report.html import write_report

        page, _ = write_report(dirs, out / "report.html", title=f"{exp.name}: {len(runs)} runs",
                               labels=[r.label for r in runs])
        print(f"report in {page}")
    print(f"results in {out}/ (table: {out / 'results.csv'})")
    return 0


def _progress(quiet: bool, total: int):
    from dlsched.commands.reproduce import _progress as bar

    return bar(quiet, total)
