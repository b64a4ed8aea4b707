"""Printing summaries as tables (rich when writing to a terminal, plain text otherwise)."""

from __future__ import annotations

import sys

# finished / unfinished / dropped come first so a job a policy dropped or never finished shows
HEADLINE = [("finished", "finished", "{:d}"), ("unfinished", "unfinished", "{:d}"),
            ("dropped", "dropped", "{:d}"), ("avg_jct", "avg JCT", "t"),
            ("median_jct", "median JCT", "t"), ("p95_jct", "p95 JCT", "t"),
            ("avg_queue", "avg queue", "t"), ("makespan", "makespan", "t"),
            # what the workload offered, beside what the policy achieved
            ("offered_load", "offered load", "{:.2f}"), ("utilization", "util", "{:.1%}"), ("avg_throughput", "avg thr (samples/s)", "{:.0f}"),
            ("restarts_per_job", "restarts/job", "{:.2f}")]


def _time_unit(summaries: dict[str, dict]) -> tuple[str, float]:
    """Hours for cluster-scale runs; seconds when every makespan is under an hour (live demos)."""
    spans = [s.get("makespan") or 0.0 for s in summaries.values()]
    return ("s", 1.0) if spans and max(spans) < 3600 else ("h", 3600.0)


def _cell(value, fmt: str, scale: float = 3600.0) -> str:
    if value is None:
        return "-"
    if fmt == "t":
        return f"{value / scale:.2f}"
    return fmt.format(value)


def summary_rows(summaries: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    unit, scale = _time_unit(summaries)
    header = ["policy"] + [f"{label} ({unit})" if fmt == "t" else label for _, label, fmt in HEADLINE]
    rows = [[name] + [_cell(s.get(key), fmt, scale) for key, _, fmt in HEADLINE]
            for name, s in summaries.items()]
    return header, rows


def _widths(header: list[str], rows: list[list[str]]) -> list[int]:
    return [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]


def print_table(header: list[str], rows: list[list[str]], title: str = "", file=None) -> None:
    file = file or sys.stdout
    if file.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title or None)
        for i, (h, w) in enumerate(zip(header, _widths(header, rows))):
            # never truncate a figure ("1027…"): each column is as wide as its widest cell
            table.add_column(h, justify="left" if i == 0 else "right", min_width=w, no_wrap=True)
        for r in rows:
            table.add_row(*r)
        console = Console(file=file)
        # a wider table than the terminal scrolls sideways rather than cutting figures
        needed = sum(_widths(header, rows)) + 3 * len(header) + 1
        Console(file=file, width=max(console.width, needed)).print(table)
        return
    widths = _widths(header, rows)
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
