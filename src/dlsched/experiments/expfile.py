"""Experiment files: a YAML naming cluster, workload, policies with options, seeds and a sweep.

    name: depth-sweep
    cluster: crius-sim              # shipped name, a YAML path (relative to this file) or an inline spec
    workload:
      synthetic: {jobs: 300, days: 2}   # or: trace: traces/philly.csv (format, skip_bad_rows, jobs)
      load: 1.0                     # offered load (docs/workloads.md); only arrival times move
    perf: adaptive
    sim: {checkpoint_interval: null, max_time: null}
    policies:
      - fcfs
      - name: crius
        options: {depth: 3}         # constructor keyword arguments of the policy
    seeds: [0, 1]
    sweep:                          # dotted paths into this document; every combination runs
      policies.1.options.depth: [2, 3]
      workload.load: [1.0, 2.0]

Errors name the file, the line and the field (``dlsched.yamlinput``).  Every
combination of the sweep and the seeds is a *point*; every policy runs at
every point.  A point resolved for one policy is itself a valid experiment
file (no sweep, one seed): each run directory keeps it as ``experiment.yaml``.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dlsched.errors import InputError
from dlsched.perf.default import DEFAULT_PERF, PERF
from dlsched.yamlinput import line_of, load_yaml, read_yaml_file, validate


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SyntheticWorkload(_Strict):
    jobs: int = Field(200, ge=1)
    days: float | None = Field(None, gt=0)


class Workload(_Strict):
    trace: str | None = None
    format: str = "auto"
    skip_bad_rows: bool = False
    fit_requests: bool = False  # as --fit-requests: grow requests whose model does not fit in memory
    jobs: int | None = Field(None, ge=1, description="trace: keep the first N jobs")
    synthetic: SyntheticWorkload | None = None
    name: str | None = None  # a named workload, as --workload (jobs and days from 'synthetic')
    # offered load, as --load (synthetic default: workload.load.DEFAULT_LOAD; a trace keeps its own)
    load: float | None = Field(None, gt=0)
    time_scale: float | None = Field(None, gt=0)  # as --time-scale

    @model_validator(mode="after")
    def _one_source(self):
        if self.trace and self.synthetic:
            raise ValueError("give either 'trace' or 'synthetic', not both")
        if self.trace and self.name:
            raise ValueError("give either 'trace' or 'name', not both")
        if self.load is not None and self.time_scale is not None:
            raise ValueError("give either 'load' or 'time_scale', not both")
        if self.load is not None and self.synthetic is not None and self.synthetic.days is not None:
            raise ValueError("give either 'load' or 'synthetic.days', not both: the load sets the arrival "
                             "window from the jobs' GPU-hours")
        if not self.trace and self.synthetic is None:
            self.synthetic = SyntheticWorkload()
        return self


class PolicyEntry(_Strict):
    name: str
    options: dict[str, Any] = {}


class SimSettings(_Strict):
    """Engine settings, as the simulate command's flags of the same names."""

    checkpoint_interval: float | None = Field(None, gt=0)
    start_overhead: float = Field(0.0, ge=0)
    restore_base: float = Field(5.0, ge=0)
    restore_per_gb: float = Field(2.0, ge=0)
    max_time: float | None = Field(None, gt=0)
    debug: bool = False


class ExperimentFile(_Strict):
    name: str = "experiment"
    cluster: str | dict = "crius-sim"
    workload: Workload = Workload()
    perf: str = DEFAULT_PERF
    tier_profile: str | None = None
    sim: SimSettings = SimSettings()
    policies: list[str | PolicyEntry] = Field(min_length=1)
    seeds: list[int] = Field([0], min_length=1)
    sweep: dict[str, list] = {}

    @field_validator("perf")
    @classmethod
    def _perf(cls, v):
        if v not in PERF:  # a built-in, an installed plugin or a file.py:factory reference
            raise ValueError(f"unknown perf model '{v}'; known: {', '.join(PERF.names())}")
        return v

    @field_validator("sweep")
    @classmethod
    def _sweep(cls, v):
        for key, values in v.items():
            if not values:
                raise ValueError(f"sweep '{key}' has no values")
            if key.split(".")[0] in ("sweep", "seeds", "name"):
                raise ValueError(f"cannot sweep '{key}' (use 'seeds' for seeds)")
        return v

    def policy_entries(self) -> list[PolicyEntry]:
        return [p if isinstance(p, PolicyEntry) else PolicyEntry(name=p) for p in self.policies]


@dataclass(frozen=True)
class Run:
    """One simulation: a point of the sweep, one seed, one policy; ``doc`` is its own experiment file."""

    point: str  # directory name of the point, e.g. "depth=2_seed=0"
    values: tuple[tuple[str, Any], ...]  # (sweep key, value) pairs of the point
    seed: int
    policy: str
    doc: dict  # resolved experiment document: one policy, one seed, no sweep

    @property
    def label(self) -> str:
        return f"{self.point}/{self.policy}"


def _set(doc: dict, path: str, value) -> None:
    """Set a dotted path (integer parts index lists); the parent must exist, the leaf may be new."""
    parts = path.split(".")
    node: Any = doc
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]  # IndexError / ValueError: the caller reports the sweep key
        elif isinstance(node, dict):
            node = node.setdefault(part, {})
        else:
            raise KeyError(path)
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise KeyError(path)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")


def _point_name(values, seed: int) -> str:
    parts = [f"{k.split('.')[-1]}={v}" for k, v in values] + [f"seed={seed}"]
    return _UNSAFE.sub("-", "_".join(parts))


def _resolve_paths(doc: dict, base: Path) -> dict:
    """Relative trace, cluster and tier-profile paths made absolute (the runs may work elsewhere)."""
    doc = copy.deepcopy(doc)
    wl = doc.get("workload") or {}
    if wl.get("trace") and not Path(wl["trace"]).is_absolute():
        wl["trace"] = str((base / wl["trace"]).resolve())
    c = doc.get("cluster")
    if isinstance(c, str) and (c.endswith((".yaml", ".yml")) or "/" in c) and not Path(c).is_absolute():
        doc["cluster"] = str((base / c).resolve())
    tp = doc.get("tier_profile")
    if isinstance(tp, str) and tp.endswith(".csv") and not Path(tp).is_absolute():
        doc["tier_profile"] = str((base / tp).resolve())
    return doc


def load_experiment(path, progress: Callable[[int, int], None] | None = None) -> tuple[ExperimentFile, list[Run]]:
    """Read and validate an experiment file; returns it and its runs in a fixed order.

    ``progress(done, total)`` is called as the sweep's points are expanded and checked (a
    million-point sweep takes a while before its first run), first with ``done = 0``.
    """
    path = Path(path)
    source = str(path)
    root, data = load_yaml(read_yaml_file(path), source, "an experiment file must be a mapping "
                                                        "(cluster, workload, policies, seeds, sweep)")
    exp = validate(ExperimentFile, data, root, source)
    data = _resolve_paths(data, path.parent)
    # every policy as {name, options}, so sweep paths like policies.1.options.depth always lead somewhere
    data["policies"] = [{"name": _plugin_path(p.name, path.parent), "options": dict(p.options)}
                        for p in exp.policy_entries()]
    keys = list(exp.sweep)
    runs: list[Run] = []
    checked: set[str] = set()
    total = math.prod(len(exp.sweep[k]) for k in keys) * len(exp.seeds)
    done = 0
    for combo in itertools.product(*(exp.sweep[k] for k in keys)):
        values = tuple(zip(keys, combo))
        for seed in exp.seeds:
            if progress is not None:
                progress(done, total)
            done += 1
            point = copy.deepcopy(data)
            point.pop("sweep", None)
            point["seeds"] = [seed]
            for k, v in values:
                try:
                    _set(point, k, v)
                except (KeyError, IndexError, ValueError):
                    raise InputError(f"sweep path '{k}' does not lead into the experiment document",
                                     file=source, line=line_of(root, ("sweep", k)), field=f"sweep.{k}") from None
            resolved = _validate_point(point, root, source, values)
            _check_size(resolved, root, source, values)
            _check_cluster(resolved.cluster, root, source, values, checked)
            for i, entry in enumerate(point["policies"]):
                _check_policy(i, entry, root, source, checked)
                one = {**point, "policies": [entry]}
                runs.append(Run(_point_name(values, seed), values, seed, _label(entry["name"]), one))
    return exp, runs


def _plugin_path(name: str, base: Path) -> str:
    """A ``file.py:Class`` policy reference relative to the experiment file, made absolute (as cluster
    paths are), so the file runs from any directory; names and module references pass unchanged."""
    from dlsched.registry import is_reference

    file, sep, attr = name.rpartition(":") if not name.endswith(".py") else (name, "", "")
    if not is_reference(name) or not file.endswith(".py") or Path(file).is_absolute():
        return name
    return f"{(base / file).resolve()}{sep}{attr}"


def _label(name: str) -> str:
    """A policy's short name for the run's directory and table row (a plugin file's class name)."""
    from dlsched.policies.registry import policy_entry

    return policy_entry(name).label


def _validate_point(point: dict, root, source: str, values) -> ExperimentFile:
    """A sweep value that breaks the schema is reported at the sweep key's line."""
    from pydantic import ValidationError

    try:
        return ExperimentFile.model_validate(point)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        key = next((k for k, _ in values if field.startswith(k) or k.startswith(field)), None)
        where = ("sweep", key) if key else tuple(err["loc"])
        raise InputError(f"{err['msg'].removeprefix('Value error, ')} (at {field} = "
                         f"{dict(values).get(key, '?') if key else '?'})", file=source,
                         line=line_of(root, where), field=f"sweep.{key}" if key else field) from None


def _check_size(exp: ExperimentFile, root, source: str, values) -> None:
    """A synthetic job count whose state would not fit in memory is refused at its line, before any run."""
    from dlsched.memory import check_memory

    synthetic = exp.workload.synthetic
    if synthetic is None:
        return
    path = ("workload", "synthetic", "jobs")
    key = next((k for k, _ in values if k == ".".join(path)), None)
    where = ("sweep", key) if key else path
    check_memory(synthetic.jobs, option=f"sweep.{key}" if key else ".".join(path), file=source,
                 line=line_of(root, where))


def _check_cluster(cluster, root, source: str, values, checked: set[str]) -> None:
    """The cluster (a name, a path or an inline spec, maybe swept) must load before any worker starts."""
    from pydantic import ValidationError

    from dlsched.errors import DlschedError
    from dlsched.run.build import build_cluster
    from dlsched.run.spec import ClusterSpec, RunSpec

    key = "cluster:" + repr(cluster)
    if key in checked:
        return
    checked.add(key)
    swept = next((k for k, _ in values if k == "cluster" or k.startswith("cluster.")), None)
    where, field = (("sweep", swept), f"sweep.{swept}") if swept else (("cluster",), "cluster")
    try:
        build_cluster(RunSpec(cluster=ClusterSpec(cluster)))
    except ValidationError as e:
        err = e.errors()[0]
        raise InputError(f"cluster spec: {err['msg']} at {'.'.join(str(p) for p in err['loc'])}", file=source,
                         line=line_of(root, where), field=field) from None
    except DlschedError as e:
        raise InputError(getattr(e, "reason", str(e)), file=source, line=line_of(root, where), field=field) from None


def _check_policy(i: int, entry: dict, root, source: str, checked: set[str]) -> None:
    """Unknown policy names and bad options (swept ones too) fail here, before any worker starts."""
    from dlsched.errors import UnknownNameError
    from dlsched.policies.registry import make_policy

    key = repr((entry["name"], sorted(entry["options"].items())))
    if key in checked:
        return
    checked.add(key)
    try:
        make_policy(entry["name"], **entry["options"])
    except UnknownNameError as e:
        raise InputError(e.reason, file=source, line=line_of(root, ("policies", i)), field=f"policies.{i}") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"bad option for policy '{entry['name']}': {e}", file=source,
                         line=line_of(root, ("policies", i, "options")), field=f"policies.{i}.options") from None


def dump_point(doc: dict) -> str:
    """A run's resolved experiment as YAML (``experiment.yaml`` in its results directory)."""
    return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False)
