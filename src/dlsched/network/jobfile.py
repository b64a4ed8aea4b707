"""Input of ``dlsched net``: a topology and a set of placed jobs, from YAML or CSV.

YAML::

    topology: {kind: clos, hosts: 4, hosts_per_tor: 2, aggs: 1, nic_gbps: 100, oversubscription: 2}
    jobs:
      - {id: a, model: resnet50, hosts: [0, 2]}
      - {id: b, model: vgg16, hosts: [1, 3], gpus_per_host: 4, priority: 1}

``kind`` is ``cluster`` (``cluster: crux-testbed`` or a spec path; hosts are its nodes),
``clos``, ``double-sided`` or ``lingjun`` (``path`` defaults to the shared topo.csv).
A job names a zoo ``model`` (priced by the perf model) or gives its own
``iteration_s``, ``comm_s`` (exposed) and ``gradient_mb`` (bytes all-reduced per
iteration), as a profiler would measure them.  A model job may give a parallelism
plan, ``stages`` (pipeline stages, Crius's stage partition) and ``tp`` (tensor degree
of every stage; the rest is data parallel); it is then priced by the parallelism
model and sends the plan's pipeline, expert and tensor traffic.  CSV: one job per row with the same
columns, ``hosts`` separated by ``;``; the topology then comes from ``--topology``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dlsched.errors import InputError
from dlsched.inputfile import read_head
from dlsched.yamlinput import load_yaml, read_yaml_file, validate


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class TopologySpec(_Strict):
    kind: Literal["cluster", "clos", "double-sided", "lingjun"]
    cluster: str | None = None  # kind cluster: shipped spec name or YAML path
    path: str | None = None  # kind lingjun: topo.csv
    hosts: int | None = Field(None, ge=1)
    hosts_per_tor: int = Field(4, ge=1)
    tors: int = Field(6, ge=2)
    aggs: int = Field(2, ge=1)
    cores: int = Field(32, ge=1)
    nic_gbps: float = Field(200.0, gt=0)
    nics_per_host: int | None = Field(None, ge=1)
    gpus_per_host: int = Field(8, ge=1)
    oversubscription: float = Field(1.0, ge=1.0)
    gpu: str = "A100-80G"  # GPU type the perf model prices jobs on (not for kind cluster)

    @model_validator(mode="after")
    def _needs(self):
        if self.kind == "cluster" and not self.cluster:
            raise ValueError("kind cluster needs 'cluster' (a shipped spec name or a YAML path)")
        if self.kind in ("clos", "double-sided") and self.hosts is None:
            raise ValueError(f"kind {self.kind} needs 'hosts'")
        return self


class PlacedJob(_Strict):
    id: str = Field(min_length=1)
    hosts: list[int | str] = Field(min_length=1)
    gpus_per_host: int | None = Field(None, ge=1)  # default: every GPU of each host
    model: str | None = None
    params: str | None = None
    batch: int | None = Field(None, ge=1)  # global batch; default the model's per-GPU default x GPUs
    iteration_s: float | None = Field(None, gt=0)
    comm_s: float | None = Field(None, ge=0)
    gradient_mb: float | None = Field(None, ge=0)
    priority: int = Field(0, ge=0)
    paths: dict[int, int] = Field(default_factory=dict)  # flow index -> path index (pinned)
    stages: int | None = Field(None, ge=1)  # pipeline stages of a parallelism plan (model jobs)
    tp: int | None = Field(None, ge=1)  # tensor-parallel degree of every stage

    @model_validator(mode="after")
    def _priced(self):
        given = [v is not None for v in (self.iteration_s, self.comm_s, self.gradient_mb)]
        if self.model is None and not all(given):
            raise ValueError("give 'model', or all of 'iteration_s', 'comm_s' and 'gradient_mb'")
        if self.model is not None and any(given):
            raise ValueError("give 'model' or measured times ('iteration_s', 'comm_s', 'gradient_mb'), "
                             "not both")
        if self.model is None and (self.stages is not None or self.tp is not None):
            raise ValueError("'stages' and 'tp' describe a zoo model's plan: give 'model'")
        if self.comm_s is not None and self.iteration_s is not None and self.comm_s > self.iteration_s:
            raise ValueError("comm_s cannot exceed iteration_s")
        if len(set(map(str, self.hosts))) != len(self.hosts):
            raise ValueError("a host is listed twice")
        return self


class NetInput(_Strict):
    topology: TopologySpec | None = None
    jobs: list[PlacedJob] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        ids = [j.id for j in self.jobs]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate job ids: {dup}")
        return self


CSV_COLUMNS = ("id", "hosts", "gpus_per_host", "model", "params", "batch", "iteration_s", "comm_s",
               "gradient_mb", "priority", "stages", "tp")


def read_net_input(path: str | Path) -> tuple[NetInput, dict[str, int]]:
    """The file's topology and jobs, and each job's line (for later errors)."""
    source = str(path)
    if source.endswith(".csv"):
        return _read_csv(Path(path), source)
    text = read_yaml_file(Path(path))
    root, data = load_yaml(text, source, "a net input must be a mapping with 'jobs'")
    got = validate(NetInput, data, root, source)
    lines = {}
    from dlsched.yamlinput import line_of

    for i, job in enumerate(got.jobs):
        lines[job.id] = line_of(root, ("jobs", i)) or 1
    return got, lines


def _read_csv(path: Path, source: str) -> tuple[NetInput, dict[str, int]]:
    read_head(path, source, "jobs CSV")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise InputError("empty file", file=source)
    header = [c.strip() for c in rows[0]]
    unknown = [c for c in header if c not in CSV_COLUMNS]
    if unknown:
        raise InputError(f"unknown column(s) {unknown}; known: {', '.join(CSV_COLUMNS)}", file=source, line=1)
    for need in ("id", "hosts"):
        if need not in header:
            raise InputError(f"missing column '{need}'", file=source, line=1)
    jobs, lines = [], {}
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields, found {len(row)}", file=source, line=line)
        rec: dict = {}
        for col, raw in zip(header, row):
            raw = raw.strip()
            if raw == "":
                continue
            try:
                if col == "hosts":
                    rec[col] = [int(h) if h.strip().isdigit() else h.strip() for h in raw.split(";")]
                elif col in ("gpus_per_host", "batch", "priority", "stages", "tp"):
                    rec[col] = int(raw)
                elif col in ("iteration_s", "comm_s", "gradient_mb"):
                    rec[col] = float(raw)
                else:
                    rec[col] = raw
            except ValueError:
                raise InputError(f"not a number: {raw!r}", file=source, line=line, field=col) from None
        try:
            jobs.append(PlacedJob.model_validate(rec))
        except Exception as e:  # pydantic ValidationError: name the first field it blames
            err = e.errors()[0] if hasattr(e, "errors") else {"loc": (), "msg": str(e)}
            field = ".".join(str(p) for p in err["loc"]) or None
            raise InputError(err["msg"].removeprefix("Value error, "), file=source, line=line,
                             field=field) from None
        lines[jobs[-1].id] = line
    try:
        return NetInput(jobs=jobs), lines
    except Exception as e:
        raise InputError(e.errors()[0]["msg"].removeprefix("Value error, ") if hasattr(e, "errors") else str(e),
                         file=source) from None
