"""Replay a peer's measured throughputs: jobs run at the speeds the peer's simulator used.

``--throughputs PATH`` wraps whatever perf model is configured in ``ReplayPerfModel``.
Every policy and engine prices allocations through the perf model, so all of them see
the peer's speeds; the wrapped model answers only where the table has no entry, and those
look-ups are counted (``describe()`` -> ``summary.json`` under ``params.replay``).

Table format: Gavel's (Narayanan et al., OSDI'20) per-(job type, scale factor, GPU type)
throughputs in worker steps per second, as shipped in
``../shared/anchors/traces/gavel-simulation-throughputs-isolated.csv``
(``job_type,scale_factor,<gpu>_steps_per_s,...``), or Gavel's own JSON
(``{"v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.39, ...}}}``, the isolated
``"null"`` entry only).  The format is detected from the file's first character and header.

Semantics (see ``dlsched.workload.readers.gavel``): Gavel's throughput for an n-worker job
is the sum of its workers' steps, and one dlsched iteration is one synchronous step of the
whole job, so an iteration takes ``n / steps_per_s`` seconds.

Matching a job to a row: the job's own ``extra["job_type"]`` (Gavel's traces keep it);
otherwise the row whose name maps to the job's zoo model with the job's per-worker batch
(``batch_size / num_gpus``), so Blox's and other traces replay too when the model is in
the table.  The scale factor is the number of GPUs allocated.

Simplifications, each counted or stated:
- a 0 in the table (Gavel's mark for "does not run there", e.g. out of memory) is treated
  as no entry, and the wrapped model prices it (counted under ``zero_entries``): a policy
  that does not read the table may still place such a job there, and an error would end
  the run;
- an allocation spanning GPU types runs at the slowest type's entry (synchronous data
  parallelism is paced by the slowest worker); Gavel itself never mixes types;
- the table gives no compute/communication split: the replayed cost is all compute;
- packing interference: Gavel's co-location table when given (``colocated.py``, two jobs at
  their measured packed / isolated speeds), else, and for pairs it lacks, the wrapped model's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from dlsched.errors import InputError, UnknownNameError
from dlsched.perf.base import IterCost, PerfModel
from dlsched.workload.job import JobSpec

_COLUMN = re.compile(r"^(?P<gpu>.+)_steps_per_s$")
_JSON_KEY = re.compile(r"^\(\s*'(?P<job>.*)'\s*,\s*(?P<n>\d+)\s*\)$")


@dataclass(frozen=True)
class ThroughputTable:
    """Measured worker steps per second by (job type, scale factor, GPU type in lower case)."""

    source: str
    steps_per_s: dict[tuple[str, int, str], float]
    gpu_types: tuple[str, ...]
    # (zoo model, per-worker batch) -> job type, for jobs that do not carry Gavel's job_type
    by_model: dict[tuple[str, int], str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.steps_per_s)

    @property
    def job_types(self) -> frozenset[str]:
        return frozenset(j for j, _, _ in self.steps_per_s)


def read_throughputs(path: str | Path) -> ThroughputTable:
    """Read a throughput table (Gavel's CSV or JSON, detected from the content)."""
    from dlsched.inputfile import read_head

    source = str(path)
    head = read_head(Path(path), source, "throughput table").decode("latin-1").lstrip()
    if not head:
        raise InputError("empty file", file=source, line=1)
    rows = _read_json(Path(path), source) if head.startswith("{") else _read_csv(Path(path), source)
    if not rows:
        raise InputError("no throughputs in the table", file=source, line=1)
    gpus = tuple(sorted({g for _, _, g in rows}))
    return ThroughputTable(source, rows, gpus, _model_index(rows))


def _read_csv(path: Path, source: str) -> dict[tuple[str, int, str], float]:
    from dlsched.workload.readers._common import csv_header, csv_rows

    header = csv_header(path, source)
    gpu_cols = {c: m.group("gpu").strip().lower() for c in header if (m := _COLUMN.match(c))}
    missing = [c for c in ("job_type", "scale_factor") if c not in header]
    if missing or not gpu_cols:
        need = ", ".join(missing) if missing else "a <gpu>_steps_per_s column"
        raise InputError(f"not a throughput table: lacks {need} (Gavel's format is "
                         "job_type,scale_factor,v100_steps_per_s,...)", file=source, line=1)
    out: dict[tuple[str, int, str], float] = {}
    for row in csv_rows(path, source, required=("job_type", "scale_factor")):
        row.check()
        job, n = row.str("job_type"), row.int("scale_factor", minimum=1)
        for col, gpu in gpu_cols.items():
            key = (job, n, gpu)
            if key in out:
                raise row.error(f"duplicate entry for {job!r} at scale factor {n} on {gpu}", col)
            out[key] = row.float(col, minimum=0.0)
            if (why := implausible_throughput(out[key])) is not None:
                raise row.error(why, col)
    return out


# A measured rate outside these is a unit slip or a typo: one step per 11.6 days, or a million a second.
# 0 stays allowed: the peers' tables write it for a job a GPU type cannot run.
THROUGHPUT_BOUNDS = (1e-6, 1e6)


def implausible_throughput(value: float) -> str | None:
    lo, hi = THROUGHPUT_BOUNDS
    if value == 0 or lo <= value <= hi:
        return None
    return f"implausible throughput {value:g} steps/s (a measured rate lies in [{lo:g}, {hi:g}], or 0 for none)"


def _read_json(path: Path, source: str) -> dict[tuple[str, int, str], float]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", None)
        raise InputError(f"malformed JSON: {e}", file=source, line=line) from None
    if not isinstance(doc, dict):
        raise InputError("expected Gavel's throughputs object {gpu: {\"('job', n)\": {\"null\": steps/s}}}",
                         file=source)
    out: dict[tuple[str, int, str], float] = {}
    for gpu, jobs in doc.items():
        if not isinstance(jobs, dict):
            raise InputError(f"GPU type {gpu!r}: expected an object of job types", file=source, field=gpu)
        for key, entry in jobs.items():
            m = _JSON_KEY.match(key)
            where = f"{gpu}/{key}"
            if m is None:
                raise InputError(f"job key {key!r} is not of the form \"('job type', scale factor)\"",
                                 file=source, field=where)
            value = entry.get("null") if isinstance(entry, dict) else None
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
                raise InputError(f"expected a non-negative isolated throughput under \"null\", got {value!r}",
                                 file=source, field=where)
            if (why := implausible_throughput(float(value))) is not None:
                raise InputError(why, file=source, field=where)
            out[(m.group("job"), int(m.group("n")), gpu.strip().lower())] = float(value)
    return out


def _model_index(rows) -> dict[tuple[str, int], str]:
    """Map each row's job type to (zoo model, per-worker batch), where the zoo knows the name."""
    from dlsched.workload.models import get_model
    from dlsched.workload.readers.gavel import parse_job_type

    out: dict[tuple[str, int], str] = {}
    for job in sorted({j for j, _, _ in rows}):
        name, batch = parse_job_type(job)
        try:
            model = get_model(name)
        except UnknownNameError:
            continue
        out.setdefault((model.name, batch or model.default_batch), job)
    return out


def _gpu_key(name: str) -> tuple[str, ...]:
    """Table names to try for a cluster GPU type: 'V100' -> ('v100',), 'A100-40G' -> (.., 'a100')."""
    low = name.lower()
    base = low.split("-")[0]
    return (low,) if base == low else (low, base)


class ReplayPerfModel(PerfModel):
    """Prices jobs from a measured throughput table, falling back to ``base`` (counted)."""

    def __init__(self, base: PerfModel, table: ThroughputTable, colocated=None):
        super().__init__(base.cluster)
        self.base = base
        self.table = table
        self.colocated = colocated  # ColocatedTable or None: packed speeds from Gavel's measurements
        self.packed_hits: set[str] = set()
        self.packed_missing: set[str] = set()
        self.packed_zero_run: set[str] = set()
        c = self.cluster
        self._type_key = [next((k for k in _gpu_key(gt.name) if k in table.gpu_types), None)
                          for gt in c.gpu_types]
        self._cache: dict = {}
        self._job_types: dict[str, str | None] = {}
        self._known = table.job_types
        self.hits: set[tuple[str, int, str]] = set()
        self.missing: set[tuple[str, int, str]] = set()  # (job type, n, GPU type) priced by the base model
        self.zeros: set[tuple[str, int, str]] = set()
        self.fallback_jobs: set[str] = set()
        self.replayed_jobs: set[str] = set()

    def job_type(self, job: JobSpec) -> str | None:
        """The table row name for a job, or None when neither its job_type nor its model is there."""
        jt = self._job_types.get(job.job_id, "")
        if jt == "":
            jt = self._find_job_type(job)
            self._job_types[job.job_id] = jt
        return jt

    def _find_job_type(self, job: JobSpec) -> str | None:
        own = job.extra.get("job_type") if job.extra else None
        if own and own in self._known:
            return own
        from dlsched.workload.models import get_model

        per_worker = job.batch_size // max(1, job.num_gpus)
        return self.table.by_model.get((get_model(job.model, job.params).name, per_worker))

    def steps_per_s(self, job: JobSpec, n: int, type_idx: int) -> float | None:
        """The table's worker steps/s for this job on n GPUs of the cluster's type index.

        None where the table has no entry; 0 where it marks the job as not running there.
        """
        jt = self.job_type(job)
        tk = self._type_key[type_idx]
        if jt is None or tk is None:
            return None
        return self.table.steps_per_s.get((jt, n, tk))

    def price(self, job: JobSpec, gpus: Sequence[int] | np.ndarray, plan=None) -> IterCost:
        g = np.asarray(gpus, dtype=np.int64)
        n = int(g.size)
        types = tuple(sorted({int(t) for t in self.cluster.gpu_type_idx[g]})) if n else ()
        # the replayed cost depends on the job, the count and the types only, not the placement
        key = (job.job_id, n, types)
        cost = self._cache.get(key, False)
        if cost is False:
            cost = self._replayed(job, n, types) if plan is None and n else None
            self._cache[key] = cost
        if cost is None:
            self.fallback_jobs.add(job.job_id)
            return self.base.price(job, g, plan)
        self.replayed_jobs.add(job.job_id)
        return cost

    def _replayed(self, job: JobSpec, n: int, types: tuple[int, ...]) -> IterCost | None:
        jt = self.job_type(job)
        label = jt or (job.extra.get("job_type") if job.extra else None) or job.model
        worst = 0.0
        for t in types:
            tk = self._type_key[t]
            k = (label, n, tk or self.cluster.gpu_types[t].name.lower())
            v = self.table.steps_per_s.get(k) if jt is not None and tk is not None else None
            if v is None:
                self.missing.add(k)
                return None
            if v == 0:
                self.zeros.add(k)
                return None
            self.hits.add(k)
            worst = max(worst, n / v)
        return IterCost(worst, worst, 0.0)

    def packing(self, jobs, gpu_type: str):
        """Whether jobs fit together (the wrapped model's memory check), at Gavel's measured packed
        speeds where the co-location table has the pair (else the wrapped model's, counted)."""
        res = self.base.packing(jobs, gpu_type)
        if not res.feasible or self.colocated is None:
            return res
        measured = self._packed(jobs, gpu_type)
        if measured is None:
            return res
        from dlsched.perf.sharing.interference import PackingResult

        if not all(f > 0 for f in measured):  # Gavel's 0: the pair does not run packed
            return PackingResult(False, (0.0,) * len(jobs), res.memory_bytes, res.capacity_bytes)
        return PackingResult(True, measured, res.memory_bytes, res.capacity_bytes)

    def packing_factors(self, jobs, gpu_type: str) -> list[float]:
        if self.colocated is None:
            return self.base.packing_factors(jobs, gpu_type)
        res = self.packing(jobs, gpu_type)
        if not res.feasible:
            # the memory check raises with its figures; a pair Gavel measured at 0 that a policy
            # packed anyway (without asking ``packing``) runs at the wrapped model's factors, counted
            self.packed_zero_run.add(" + ".join(j.job_id for j in jobs) + f" on {gpu_type}")
            return self.base.packing_factors(jobs, gpu_type)
        return list(res.factors)

    def _packed(self, jobs, gpu_type: str) -> tuple[float, ...] | None:
        """Packed / isolated speed of each of two jobs from Gavel's tables; None (counted) otherwise."""
        t = self.cluster.type_id(gpu_type)
        tk = self._type_key[t]
        kinds = [(self.job_type(j), j.num_gpus) for j in jobs]
        label = " + ".join(f"{jt or j.model} x{n}" for (jt, n), j in zip(kinds, jobs)) + f" on {gpu_type}"
        if len(jobs) != 2 or tk is None or any(jt is None for jt, _ in kinds):
            self.packed_missing.add(label)
            return None
        pair = self.colocated.pair(tk, kinds[0], kinds[1])
        solo = [self.table.steps_per_s.get((jt, n, tk)) for jt, n in kinds]
        if pair is None or any(not s for s in solo):
            self.packed_missing.add(label)
            return None
        self.packed_hits.add(label)
        return tuple(p / s for p, s in zip(pair, solo))

    def for_policy(self, name: str) -> None:
        """Another policy of the same run (``dlsched compare``): its counts start afresh."""
        self.forget_counts()

    def forget_counts(self) -> None:
        """Start the counts afresh: the load-time feasibility check prices every job on every GPU
        type, which is not pricing the run did."""
        for s in (self.replayed_jobs, self.fallback_jobs, self.hits, self.missing, self.zeros, self._cache,
                  self.packed_hits, self.packed_missing, self.packed_zero_run):
            s.clear()

    def describe(self) -> dict:
        def keys(s):
            return [f"{j} x{n} on {g}" for j, n, g in sorted(s)]

        d = dict(self.base.describe())
        d["replay"] = {
            "throughputs": self.table.source, "table_entries": len(self.table),
            "jobs_replayed": len(self.replayed_jobs),
            "jobs_priced_by_model": len(self.fallback_jobs),
            "entries_used": len(self.hits),
            "missing_entries": keys(self.missing),
            "zero_entries": keys(self.zeros),
            "note": "jobs_priced_by_model counts jobs with at least one allocation (run or only "
                    "considered by the policy) that the table could not price",
        }
        if self.colocated is not None:
            d["replay"]["packing"] = {
                "colocated": self.colocated.source, "colocated_entries": len(self.colocated),
                "pairs_measured": len(self.packed_hits),
                "pairs_priced_by_model": sorted(self.packed_missing),
                "zero_pairs_packed_anyway": sorted(self.packed_zero_run),
                "note": "packed speeds: Gavel's co-located / isolated steps per second for two jobs; "
                        "a pair measured at 0 cannot pack; more than two jobs, or a pair or job the "
                        "tables lack, at the wrapped model's",
            }
        return d


def with_throughputs(base: PerfModel, path: str | Path | Sequence[str | Path] | None, *,
                     policy: str | None = None) -> PerfModel:
    """``base`` wrapped in the replay of the given table(s), or ``base`` when none.

    Each path is detected from its header: the Crius authors' iteration-time table (arena
    replay, ``arena_replay.py``), their data-parallel memory table (turns on their memory
    check, with the former), or Gavel's throughput table (CSV or JSON).  ``policy`` picks
    the authors' re-planning charge in the arena replay: Crius's pruned search for ``crius*``,
    the full search otherwise.
    """
    if path is None:
        return base
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        return base
    kinds = [(p, _kind(Path(p), str(p))) for p in paths]
    arena = [p for p, k in kinds if k == "times"]
    memory = [p for p, k in kinds if k == "memory"]
    gavel = [p for p, k in kinds if k == "gavel"]
    coloc = [p for p, k in kinds if k == "colocated"]
    for group, what in ((arena, "iteration-time"), (memory, "memory"), (gavel, "Gavel throughput"),
                        (coloc, "co-location")):
        if len(group) > 1:
            raise InputError(f"more than one {what} table given ({', '.join(map(str, group))})",
                             file=str(group[1]), field="--throughputs")
    if memory and not arena:
        raise InputError("a data-parallel memory table replays only beside the arena iteration-time table",
                         file=str(memory[0]), field="--throughputs")
    if coloc and not gavel:
        raise InputError("Gavel's co-location table replays only beside its isolated throughput table",
                         file=str(coloc[0]), field="--throughputs")
    if arena and gavel:
        raise InputError("the arena and Gavel tables price different jobs: give one of them",
                         file=str(gavel[0]), field="--throughputs")
    if arena:
        from dlsched.perf.measured.arena import read_arena_memory, read_arena_times
        from dlsched.perf.measured.arena_replay import ArenaReplayPerfModel

        table = read_arena_times(arena[0])
        if memory:
            table = table.with_memory(read_arena_memory(memory[0]))
        crius = (policy or "").startswith("crius")
        # their memory check guards the baselines' data-parallel placements, never Crius's plans;
        # their simulated FCFS skips it too (it queries with force_opt outside their runtime)
        checked = not crius and not (policy or "").startswith("fcfs")
        return ArenaReplayPerfModel(base, table, search="cell" if crius else "full",
                                    dp_memory=bool(memory) and checked)
    colocated = None
    if coloc:
        from dlsched.perf.measured.colocated import read_colocated

        colocated = read_colocated(coloc[0])
    return ReplayPerfModel(base, read_throughputs(gavel[0]), colocated)


def _kind(path: Path, source: str) -> str:
    """'times' or 'memory' (the arena tables) or 'gavel', from the file's first bytes."""
    from dlsched.inputfile import read_head

    head = read_head(path, source, "throughput table").decode("latin-1").lstrip()
    if head.startswith("{"):
        return "gavel"
    from dlsched.workload.readers._common import csv_header
    from dlsched.workload.readers.profiles import profile_kind

    kind = profile_kind(csv_header(path, source))
    if kind in ("plans", "unconsolidated"):
        raise InputError(f"a {kind} profile table is not replayed (perf calibrate / perf validate read it)",
                         file=source, field="--throughputs")
    return {"iterations": "times", "dp-memory": "memory", "colocated": "colocated"}.get(kind, "gavel")
