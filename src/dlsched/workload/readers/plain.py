"""The plain dlsched CSV format (docs/trace-formats.md).

Header names the columns, in any order:
``job_id,submit_time,model,num_gpus[,batch_size][,iterations|duration][,gpu_type][,elastic]
[,deadline][,priority][,user][,params]``.  Each row gives exactly one of ``iterations`` and
``duration`` (seconds).  ``submit_time`` and ``deadline`` are seconds; ``deadline`` is
absolute on the same clock as ``submit_time``.  A missing ``batch_size`` means the model's
per-GPU default times ``num_gpus``.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import Row, RowLoop, TraceLoad, csv_header, csv_rows

REQUIRED = ("job_id", "submit_time", "model", "num_gpus")
SIZE_FIELDS = ("iterations", "duration", "duration_s")
OPTIONAL = ("batch_size", "gpu_type", "elastic", "deadline", "priority", "user", "params")
KNOWN = REQUIRED + SIZE_FIELDS + OPTIONAL


def check_columns(header: list[str], source: str) -> None:
    """An unknown column is never silently ignored: one close to a known name is a typo and an
    error (``gpu_tpye`` would leave every job unpinned); any other is named in a warning."""
    import sys

    from dlsched.errors import InputError, did_you_mean

    for name in header:
        if name in KNOWN or not name:
            continue
        hint = did_you_mean(name, KNOWN)
        if hint:
            raise InputError(f"unknown column '{name}'{hint}; known: {', '.join(KNOWN)}", file=source, line=1,
                             field=name)
        print(f"dlsched: warning: {source}, line 1: column '{name}' is not a dlsched column and is not read "
              f"(known: {', '.join(KNOWN)})", file=sys.stderr)


def parse_row(row: Row) -> JobSpec:
    model = row.model("model", row.str("model"), row.str("params", "") or None)
    num_gpus = row.int("num_gpus", minimum=1)
    submit = row.float("submit_time")
    given = [f for f in SIZE_FIELDS if row.has(f)]
    if len(given) != 1:
        why = "missing value" if not given else f"give only one of {', '.join(given)}"
        raise row.error(f"{why} (one of iterations, duration)", "iterations")
    if given[0] == "iterations":
        iters, dur = row.int("iterations", minimum=1), None
    else:
        iters, dur = None, row.duration(given[0])
    default_batch = get_model(model, row.str("params", "") or None).default_batch * num_gpus
    deadline = row.float("deadline") if row.has("deadline") else None
    if deadline is not None and deadline < submit:
        raise row.error(f"deadline {deadline:g} is before submit_time {submit:g}", "deadline")
    return JobSpec(row.str("job_id"), submit, model, num_gpus,
                   batch_size=row.int("batch_size", minimum=1, default=default_batch),
                   total_iterations=iters, duration_s=dur, gpu_type=row.gpu_type("gpu_type"),
                   deadline=deadline, params=row.str("params", "") or None,
                   elastic=row.bool("elastic"), priority=row.int("priority", minimum=None, default=0),
                   extra={"user": row.str("user", "")})


def read_dlsched(path: str | Path, *, skip_bad_rows: bool = False) -> TraceLoad:
    source = str(path)
    check_columns(csv_header(Path(path), source), source)
    rows = csv_rows(Path(path), source, required=REQUIRED)
    loop = RowLoop(source, skip_bad_rows)
    return loop.result(loop.run(rows, parse_row))
