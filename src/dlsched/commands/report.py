"""``dlsched report``: summarise a results directory (simulated or live)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="summarise one or more results directories",
                       description="Read jobs.csv / series.csv / summary.json written by "
                                   "`dlsched simulate`, `compare` or `serve` and print the summary.")
    p.add_argument("dirs", nargs="+", help="results directories")
    p.add_argument("--html", default=None, metavar="OUT",
                   help="also write a self-contained HTML report with figures (PNGs beside it)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from dlsched.report.io import read_results
    from dlsched.report.summary import summarize
    from dlsched.report.tables import print_summaries

    summaries = {}
    for d in args.dirs:
        records, series, doc = read_results(d)
        params = doc.get("params", {})
        gpus = params.get("num_gpus") or 0
        summaries[params.get("policy", Path(d).name)] = summarize(records, series, gpus)
    print_summaries(summaries)
    if args.html:
        from dlsched.report.html import write_report

        page, pngs = write_report(args.dirs, args.html)
        print(f"report in {page} ({len(pngs)} figures beside it)")
    return 0
