"""A run's specification: everything that decides a simulation's results, as frozen plain data.

The command line, the Python API, experiment files and reproductions all describe a run with a
``RunSpec`` and build it with ``dlsched.run.build``; ``summary.json`` keeps ``to_dict()`` under
``params.spec``, so ``RunSpec.from_dict`` of that reruns the run.  Field names are the
``simulate`` flags' (underscored) within their group.  What does not change results (output
folder, progress bar, timeline) is not part of a run.

``from_dict`` is strict: an unknown key or a value of the wrong type is an ``InputError`` naming
its dotted path, so a misspelt field in a hand-written spec never silently falls back to a
default.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from dlsched import defaults as D
from dlsched.errors import InputError
from dlsched.perf.default import DEFAULT_PERF

DEFAULT_CLUSTER = D.CLUSTER
DEFAULT_JOBS = D.JOBS
DEFAULT_DAYS = D.DAYS
PLACEMENTS = D.PLACEMENTS
NETWORKS = ("off", "flow")


@dataclass(frozen=True)
class WorkloadSpec:
    """Jobs from a trace file, a named workload, the Philly-like generator (the default), or a
    prepared job list: ``records`` inline, or ``jobs_file`` (``run/records.py``), used as given."""

    trace: str | None = None
    format: str = "auto"  # the trace's format; auto: detected from its header
    jobs: int | None = None  # synthetic: how many (default DEFAULT_JOBS); trace: keep the first N
    days: float | None = None  # synthetic: arrival span (default: the benchmark trace's rate)
    skip_bad_rows: bool = False
    fit_requests: bool = False
    # arrivals this many times as fast (gaps divided by it); kept for the API, as time_scale = 1 / it
    arrival_rate: float = 1.0
    name: str | None = None  # a named workload (--workload; docs/workloads.md)
    load: float | None = None  # offered load (--load): only arrival times move
    time_scale: float | None = None  # gaps between arrivals multiplied by it (--time-scale)
    # a prepared job list (one JobSpec's fields per record): what a reproduction or a live replay
    # built in code, kept so the run reruns from its spec; no generator, load or fitting applies
    records: list[dict] | None = None
    jobs_file: str | None = None  # the same records in a JSON file
    label: str | None = None  # a prepared list's name in summary.json (params.trace)

    @property
    def prepared(self) -> bool:
        return self.records is not None or self.jobs_file is not None

    def _check(self) -> None:
        if self.prepared:
            self._check_prepared()
        elif self.label is not None:
            raise InputError("workload.label names a prepared job list (records or jobs_file)",
                             field="workload.label")
        _positive(self.jobs, "workload.jobs")
        _positive(self.days, "workload.days")
        _positive(self.arrival_rate, "workload.arrival_rate")
        _positive(self.load, "workload.load")
        _positive(self.time_scale, "workload.time_scale")

    def _check_prepared(self) -> None:
        if self.records is not None and self.jobs_file is not None:
            raise InputError("give records or jobs_file, not both", field="workload.jobs_file")
        at = "workload.records" if self.records is not None else "workload.jobs_file"
        # a prepared list is the jobs as they run: what would reshape it is refused, not ignored
        for name, value, default in (("trace", self.trace, None), ("name", self.name, None),
                                     ("days", self.days, None), ("load", self.load, None),
                                     ("time_scale", self.time_scale, None), ("arrival_rate", self.arrival_rate, 1.0),
                                     ("fit_requests", self.fit_requests, False), ("format", self.format, "auto")):
            if value != default:
                raise InputError(f"workload.{name} does not apply to a prepared job list ({at})",
                                 field=f"workload.{name}")
        if self.records is not None:
            from dlsched.run.records import check_records

            check_records(self.records, "workload.records")


@dataclass(frozen=True)
class ClusterSpec:
    """A shipped spec's name, a YAML path or an inline spec (a dict), and how jobs are placed on it.

    The placement mode belongs to the run, not to the topology: the same cluster object may serve
    packed and first-free runs side by side."""

    name: str | dict = DEFAULT_CLUSTER
    placement: str = "packed"

    def _check(self) -> None:
        if self.placement not in PLACEMENTS:
            raise InputError(f"placement must be one of {', '.join(PLACEMENTS)}, not {self.placement!r}",
                             field="cluster.placement")


@dataclass(frozen=True)
class PolicySpec:
    """A policy by registered name, with typed option values (``--option KEY=VALUE`` parsed)."""

    name: str = "fcfs"
    options: dict = field(default_factory=dict)
    # called at least this often after each call (run/wake.py): a probe sampling progress needs it
    wake_every: float | None = None


@dataclass(frozen=True)
class PerfSpec:
    model: str = DEFAULT_PERF  # dlsched.perf.default.PERF_MODELS
    tier_profile: str | None = None
    # a peer's measured speeds replayed (docs/replay.md): one table's path, or several
    throughputs: str | list | None = None
    # calibrated parameters (`dlsched perf calibrate --out`) for model "calibrated"; None: the shipped fit
    params: str | None = None
    # keywords of a plugin factory (``module:factory`` or ``file.py:factory``): factory(cluster, **options)
    options: dict = field(default_factory=dict)


    def _check(self) -> None:
        if self.options:
            from dlsched.perf.default import PERF_MODELS

            if self.model in PERF_MODELS:
                raise InputError(f"perf.options are a plugin factory's keywords; the built-in model "
                                 f"{self.model!r} takes none", field="perf.options")
            if self.tier_profile is not None or self.params is not None:
                raise InputError("perf.options cannot be combined with a tier profile or calibrated "
                                 "parameters", field="perf.options")


@dataclass(frozen=True)
class NetworkSpec:
    model: str = "off"  # flow: jobs sharing links slow each other
    comm: str | None = None  # a communication policy; implies the flow model
    comm_levels: int = 8
    comm_reserved: int = 2
    charge_self_collisions: bool = False  # implies the flow model

    @property
    def contended(self) -> bool:
        return self.model == "flow" or self.comm is not None or self.charge_self_collisions

    def _check(self) -> None:
        if self.model not in NETWORKS:
            raise InputError(f"network must be one of {', '.join(NETWORKS)}, not {self.model!r}",
                             field="network.model")


@dataclass(frozen=True)
class EngineSpec:
    """The engine's costs and limits (``SimConfig``), as the simulate flags of the same names."""

    start_overhead: float = D.START_OVERHEAD_S
    restore_base: float = D.RESTORE_BASE_S
    restore_per_gb: float = D.RESTORE_S_PER_GB
    checkpoint_interval: float | None = D.CHECKPOINT_INTERVAL_S
    max_time: float | None = None
    debug: bool = False
    # time-sliced jobs: their quantum, and each turn's switch (a base, a part per GB of model state, a cap)
    slice_quantum: float = D.SLICE_QUANTUM_S
    slice_switch: float = D.SLICE_SWITCH_S
    slice_switch_per_gb: float = 0.0
    slice_switch_max: float | None = None

    def _check(self) -> None:
        _positive(self.slice_quantum, "engine.slice_quantum")
        _positive(self.slice_switch_max, "engine.slice_switch_max")
        for name in ("start_overhead", "restore_base", "restore_per_gb", "slice_switch", "slice_switch_per_gb"):
            value = getattr(self, name)
            if value < 0 or not math.isfinite(value):
                raise InputError(f"must be finite and 0 or more, got {value}", field=f"engine.{name}")
        _positive(self.checkpoint_interval, "engine.checkpoint_interval")
        _positive(self.max_time, "engine.max_time")


@dataclass(frozen=True)
class RunSpec:
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    cluster: ClusterSpec = field(default_factory=ClusterSpec)
    policy: PolicySpec = field(default_factory=PolicySpec)
    perf: PerfSpec = field(default_factory=PerfSpec)
    network: NetworkSpec = field(default_factory=NetworkSpec)
    engine: EngineSpec = field(default_factory=EngineSpec)
    seed: int = 0
    # the reference-data folder (--data) the run reads shared files from; None: found as usual
    # (shared_data.py).  summary.json records the one in effect, so a rerun from another
    # directory reads the same tables (a perf model may merge measured rows found there)
    data: str | None = None

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise InputError(f"seed must be 0 or more, got {self.seed}", field="seed")
        for part in (self.workload, self.cluster, self.perf, self.network, self.engine):
            part._check()
        _positive(self.policy.wake_every, "policy.wake_every")

    def to_dict(self) -> dict:
        """Plain JSON-ready data; ``RunSpec.from_dict(spec.to_dict()) == spec``."""
        return _plain(self)

    @classmethod
    def from_dict(cls, doc: Any, where: str | None = None) -> RunSpec:
        """Strictly: unknown keys and wrong types are errors naming their dotted path (and ``where``,
        the file the document came from)."""
        return _build(cls, doc, "", where)

    def with_policy(self, name: str, options: dict | None = None) -> RunSpec:
        return replace(self, policy=PolicySpec(name, dict(options or {}), self.policy.wake_every))


def _plain(obj):
    """``dataclasses.asdict``, one level deep into lists and dicts: records (flat dicts of scalars
    and one small ``extra``) are copied as they are, not walked value by value (asdict's deep
    copy of a job list cost more than a small run)."""
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, list):
        return [{k: (dict(v) if isinstance(v, dict) else v) for k, v in r.items()} if isinstance(r, dict) else r
                for r in obj]
    if isinstance(obj, dict):
        return {k: (_plain(v) if isinstance(v, (list, dict)) else v) for k, v in obj.items()}
    return obj


def _positive(value, path: str) -> None:
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise InputError(f"must be positive (and finite), got {value}", field=path)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _build(cls: type, doc: Any, prefix: str, where: str | None):
    what = prefix.rstrip(".") or "the run specification"
    if not isinstance(doc, dict):
        raise InputError(f"{what} must be a mapping, got {type(doc).__name__}", file=where,
                         field=prefix.rstrip(".") or None)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(doc) - set(known), key=str)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} in {what} (known: {', '.join(known)})", file=where,
                         field=f"{prefix}{unknown[0]}")
    hints = _hints(cls)
    values = {}
    for name, f in known.items():
        if name not in doc:
            if f.default is MISSING and f.default_factory is MISSING:
                raise InputError(f"missing key {name!r} in {what}", file=where, field=prefix + name)
            continue
        values[name] = _value(hints[name], doc[name], prefix + name, where)
    try:
        return cls(**values)
    except InputError as e:
        if where and not e.file:
            raise InputError(e.reason, file=where, field=e.field) from None
        raise


def _value(hint, value, path: str, where: str | None):
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        return _build(hint, value, path + ".", where)
    allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for kind in allowed:
        if kind is type(None) and value is None:
            return None
        if kind is bool and isinstance(value, bool):
            return value
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if kind in (str, dict) and isinstance(value, kind):
            return value
        if kind is list and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        if typing.get_origin(kind) is list and isinstance(value, (list, tuple)):
            return list(value)  # records: checked field by field by the part's own _check
    names = " or ".join("null" if k is type(None) else "a list of strings" if k is list else
                        "a list" if typing.get_origin(k) is list else k.__name__ for k in allowed)
    raise InputError(f"{path} must be {names}, got {value!r}", file=where, field=path)
