"""Measured performance tables (profiles): what the perf model is calibrated and validated on.

Five CSV formats, told apart by their header as traces are (``detect_profile``):

- ``iterations`` (iter_time_s, status, gpus_per_node, nodes): the measured iteration
  time of a job's best plan on a placement (``status`` ok / oom);
- ``plans`` (plan_pp_dp_mp, compute_s, iter_time_s): an estimated plan (pipeline x
  data x tensor degree) and its compute / communication split;
- ``dp-memory`` (per_gpu_mem_gb, gpus): per-GPU memory of a data-parallel replica;
- ``colocated`` (other_job_type, steps_per_s, other_steps_per_s): two jobs packed on
  the same GPU(s), each one's throughput;
- ``unconsolidated`` (steps_per_s_unconsolidated): a job's throughput with its
  workers spread over servers.

The first three are the Crius authors' Alpa tables, the last two Gavel's
(``../shared/anchors/profiles/README.md``); a user's own measurements in the
same columns read the same way, and ``write_iterations`` writes the first
format (the live runtime uses it, so a live run can calibrate the simulator).

This is the one reader of these tables: the calibration reads its rows, and
the replays build their look-up tables from them (``perf.measured.arena`` for
the iteration-time and DP-memory tables, ``perf.measured.colocated`` for the
co-located one).  GPU names are resolved to dlsched's canonical GPU types.

Rows are typed dataclasses; a bad field raises ``InputError`` naming the file,
line and field.  Model names are *not* checked against the zoo here: a table
may hold sizes the zoo lacks (the calibration skips those rows and says so).
"""

from __future__ import annotations

import csv
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Union

from dlsched.errors import InputError
from dlsched.workload.readers._common import Row, csv_header, csv_rows


@dataclass(frozen=True, slots=True)
class IterationRow:
    """A measured iteration time of a job's best plan on ``nodes`` x ``gpus_per_node`` GPUs."""

    model: str
    param: str
    batch: int
    gpu_type: str  # canonical dlsched GPU type name (e.g. "A100-40G")
    nodes: int
    gpus_per_node: int
    iter_time_s: float | None  # None when the run did not fit in memory
    line: int

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def oom(self) -> bool:
        return self.iter_time_s is None


@dataclass(frozen=True, slots=True)
class PlanRow:
    """An estimated plan: ``pp`` stages x ``dp`` data x ``tp`` tensor degree, split into its costs."""

    model: str
    param: str
    batch: int
    gpu_type: str
    nodes: int
    gpus_per_node: int
    pp: int
    dp: int
    tp: int
    compute_s: float
    intra_comm_s: float
    inter_comm_s: float
    iter_time_s: float  # math.inf when the plan does not fit in memory
    line: int

    @property
    def dp_only(self) -> bool:
        return self.pp == 1 and self.tp == 1

    @property
    def gpus(self) -> int:
        return self.pp * self.dp * self.tp


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """Per-GPU memory (bytes) of a pure data-parallel replica on ``gpus`` GPUs."""

    model: str
    param: str
    batch: int
    gpus: int
    bytes_per_gpu: float | None  # None: out of memory; 0: a 0 entry (no figure; the authors' check passes it)
    line: int
    per_gpu_mem_gb: float | None = None  # the figure as written (the replay's check uses it unconverted)


@dataclass(frozen=True, slots=True)
class ColocatedRow:
    """Two jobs packed on the same GPU(s): each one's worker steps per second while sharing."""

    gpu_type: str
    job_type: str
    scale_factor: int
    other_job_type: str
    other_scale_factor: int
    steps_per_s: float  # 0: the pair does not run together
    other_steps_per_s: float
    line: int


@dataclass(frozen=True, slots=True)
class UnconsolidatedRow:
    """A job's worker steps per second with its workers spread over servers."""

    gpu_type: str
    job_type: str
    scale_factor: int
    steps_per_s: float
    line: int


ProfileRow = Union[IterationRow, PlanRow, MemoryRow, ColocatedRow, UnconsolidatedRow]


@dataclass(frozen=True, slots=True)
class ProfileTable:
    """One file's rows, its kind, and its identity (sha256 of the bytes read, for provenance)."""

    kind: str
    source: str
    sha256: str
    rows: tuple

    def __len__(self) -> int:
        return len(self.rows)


# ----------------------------------------------------------------------------- rows


def _status_oom(row: Row) -> bool:
    status = row.str("status", "ok").lower()
    if status not in ("ok", "oom"):
        raise row.error(f"status must be ok or oom, got {status!r}", "status")
    return status == "oom"


def _arena_key(row: Row) -> tuple[str, str, int]:
    # param may be empty: a zoo model without sizes (what a live run of such a model writes)
    return row.str("model").lower(), row.str("param", ""), row.int("batch_size", minimum=1)


def _gpu(row: Row, name: str) -> str:
    found = row.gpu_type(name)
    if found is None:
        raise row.error("missing value", name)
    return found


def _iteration(row: Row) -> IterationRow:
    model, param, batch = _arena_key(row)
    nodes = row.int("nodes", minimum=1)
    gpn = row.int("gpus_per_node", minimum=1)
    if row.has("gpus") and row.int("gpus", minimum=1) != nodes * gpn:
        raise row.error(f"gpus {row.str('gpus')} is not nodes x gpus_per_node = {nodes * gpn}", "gpus")
    t = None
    if _status_oom(row):
        if row.has("iter_time_s"):
            raise row.error("an oom row has no iteration time", "iter_time_s")
    else:
        t = row.float("iter_time_s")
        if t <= 0:
            raise row.error("iteration time must be positive", "iter_time_s")
    return IterationRow(model, param, batch, _gpu(row, "gpu_type"), nodes, gpn, t, row.line)


def _plan(row: Row) -> PlanRow:
    model, param, batch = _arena_key(row)
    label = row.str("plan_pp_dp_mp")
    parts = label.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise row.error(f"expected PPxDPxMP with positive integers (e.g. 2x4x1), got {label!r}", "plan_pp_dp_mp")
    pp, dp, tp = (int(p) for p in parts)
    nodes = row.int("nodes", minimum=1)
    gpn = row.int("gpus_per_node", minimum=1)
    # The authors' table holds plans whose degrees multiply to more GPUs than nodes x gpus_per_node
    # (104 of 2,228 rows, e.g. 1x1x4 on 1 x 2); kept as read, grouped by the plan's own GPU count.
    raw = row.str("iter_time_s").lower()
    t = math.inf if raw == "inf" else row.float("iter_time_s")
    if t <= 0:
        raise row.error("iteration time must be positive (or inf: out of memory)", "iter_time_s")

    def part(name: str) -> float:  # an OOM plan may carry inf (or nan: inf - inf) parts too
        raw = row.str(name).lower()
        if raw in ("inf", "nan") and math.isinf(t):
            return math.inf
        return row.float(name)
    return PlanRow(model, param, batch, _gpu(row, "gpu_type"), nodes, gpn, pp, dp, tp, part("compute_s"),
                   part("intra_stage_comm_s"), part("inter_stage_comm_s"), t, row.line)


def _memory(row: Row) -> MemoryRow:
    model, param, batch = _arena_key(row)
    gpus = row.int("gpus", minimum=1)
    gb = None if _status_oom(row) else row.float("per_gpu_mem_gb", minimum=0.0)
    return MemoryRow(model, param, batch, gpus, None if gb is None else gb * 1e9, row.line, gb)


def _positive(row: Row, name: str) -> float:
    # 0 is Gavel's mark for "does not run" (e.g. out of memory when packed): kept, the fit skips it
    return row.float(name, minimum=0.0)


def _colocated(row: Row) -> ColocatedRow:
    return ColocatedRow(_gpu(row, "gpu"), row.str("job_type"), row.int("scale_factor", minimum=1),
                        row.str("other_job_type"), row.int("other_scale_factor", minimum=1),
                        _positive(row, "steps_per_s"), _positive(row, "other_steps_per_s"), row.line)


def _unconsolidated(row: Row) -> UnconsolidatedRow:
    return UnconsolidatedRow(_gpu(row, "gpu"), row.str("job_type"), row.int("scale_factor", minimum=1),
                             _positive(row, "steps_per_s_unconsolidated"), row.line)


# kind -> (signature columns that identify it, required columns, row parser); most specific first
_KINDS: dict[str, tuple[frozenset[str], tuple[str, ...], Callable[[Row], ProfileRow]]] = {
    "plans": (frozenset({"plan_pp_dp_mp", "compute_s", "iter_time_s"}),
              ("model", "param", "batch_size", "gpu_type", "nodes", "gpus_per_node", "plan_pp_dp_mp",
               "compute_s", "intra_stage_comm_s", "inter_stage_comm_s", "iter_time_s"), _plan),
    "iterations": (frozenset({"iter_time_s", "status", "gpus_per_node", "nodes"}),
                   ("model", "param", "batch_size", "gpu_type", "nodes", "gpus_per_node", "iter_time_s",
                    "status"), _iteration),
    "dp-memory": (frozenset({"per_gpu_mem_gb", "gpus"}),
                  ("model", "param", "batch_size", "gpus", "per_gpu_mem_gb", "status"), _memory),
    "colocated": (frozenset({"other_job_type", "steps_per_s", "other_steps_per_s"}),
                  ("gpu", "job_type", "scale_factor", "other_job_type", "other_scale_factor", "steps_per_s",
                   "other_steps_per_s"), _colocated),
    "unconsolidated": (frozenset({"steps_per_s_unconsolidated"}),
                       ("gpu", "job_type", "scale_factor", "steps_per_s_unconsolidated"), _unconsolidated),
}
PROFILE_KINDS = tuple(_KINDS)


def profile_kind(header: Iterable[str]) -> str | None:
    """The kind of a profile table with these columns, or None when it is none of them."""
    cols = set(header)
    for kind, (needed, _, _) in _KINDS.items():
        if needed <= cols:
            return kind
    return None


def detect_profile(path: str | Path) -> str:
    """The kind of a profile table, from its header (``InputError`` at line 1 if none matches)."""
    source = str(path)
    cols = set(csv_header(Path(path), source))
    kind = profile_kind(cols)
    if kind is not None:
        return kind
    raise InputError(f"not a profile table: the header {sorted(cols)} matches none of "
                     f"{', '.join(PROFILE_KINDS)} (see dlsched.workload.readers.profiles)", file=source, line=1)


def read_profile(path: str | Path, kind: str = "auto") -> ProfileTable:
    """Read one profile table; every bad row raises ``InputError`` (file, line, field)."""
    p = Path(path)
    source = str(path)
    if not p.exists():
        raise InputError("no such file", file=source)
    if p.is_dir():
        raise InputError("is a directory, not a profile table", file=source)
    if kind in ("", "auto", None):
        kind = detect_profile(p)
    if kind not in _KINDS:
        raise InputError(f"unknown profile kind {kind!r}; known: {', '.join(PROFILE_KINDS)}", field="kind")
    _, required, parse = _KINDS[kind]
    rows = []
    for row in csv_rows(p, source, required=required):
        row.check()
        rows.append(parse(row))
    if not rows:
        raise InputError("no rows", file=source, line=2)
    return ProfileTable(kind, source, hashlib.sha256(p.read_bytes()).hexdigest(), tuple(rows))


# ----------------------------------------------------------------------------- writing

ITERATION_COLUMNS = ("model", "param", "batch_size", "gpu_type", "nodes", "gpus_per_node", "gpus", "iter_time_s",
                     "status")


def write_iterations(path: str | Path, rows: Iterable[IterationRow]) -> int:
    """Write iteration rows in the ``iterations`` format (what ``read_profile`` reads back); returns the count."""
    n = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(ITERATION_COLUMNS)
        for r in rows:
            t = "" if r.iter_time_s is None else f"{r.iter_time_s:.6f}"
            w.writerow((r.model, r.param, r.batch, r.gpu_type, r.nodes, r.gpus_per_node, r.gpus, t,
                        "oom" if r.oom else "ok"))
            n += 1
    return n
