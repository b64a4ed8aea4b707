"""``dlsched report``: summarise one or more results directories (simulated or live)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="summarise one or more results directories",
                       description="Read jobs.csv / series.csv / summary.json written by "
                                   "`dlsched simulate`, `compare` or `serve` and print the summaries side "
                                   "by side. A `compare` root (e.g. runs/compare) stands for each of its "
                                   "policies' directories.")
    p.add_argument("dirs", nargs="+", help="results directories, or compare roots")
    p.add_argument("--html", default=None, metavar="OUT",
                   help="also write a self-contained HTML report with figures (PNGs beside it)")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from dlsched.report.io import read_results, results_dirs
    from dlsched.report.labels import unique_labels
    from dlsched.report.warnings import network_lines, nothing_could_differ, read_timing
    from dlsched.report.summary import summarize
    from dlsched.report.tables import print_summaries

    dirs = [d for given in args.dirs for d in results_dirs(given)]
    names, figures = [], []
    for d in dirs:
        records, series, doc = read_results(d)
        params = doc.get("params", {})
        gpus = params.get("num_gpus") or 0
        names.append(params.get("policy", d.name))
        # what the workload offered, beside what each run achieved (runs before offered load: "-")
        figures.append({**summarize(records, series, gpus), "offered_load": params.get("offered_load")})
    labels = unique_labels(names, dirs)  # the same policy from two runs: told apart by directory
    summaries = dict(zip(labels, figures))
    print_summaries(summaries)
    for line in nothing_could_differ(summaries, dict(zip(labels, map(str, dirs)))):
        print(f"dlsched: warning: {line}", file=sys.stderr)
    for label, d in zip(labels, dirs):  # what the network model did, where a run had one
        for line in network_lines(read_timing(d)):
            print(f"dlsched: {label}: {line}", file=sys.stderr)
    if args.html:
        from dlsched.report.html import write_report

        page, pngs = write_report(args.dirs, args.html)
        print(f"report in {page} ({len(pngs)} figures beside it)")
    return 0
