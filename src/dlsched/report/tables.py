"""Printing summaries as tables (rich when writing to a terminal, plain text otherwise)."""

from __future__ import annotations

import sys

HEADLINE = [("finished", "finished", "{:d}"), ("avg_jct", "avg JCT (h)", "h"),
            ("median_jct", "median JCT (h)", "h"), ("p95_jct", "p95 JCT (h)", "h"),
            ("avg_queue", "avg queue (h)", "h"), ("makespan", "makespan (h)", "h"),
            ("utilization", "util", "{:.1%}"), ("avg_throughput", "avg thr (samples/s)", "{:.0f}"),
            ("restarts_per_job", "restarts/job", "{:.2f}")]


def _cell(value, fmt: str) -> str:
    if value is None:
        return "-"
    if fmt == "h":
        return f"{value / 3600:.2f}"
    return fmt.format(value)


def summary_rows(summaries: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    header = ["policy"] + [label for _, label, _ in HEADLINE]
    rows = [[name] + [_cell(s.get(key), fmt) for key, _, fmt in HEADLINE] for name, s in summaries.items()]
    return header, rows


def print_table(header: list[str], rows: list[list[str]], title: str = "", file=None) -> None:
    file = file or sys.stdout
    if file.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title or None)
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for r in rows:
            table.add_row(*r)
        Console(file=file).print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    if title:
        print(title, file=file)
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))),
          file=file)
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))),
              file=file)


def print_summaries(summaries: dict[str, dict], title: str = "", file=None) -> None:
    header, rows = summary_rows(summaries)
    print_table(header, rows, title, file)
