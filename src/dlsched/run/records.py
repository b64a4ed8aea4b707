"""A prepared job list as plain records: one JSON object per job, its keys ``JobSpec``'s fields.

A reproduction or a live replay builds its jobs in code (a window of a trace, arrivals moved,
deadlines set, requests the live run made); a ``RunSpec`` names them as these records, inline
(``workload.records``) or in a JSON file (``workload.jobs_file``: a list of records, or an
object with a ``"jobs"`` list), so the run reruns from its spec alone.

Records are checked strictly (an unknown key or a wrong type is an ``InputError`` naming
``records[i].key``) and keep numbers as given: an integer submit time stays an integer, so a
list written and read back prices, sizes and prints exactly as the list it came from.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from dlsched.errors import InputError
from dlsched.workload.job import JobSpec

_NUMBER = (int, float)
# field -> (accepted types, may be null); "number" fields keep an int an int (see the docstring)
_TYPES: dict[str, tuple[tuple[type, ...], bool]] = {
    "job_id": ((str,), False), "submit_time": (_NUMBER, False), "model": ((str,), False),
    "num_gpus": ((int,), False), "batch_size": ((int,), False), "total_iterations": ((int,), True),
    "duration_s": (_NUMBER, True), "gpu_type": ((str,), True), "deadline": (_NUMBER, True),
    "params": ((str,), True), "elastic": ((bool,), False), "priority": ((int,), False), "extra": ((dict,), False),
}
_DEFAULTS = {f.name: (f.default if f.default is not MISSING else f.default_factory())
             for f in fields(JobSpec) if f.default is not MISSING or f.default_factory is not MISSING}
_REQUIRED = tuple(f.name for f in fields(JobSpec) if f.name not in _DEFAULTS)
assert set(_TYPES) == {f.name for f in fields(JobSpec)}, "a JobSpec field has no record type"


def _plain(value):
    """A number as a Python scalar (a NumPy scalar's ``item()``), so it writes as JSON."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (dict, list, str)) else value


def to_record(job: JobSpec) -> dict:
    """The job's fields that differ from ``JobSpec``'s defaults (the required ones always)."""
    out = {}
    for name in _TYPES:
        value = getattr(job, name)
        if name in _REQUIRED or value != _DEFAULTS[name]:
            out[name] = {k: _plain(v) for k, v in value.items()} if name == "extra" else _plain(value)
    return out


def to_records(jobs) -> list[dict]:
    return [to_record(j) for j in jobs]


def check_records(records: Any, path: str = "records", where: str | None = None) -> None:
    """Raise an ``InputError`` naming ``path[i].key`` for the first record that is not a job."""
    if not isinstance(records, (list, tuple)):
        raise InputError(f"{path} must be a list of job records, got {type(records).__name__}", file=where,
                         field=path)
    for i, rec in enumerate(records):
        at = f"{path}[{i}]"
        if not isinstance(rec, dict):
            raise InputError(f"{at} must be a mapping of JobSpec fields, got {type(rec).__name__}", file=where,
                             field=at)
        unknown = sorted(set(rec) - set(_TYPES), key=str)
        if unknown:
            raise InputError(f"unknown key {unknown[0]!r} in {at} (known: {', '.join(_TYPES)})", file=where,
                             field=f"{at}.{unknown[0]}")
        for name in _REQUIRED:
            if name not in rec:
                raise InputError(f"missing key {name!r} in {at}", file=where, field=f"{at}.{name}")
        for name, value in rec.items():
            kinds, nullable = _TYPES[name]
            ok = (value is None and nullable) or (isinstance(value, kinds) and
                                                 (bool in kinds or not isinstance(value, bool)))
            if not ok:
                what = "/".join(k.__name__ for k in kinds) + (" or null" if nullable else "")
                raise InputError(f"{at}.{name} must be {what}, got {value!r}", file=where, field=f"{at}.{name}")
        if (rec.get("total_iterations") is None) == (rec.get("duration_s") is None):
            raise InputError(f"{at}: give exactly one of total_iterations and duration_s", file=where,
                             field=f"{at}.duration_s")


def from_records(records: list[dict]) -> list[JobSpec]:
    """Jobs from records already checked (``check_records``); each gets its own ``extra`` dict."""
    return [JobSpec(**{**r, "extra": dict(r.get("extra") or {})}) for r in records]


def read_jobs_file(path: str) -> list[dict]:
    """The records of a jobs file (a JSON list, or an object whose ``"jobs"`` is one), checked."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(f"cannot read the jobs file: {e.strerror}", file=path, field="workload.jobs_file") from None
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", file=path, line=e.lineno) from None
    if isinstance(doc, dict) and set(doc) == {"jobs"}:
        doc = doc["jobs"]
    check_records(doc, "jobs", where=path)
    return doc


def write_jobs_file(path: str | Path, jobs) -> Path:
    """Write ``jobs`` as a jobs file (one record a line, so a diff shows which job changed)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(" " + json.dumps(r, sort_keys=True) for r in to_records(jobs))
    p.write_text('{"jobs": [\n' + lines + "\n]}\n")
    return p
