"""A results folder's tables as pandas data frames, and their Parquet form.

CSV is the reference format (byte-identical for the same run); Parquet, on request, is written
from it, so both hold the same values with the same column types: the columns that hold names
(``STRING_COLUMNS``) are text, whatever they look like, and the rest numbers.  pandas and
pyarrow load only here, never at package import.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.errors import InputError

TABLES = ("jobs", "series")  # links.csv stays CSV: only the HTML report's figure reads it
STRING_COLUMNS = ("job_id", "model", "gpu_type", "status", "reason", "link", "tier")


def table_path(out_dir, name: str) -> Path | None:
    """``name``.csv or ``name``.parquet in ``out_dir``, whichever is there (None: neither)."""
    for ext in ("csv", "parquet"):
        path = Path(out_dir) / f"{name}.{ext}"
        if path.is_file():
            return path
    return None


def read_frame(path: Path):
    import pandas as pd

    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        head = pd.read_csv(path, nrows=0).columns
        return pd.read_csv(path, dtype={c: str for c in STRING_COLUMNS if c in head}, keep_default_na=False,
                           na_values={c: [""] for c in head if c not in STRING_COLUMNS})
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read results table: {e}", file=str(path)) from None


def csv_to_parquet(out_dir) -> None:
    """Each table of ``out_dir`` as Parquet in place of its CSV."""
    for name in TABLES:
        path = Path(out_dir) / f"{name}.csv"
        if path.is_file():
            read_frame(path).to_parquet(path.with_suffix(".parquet"), index=False)
            path.unlink()


def parquet_rows(path: Path) -> tuple[list[str], list[dict]]:
    """A Parquet table as CSV-like rows (every value as text, missing as ""), so the CSV readers'
    checks and conversions apply unchanged."""
    frame = read_frame(path)
    cols = [str(c) for c in frame.columns]
    rows = []
    for rec in frame.to_dict("records"):
        rows.append({c: _text(rec[c]) for c in cols})
    return cols, rows


def _text(v) -> str:
    v = v.item() if hasattr(v, "item") else v
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))  # a whole column with a gap reads back as floats: keep counts whole
    return v if isinstance(v, str) else repr(v)
