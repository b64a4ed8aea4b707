"""Traces of the Crius authors' simulator (sjtu-epcc/arena): arena-philly.csv, arena-helios.csv.

Columns: ``job_id,submit_time_s,submit_rel_s,num_gpus,gpu_type,model,param_num,iterations,
iterations_sim,batch_size,deadline_s``.  ``model`` is a Crius family (bert, moe, wide_resnet)
and ``param_num`` its size ("760M", "1.3B"); together they name a large-zoo model.  The job's
size is ``iterations_sim`` (the shortened count arena simulates) unless
``iterations="full"``.  ``deadline_s`` is absolute on the ``submit_time_s`` clock, so it is
moved to the relative clock: deadline - (submit_time_s - submit_rel_s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from dlsched.workload.job import JobSpec
from dlsched.workload.readers._common import Row, RowLoop, TraceLoad, csv_rows


def read_arena(path: str | Path, *, skip_bad_rows: bool = False,
               iterations: Literal["sim", "full"] = "sim") -> TraceLoad:
    source = str(path)
    size_field = {"sim": "iterations_sim", "full": "iterations"}[iterations]

    # the trace names a few (model, size) pairs and GPU types over and over: each is looked up
    # once per read (a failed lookup raises on every row that has it, naming that row)
    zoo_names: dict[tuple[str, str], str] = {}
    gpu_names: dict[str | None, str | None] = {}

    def gpu_of(row: Row) -> str | None:
        raw = row.data.get("gpu_type")
        if raw not in gpu_names:
            gpu_names[raw] = row.gpu_type("gpu_type")
        return gpu_names[raw]

    def parse(row: Row) -> JobSpec:
        variant = row.str("param_num")
        key = (row.str("model"), variant)
        model = zoo_names.get(key)
        if model is None:
            model = zoo_names[key] = row.model("model", key[0], variant)
        rel = row.float("submit_rel_s")
        absolute = row.float("submit_time_s")
        deadline = None
        if row.has("deadline_s"):
            deadline = row.float("deadline_s") - (absolute - rel)
            if deadline < rel:
                raise row.error("deadline is before the submission", "deadline_s")
        return JobSpec(row.str("job_id"), rel, model, row.int("num_gpus", minimum=1),
                       batch_size=row.int("batch_size", minimum=1),
                       total_iterations=row.int(size_field, minimum=1),
                       gpu_type=gpu_of(row), deadline=deadline, params=variant,
                       extra={"iterations_full": row.data.get("iterations"),
                              "iterations_sim": row.data.get("iterations_sim")})

    loop = RowLoop(source, skip_bad_rows)
    required = ("job_id", "submit_time_s", "submit_rel_s", "num_gpus", "model", "param_num", "batch_size",
                size_field)
    return loop.result(loop.run(csv_rows(Path(path), source, required=required), parse))
