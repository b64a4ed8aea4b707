"""Writing and reading a run's results directory.

A results directory holds ``jobs.csv`` (one JobRecord per row),
``series.csv`` (time series), ``summary.json`` (headline figures plus the
parameters that produced them).  Simulated and live runs write the same
layout, so ``dlsched report`` reads either.  Output is byte-identical for
identical inputs: fixed column order, ``repr``-exact floats, sorted keys.
"""

from __future__ import annotations

import contextlib
import csv
import json
import locale
import math
from operator import attrgetter
from dataclasses import fields
from pathlib import Path

from dlsched.errors import InputError, InvariantError
from dlsched.report.columns import write_rows
from dlsched.report.records import JobRecord, TimeSeries


_CHUNK = 16_384  # rows formatted at a time: a million rows' texts at once would take ~1 GiB
COMPILED_ROWS = 100_000  # a file of this many rows is written by compiled code (report/csv_kernel.py)
_FIELDS = tuple(f.name for f in fields(JobRecord))


def write_results(out_dir, records: list[JobRecord], series: TimeSeries, summary: dict,
                  params: dict, timings: dict | None = None) -> Path:
    """Write ``jobs.csv``, ``series.csv`` and ``summary.json`` (byte-identical for the same
    inputs and seed) and, when given, ``timing.json``: wall-clock measurements of the run."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # written a block of rows at a time, column by column (report/columns.py: same bytes as
    # formatting each field through ``fmt_value`` and the csv module)
    enc = locale.getpreferredencoding(False)  # what open() in text mode would encode with
    with open(out / "jobs.csv", "wb") as f:
        f.write((",".join(JobRecord.columns()) + "\n").encode(enc))
        big = len(records) >= COMPILED_ROWS
        for i in range(0, len(records), _CHUNK):
            write_rows(f, _record_columns(records[i:i + _CHUNK]), enc, compiled=big)
    cols = list(series.columns().items())
    with open(out / "series.csv", "wb") as f:
        f.write((",".join(name for name, _ in cols) + "\n").encode(enc))
        big = len(series.time) >= COMPILED_ROWS
        for i in range(0, len(series.time), _CHUNK):
            write_rows(f, [c[i:i + _CHUNK] for _, c in cols], enc, compiled=big)
    doc = {"summary": summary, "params": params}
    (out / "summary.json").write_text(strict_json(doc))
    if timings is not None:
        (out / "timing.json").write_text(strict_json(timings))
    return out


def _record_columns(records: list[JobRecord]) -> list[list]:
    """``records`` as columns in ``JobRecord.columns()`` order (the last, jct, computed)."""
    cols = [list(map(attrgetter(name), records)) for name in _FIELDS]
    # ``JobRecord.jct`` from the columns already read: the same subtraction, without a property call per row
    submit, finish = cols[_FIELDS.index("submit")], cols[_FIELDS.index("finish")]
    cols.append([None if f is None else f - s for s, f in zip(submit, finish)])
    return cols


def non_finite(doc, path: str = "") -> str | None:
    """The key path of the first NaN or infinity in ``doc`` (None when there is none)."""
    if isinstance(doc, float) and not math.isfinite(doc):
        return path or "<root>"
    if isinstance(doc, dict):
        items = doc.items()
    elif isinstance(doc, (list, tuple)):
        items = enumerate(doc)
    else:
        return None
    for k, v in items:
        found = non_finite(v, f"{path}.{k}" if path else str(k))
        if found:
            return found
    return None


def strict_json(doc) -> str:
    """``doc`` as standard JSON (sorted keys, indented): a NaN or infinity is a bug, named by its key.

    Inputs are validated before a run, so nothing non-finite should reach a result; Python's
    default would write ``NaN``, which other JSON readers reject.
    """
    bad = non_finite(doc)
    if bad is not None:
        raise InvariantError(f"non-finite value at {bad} would make the results invalid JSON")
    return json.dumps(doc, indent=2, sort_keys=True, default=str, allow_nan=False) + "\n"


_INT = {"num_gpus", "total_iterations", "restarts", "migrations", "resizes"}
_STR = {"job_id", "model", "gpu_type", "status", "reason"}


def read_records(path) -> list[JobRecord]:
    path = Path(path)
    names = [f.name for f in fields(JobRecord)]
    out = []
    with table_rows(path) as (fieldnames, reader):
        missing = set(names) - set(fieldnames or [])
        if missing:
            raise InputError(f"missing columns {sorted(missing)}", file=str(path), line=1)
        for line, row in enumerate(reader, start=2):
            kw = {}
            for n in names:
                v = row[n]
                try:
                    if n in _STR:
                        kw[n] = v
                    elif v == "":
                        kw[n] = None
                    elif n in _INT:
                        kw[n] = int(v)
                    else:
                        kw[n] = float(v)
                except ValueError:
                    raise InputError(f"not a number: {v!r}", file=str(path), line=line, field=n) from None
            out.append(JobRecord(**kw))
    return out


@contextlib.contextmanager
def table_rows(path: Path):
    """(column names, rows as dicts of text) of a CSV or (``report.frames``) Parquet table."""
    if path.suffix == ".parquet":
        from dlsched.report.frames import parquet_rows

        cols, rows = parquet_rows(path)
        yield cols, iter(rows)
        return
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        yield reader.fieldnames, reader


def read_series(path) -> TimeSeries:
    ts = TimeSeries()
    with table_rows(Path(path)) as (_, rows):
        for row in rows:
            ts.add(float(row["time"]), int(row["busy_gpus"]), int(row["running_jobs"]),
                   int(row["queued_jobs"]), float(row["throughput"]))
    return ts


def results_dirs(path) -> list[Path]:
    """The results directories under ``path``: itself, or (a ``compare`` root) each sub-directory
    holding a run, in the order ``compare.json`` lists the policies (else by name)."""
    root = Path(path)
    if not root.is_dir():
        raise InputError("no such results directory", file=str(root))
    if jobs_table(root):
        return [root]
    runs = sorted(d for d in root.iterdir() if d.is_dir() and jobs_table(d))
    if not runs:
        raise InputError("not a results directory (no jobs.csv, and no sub-directory with one)", file=str(root))
    order = []
    if (root / "compare.json").exists():
        try:
            order = list(json.loads((root / "compare.json").read_text())["params"]["policies"])
        except (ValueError, KeyError, TypeError):
            order = []  # a damaged compare.json: fall back to names
    rank = {name: i for i, name in enumerate(order)}
    return sorted(runs, key=lambda d: (rank.get(d.name, len(rank)), d.name))


def jobs_table(out: Path) -> Path | None:
    """jobs.csv, or jobs.parquet (``--out-format parquet``)."""
    for name in ("jobs.csv", "jobs.parquet"):
        if (out / name).is_file():
            return out / name
    return None


def read_results(out_dir) -> tuple[list[JobRecord], TimeSeries, dict]:
    out = Path(out_dir)
    jobs = jobs_table(out)
    if jobs is None:
        raise InputError("not a results directory (no jobs.csv)", file=str(out))
    doc = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    series_path = next((out / n for n in ("series.csv", "series.parquet") if (out / n).is_file()), None)
    series = read_series(series_path) if series_path else TimeSeries()
    return read_records(jobs), series, doc
