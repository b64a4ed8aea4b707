"""From measured tables to a ``CalibratedParams``: which fit reads which table, in what order.

Order matters only for memory: the DP-replica memory fit comes first, then the
headroom that lets every measured run fit, then the time fit (which leaves out
rows the memory model refuses).  Packing and spreading are independent.
Every step is deterministic, so the same tables give the same file.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.perf.calibration import fit as F
from dlsched.perf.calibration import packing as PK
from dlsched.perf.calibration.params import CalibratedParams
from dlsched.perf.parallel.cost import DEFAULT_PARAMS, CostParams
from dlsched.workload.readers.profiles import ProfileTable, read_profile

ISOLATED = "isolated"  # Gavel's isolated throughput table (read by dlsched.perf.measured.replay)


@dataclass
class ProfileSet:
    """Every table given, by kind (several files of one kind are concatenated)."""

    tables: list[ProfileTable] = field(default_factory=list)
    isolated: object | None = None  # a ThroughputTable
    isolated_source: tuple[str, str] | None = None  # (path, sha256)

    def rows(self, kind: str) -> list:
        return [r for t in self.tables if t.kind == kind for r in t.rows]

    def sources(self) -> list[dict]:
        out = [{"file": Path(t.source).name, "kind": t.kind, "rows": len(t), "sha256": t.sha256} for t in self.tables]
        if self.isolated_source is not None:
            out.append({"file": Path(self.isolated_source[0]).name, "kind": ISOLATED,
                        "rows": len(self.isolated), "sha256": self.isolated_source[1]})
        return out


def _is_isolated(path: Path) -> bool:
    from dlsched.workload.readers._common import csv_header

    if path.suffix.lower() == ".json":
        return True
    cols = set(csv_header(path, str(path)))
    return {"job_type", "scale_factor"} <= cols and any(c.endswith("_steps_per_s") for c in cols) \
        and "other_job_type" not in cols


def load_profiles(paths: Sequence[str | Path]) -> ProfileSet:
    """Read each table (kind detected from its header); Gavel's isolated table is recognised too."""
    import hashlib

    out = ProfileSet()
    if not paths:
        raise InputError("give at least one profile table", field="PROFILE")
    for p in paths:
        path = Path(p)
        if path.exists() and path.is_file() and _is_isolated(path):
            from dlsched.perf.measured.replay import read_throughputs

            if out.isolated is not None:
                raise InputError("a second isolated throughput table; give one", file=str(p))
            out.isolated = read_throughputs(path)
            out.isolated_source = (str(p), hashlib.sha256(path.read_bytes()).hexdigest())
            continue
        out.tables.append(read_profile(path))
    has = {t.kind for t in out.tables}
    if has & {"colocated", "unconsolidated"} and out.isolated is None:
        raise InputError("co-located and unconsolidated throughputs are relative to isolated ones: also give "
                         "the isolated table (e.g. ../shared/anchors/traces/gavel-simulation-throughputs-"
                         "isolated.csv)", field="PROFILE")
    return out


def memory_base(memory: F.MemoryFit | None, base: CostParams = DEFAULT_PARAMS) -> CostParams:
    base = replace(base, activation_passes=F.ACTIVATION_PASSES)
    if memory is None or not memory.scales:
        return base
    return replace(base, memory_scale=tuple((f, s, a) for f, (s, a) in sorted(memory.scales.items())),
                   reserved_bytes=memory.reserved_bytes)


@dataclass
class Fitted:
    """A calibration and what it was fitted on (for reports and provenance)."""

    params: CalibratedParams
    time: F.TimeFit | None
    memory: F.MemoryFit | None
    packing: PK.PackingFit | None
    skipped: list[F.Skipped]


def fit_all(ps: ProfileSet, cluster: Cluster, *, runs: Sequence[F.MeasuredRun] | None = None,
            reference: Sequence[F.MeasuredRun] = (), memory_rows=None, pairs=None, spread_rows=None) -> Fitted:
    """Fit every part the tables allow; the keyword arguments restrict the rows (validation's folds)."""
    skipped: list[F.Skipped] = []
    if runs is None:
        runs, skipped = F.resolve_runs(ps.rows("iterations"), cluster)
    mem_rows = ps.rows("dp-memory") if memory_rows is None else memory_rows
    memory = F.fit_memory(mem_rows) if mem_rows else None
    base = memory_base(memory)
    time_fit = None
    if runs:
        head = F.fit_headroom(runs, base, memory)
        base = replace(base, memory_scale=tuple((f, s, a) for f, (s, a) in sorted(head.items())))
        time_fit = F.fit_times(runs, base, reference)
    if pairs is None and ps.isolated is not None:
        pairs, _ = PK.resolve_pairs(ps.rows("colocated"), ps.isolated)
    pack = PK.fit_packing(pairs) if pairs else None
    if spread_rows is None and ps.isolated is not None:
        spread_rows = PK.resolve_spread(ps.rows("unconsolidated"), ps.isolated)
    spread = PK.fit_spread(spread_rows) if spread_rows else None
    params = CalibratedParams(
        efficiency=dict(time_fit.efficiency) if time_fit else {},
        links=dict(time_fit.links) if time_fit else {},
        batch_overhead=dict(time_fit.batch_overhead) if time_fit else {},
        memory={f: (s, a) for f, s, a in base.memory_scale},
        reserved_bytes=base.reserved_bytes,
        contention=dict(pack.contention) if pack else {},
        utilisation=dict(pack.utilisation) if pack else {},
        spread_keep=spread, activation_passes=base.activation_passes)
    return Fitted(params, time_fit, memory, pack, skipped)


def calibrate(paths: Sequence[str | Path], cluster_name: str = F.DEFAULT_CLUSTER) -> Fitted:
    """``dlsched perf calibrate``: fit on every row of the tables, with provenance."""
    ps = load_profiles(paths)
    kinds = {t.kind for t in ps.tables}
    if not kinds & {"iterations", "dp-memory", "colocated", "unconsolidated"}:
        raise InputError("nothing to fit: give an iterations, dp-memory, colocated or unconsolidated table "
                         f"(got: {', '.join(sorted(kinds | ({ISOLATED} if ps.isolated else set())))}); the "
                         "plans table is only scored, by perf validate", field="PROFILE")
    cluster = Cluster.load(cluster_name)
    fitted = fit_all(ps, cluster)
    t = fitted.time
    prov = {
        "sources": ps.sources(),
        "cluster": cluster.name,
        "method": ("memory: bounded linear least squares on relative DP-replica memory, then the largest "
                   "per-family shrink under which every measured run fits; iteration time: per (GPU type, "
                   "family) robust least squares (soft-L1, scale 0.1) on log(predicted / measured) of the "
                   "optimal plan, 4 log-parameters (efficiency, intra/inter-node bandwidth, small-batch "
                   f"overhead), ridge {F.RIDGE}; packing: robust least squares on log(packed / isolated "
                   "speed), per family utilisation scale and contention; spreading: median per-halving "
                   "ratio (docs/perf-model.md, Calibration and validation)"),
        "fitted_on": _dt.date.today().isoformat(),
        "rows": {"iterations": t.rows if t else 0, "iterations_out_of_memory": t.out_of_memory if t else 0,
                 "dp_memory": fitted.memory.rows if fitted.memory else 0,
                 "colocated": fitted.packing.rows if fitted.packing else 0},
        "skipped": [{"line": s.line, "reason": s.reason} for s in fitted.skipped],
        "in_sample": _in_sample(ps, cluster, fitted.params),
    }
    fitted.params = replace(fitted.params, provenance=prov)
    return fitted


def _in_sample(ps: ProfileSet, cluster: Cluster, params: CalibratedParams) -> dict:
    """Relative iteration-time error on the fitted rows (held-out figures: ``perf validate``)."""
    import numpy as np

    runs, _ = F.resolve_runs(ps.rows("iterations"), cluster)
    cost = params.cost_params()
    priced = [(r, F.price_run(r, cost)) for r in runs if not r.row.oom]
    err = [abs(t / r.row.iter_time_s - 1) for r, t in priced if t is not None]
    if not err:
        return {}
    return {"iteration_time_median": round(float(np.median(err)), 4),
            "iteration_time_p90": round(float(np.percentile(err, 90)), 4),
            "measured_runs_priced_oom": sum(t is None for _, t in priced), "rows": len(err)}
