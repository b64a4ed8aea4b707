"""Trace readers: one module per format, each returning a ``TraceLoad``.

``read_trace(path, fmt="auto")`` picks the reader from the file's header (or first JSON
object, or the PAI file name); docs/trace-formats.md describes every format.  Formats are the
``trace format`` ``Registry``: a plugin reader (entry-point group ``dlsched.readers``, or
``--format file.py:read_x``) is ``read(path, skip_bad_rows=False, **options) -> TraceLoad``; one
with a ``columns`` attribute (a set of header names) is detected from a CSV header too.
"""

from __future__ import annotations

import csv
from importlib import import_module
from pathlib import Path
from typing import Callable

from dlsched.errors import InputError
from dlsched.registry import Registry
from dlsched.workload.readers._common import (DEFAULT_MODEL_BY_GPUS, SkippedRow, TraceLoad, model_for_gpus,
                                              open_text)

# format -> (module of this package, its reader).  A reader's module is imported when a trace of
# its format is read: a run reads one format and need not pay for the others' imports.
_HOMES: dict[str, tuple[str, str]] = {
    "dlsched": ("plain", "read_dlsched"),
    "arena": ("arena", "read_arena"),
    "gavel": ("gavel", "read_gavel"),
    "blox": ("blox", "read_blox"),
    "philly": ("philly", "read_philly"),
    "philly-subset": ("philly", "read_philly_subset"),
    "helios": ("helios", "read_helios"),
    "pai": ("pai", "read_pai"),
    "lingjun": ("lingjun", "read_lingjun"),
}
_EXPORTS = {fn: mod for mod, fn in _HOMES.values()} | {"parse_job_type": "gavel"}


def _check(obj) -> str | None:
    return None if callable(obj) else f"{obj!r} cannot be called to read a trace"


READERS_BY_NAME: Registry[Callable[..., TraceLoad]] = Registry("trace format", "dlsched.readers", "--format",
                                                               check=_check)
for _fmt, (_module, _fn) in _HOMES.items():
    READERS_BY_NAME.add(_fmt, f"dlsched.workload.readers.{_module}:{_fn}")


def reader(fmt: str) -> Callable[..., TraceLoad] | None:
    """The reader of a format: built-in, installed plugin or reference (None if there is no such format)."""
    return READERS_BY_NAME.get(fmt) if fmt in READERS_BY_NAME else None


def __getattr__(name: str):
    if name == "READERS":  # every format's reader, as a dict (imports every reader module)
        return {fmt: reader(fmt) for fmt in _HOMES}
    if name in _EXPORTS:
        return getattr(import_module(f"dlsched.workload.readers.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'dlsched.workload.readers' has no attribute {name!r}")


# Header columns that identify a CSV format, most specific first.
_SIGNATURES: tuple[tuple[str, frozenset[str]], ...] = (
    ("arena", frozenset({"submit_rel_s", "param_num", "iterations_sim"})),
    ("gavel", frozenset({"total_steps", "job_type"})),
    ("blox", frozenset({"duration_s", "job_type", "submit_time_s"})),
    ("helios", frozenset({"jobname", "gpu_num", "vc", "submit_time"})),
    ("dlsched", frozenset({"job_id", "submit_time", "model", "num_gpus"})),
    ("lingjun", frozenset({"job_type", "start_time", "end_time"})),
)


def detect_format(path: str | Path) -> str:
    """The format of a trace file, from its first line (or first JSON object, or PAI file name)."""
    path = Path(path)
    with open_text(path, str(path)) as f:  # clear errors for directories, gzip, binary files
        head = f.read(65536)
    if "pai_task_table" in path.name:
        return "pai"
    stripped = head.lstrip()
    if not stripped:
        raise InputError("empty file", file=str(path), line=1)
    if stripped.startswith("{"):
        raise InputError("expected a JSON list of jobs ([...]), found a single object", file=str(path), line=1)
    if stripped.startswith("["):
        keys = _first_json_keys(path)
        if not keys:
            raise InputError("empty JSON list: no jobs", file=str(path), line=1)
        if "jobid" in keys:
            return "philly"
        if {"id", "runtime"} <= keys:
            return "philly-subset"
        raise InputError(f"JSON trace with unknown fields {sorted(keys)}", file=str(path), line=1)
    first = next(csv.reader([head.splitlines()[0]]), [])
    cols = {c.strip() for c in first}
    found = next(((name, len(needed)) for name, needed in _SIGNATURES if needed <= cols), (None, 0))
    for name in READERS_BY_NAME.plugins():  # an installed reader that names its header wins if more specific
        needed = getattr(READERS_BY_NAME.get(name), "columns", None)
        if needed and set(needed) <= cols and len(needed) > found[1]:
            found = (name, len(needed))
    if found[0] is not None:
        return found[0]
    raise InputError(f"cannot tell the trace format from the header {sorted(cols)}{_closest(cols)}; "
                     f"pass fmt= one of {', '.join(READERS_BY_NAME.names())}", file=str(path), line=1)


def _closest(cols: set[str]) -> str:
    """' (closest: gavel, lacks total_steps)' when most of a format's signature columns are there."""
    if len(cols) == 1 and any(d in next(iter(cols)) for d in ";\t|"):
        return " (the file does not look comma-separated)"
    scores = {name: len(needed & cols) / len(needed) for name, needed in _SIGNATURES}
    best = max(scores.values())
    if best < 0.5:
        return ""
    near = [f"{name}, lacks {', '.join(sorted(needed - cols))}" for name, needed in _SIGNATURES
            if scores[name] == best]
    return f" (closest: {'; '.join(near)})"


def _first_json_keys(path: Path) -> set[str]:
    from dlsched.workload.readers._common import json_records
    for row in json_records(path, str(path)):
        return set(row.data)
    return set()


def read_trace(path: str | Path, fmt: str = "auto", skip_bad_rows: bool = False, **options) -> TraceLoad:
    """Read a trace in any supported format; ``options`` go to the format's reader.

    Bad rows raise ``InputError`` naming file, line and field, unless ``skip_bad_rows``; then
    they are listed in ``TraceLoad.skipped`` with the reason.  Submit times are relative to
    the first submission.
    """
    if fmt in (None, "", "auto"):
        fmt = detect_format(path)
    read = READERS_BY_NAME.get(fmt)  # an unknown name raises, listing the formats
    if not Path(path).exists():
        raise InputError("no such file", file=str(path))
    if Path(path).is_dir():
        raise InputError("is a directory, not a trace file", file=str(path))
    return read(path, skip_bad_rows=skip_bad_rows, **options)


__all__ = ["DEFAULT_MODEL_BY_GPUS", "READERS", "SkippedRow", "TraceLoad", "detect_format", "model_for_gpus",
           "parse_job_type", "read_arena", "read_blox", "read_dlsched", "read_gavel", "read_helios",
           "read_lingjun", "read_pai", "read_philly", "read_philly_subset", "read_trace"]
