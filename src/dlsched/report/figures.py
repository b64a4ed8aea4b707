"""The report's figures, drawn with matplotlib (Agg, no display) from what results directories hold.

Each ``fig_*`` function takes the loaded runs and returns a ``Figure`` with
every run overlaid, or ``None`` when no run has the data (a live run has no
network tiers; a trace without deadlines has no deadline figure), so the page
shows only what the runs measured.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never a window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dlsched.report.records import JobRecord, TimeSeries  # noqa: E402

SIZE = (7.0, 3.6)


@dataclass
class Run:
    """One results directory as the report reads it."""

    label: str
    path: Path
    records: list[JobRecord]
    series: TimeSeries
    doc: dict
    extra_cols: dict[str, list[str]] = field(default_factory=dict)  # jobs.csv columns beyond JobRecord's
    links: list[dict] | None = None  # links.csv rows when the run wrote one

    @property
    def summary(self) -> dict:
        return self.doc.get("summary", {})

    @property
    def params(self) -> dict:
        return self.doc.get("params", {})


def time_scale(runs: list[Run]) -> tuple[str, float]:
    """Hours for cluster-scale runs, seconds for short (live) ones."""
    spans = [(r.summary.get("makespan") or 0.0) for r in runs]
    return ("s", 1.0) if spans and max(spans) < 3600 else ("h", 3600.0)


def _new(title: str, xlabel: str, ylabel: str) -> tuple[Figure, plt.Axes]:
    fig = Figure(figsize=SIZE, dpi=110, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


MANY = 6  # more runs than this: the legend goes below the axes, in columns, and the figure grows


def _legend(ax, runs) -> None:
    n = len(ax.get_legend_handles_labels()[0])
    if n <= MANY:
        if len(runs) > 1 or n:
            ax.legend(fontsize="small")
        return
    fig = ax.figure
    cols = 3
    fig.set_figheight(SIZE[1] + 0.22 * -(-n // cols))
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=cols, fontsize="x-small")


def _cdf(runs: list[Run], values, title: str, xlabel: str) -> Figure | None:
    unit, scale = time_scale(runs)
    fig, ax = _new(title, f"{xlabel} ({unit})", "fraction of jobs")
    drawn = False
    for r in runs:
        v = np.sort(np.asarray([x for x in values(r) if x is not None], dtype=float)) / scale
        if v.size:
            ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label=r.label)
            drawn = True
    if not drawn:
        return None
    ax.set_ylim(0, 1.02)
    positive = [x for r in runs for x in values(r) if x]
    if positive and max(positive) > 100 * min(positive):  # spans decades: a log axis keeps short jobs visible
        ax.set_xscale("log")
    _legend(ax, runs)
    return fig


def fig_jct_cdf(runs):
    return _cdf(runs, lambda r: [x.jct for x in r.records if x.status == "finished"], "JCT CDF", "job completion time")


def fig_queue_cdf(runs):
    fig = _cdf(runs, lambda r: [x.queueing_delay for x in r.records], "Queueing delay CDF", "queueing delay")
    # a run whose jobs never waited is a step at zero, invisible on a log axis: say so on the figure
    idle = [r.label for r in runs if r.records and all(x.queueing_delay <= 0 for x in r.records)]
    if fig is not None and idle:
        fig.axes[0].text(0.02, 0.02, "no job waited: " + ", ".join(idle), transform=fig.axes[0].transAxes,
                         fontsize=8, va="bottom")
    return fig


def _over_time(runs, column: str, title: str, ylabel: str) -> Figure | None:
    unit, scale = time_scale(runs)
    fig, ax = _new(title, f"time ({unit})", ylabel)
    drawn = False
    for r in runs:
        t = np.asarray(r.series.time, dtype=float)
        if t.size:
            ax.step(t / scale, np.asarray(getattr(r.series, column), dtype=float), where="post", label=r.label,
                    linewidth=1)
            drawn = True
    if not drawn:
        return None
    _legend(ax, runs)
    return fig


def fig_busy(runs):
    fig = _over_time(runs, "busy_gpus", "Busy GPUs", "GPUs")
    if fig is not None:
        total = max((r.params.get("num_gpus") or 0 for r in runs), default=0)
        if total:
            ax = fig.axes[0]
            ax.axhline(total, color="grey", linestyle="--", linewidth=0.8)
            ax.annotate(f"cluster: {total} GPUs", (0.01, total), xycoords=("axes fraction", "data"),
                        va="bottom", fontsize="x-small", color="grey")
    return fig


def fig_queue(runs):
    return _over_time(runs, "queued_jobs", "Queue length", "queued jobs")


def fig_throughput(runs):
    return _over_time(runs, "throughput", "Cluster throughput", "samples/s")


def remaining(records: list[JobRecord]) -> tuple[np.ndarray, np.ndarray]:
    """Step function: jobs submitted and not yet finished or dropped, at every change."""
    ev = [(r.submit, 1) for r in records]
    ev += [(r.finish, -1) for r in records if r.finish is not None]
    ev.sort()
    t = np.asarray([e[0] for e in ev], dtype=float)
    return t, np.cumsum([e[1] for e in ev])


def fig_remaining(runs):
    unit, scale = time_scale(runs)
    fig, ax = _new("Remaining jobs", f"time ({unit})", "jobs submitted, not finished")
    for r in runs:
        t, n = remaining(r.records)
        if t.size:
            ax.step(t / scale, n, where="post", label=r.label, linewidth=1)
    if not any(r.records for r in runs):
        return None
    _legend(ax, runs)
    return fig


def _bars(runs: list[Run], groups: list[str], values: dict[str, list[float]], title: str, ylabel: str,
          fmt: str = "{:.2f}") -> Figure:
    fig, ax = _new(title, "", ylabel)
    width = 0.8 / max(1, len(runs))
    x = np.arange(len(groups))
    for i, r in enumerate(runs):
        bars = ax.bar(x + i * width - 0.4 + width / 2, values[r.label], width, label=r.label)
        ax.bar_label(bars, labels=[fmt.format(v) for v in values[r.label]], fontsize="x-small")
    ax.set_xticks(x, groups)
    _legend(ax, runs)
    return fig


def _canonical_type(name: str) -> str:
    """The cluster model's name of a requested type ("a100" -> "A100-40G"); "any" when none was asked."""
    from dlsched.cluster.gpus import gpu_type
    from dlsched.errors import UnknownNameError

    if not name:
        return "any"
    try:
        return gpu_type(name).name
    except UnknownNameError:
        return name


def gpu_type_hours(run: Run) -> dict[str, float]:
    """GPU-hours by the GPU type jobs asked for ("any" where they accept every type)."""
    out: dict[str, float] = {}
    for r in run.records:
        key = _canonical_type(r.gpu_type)
        out[key] = out.get(key, 0.0) + r.gpu_seconds / 3600
    return out


def fig_gpu_types(runs):
    """Utilisation by requested GPU type: a job's GPU-seconds over that type's capacity-time."""
    caps = [_type_capacity(r) for r in runs]
    hours = [gpu_type_hours(r) for r in runs]
    types = sorted({t for h in hours for t in h})
    if not types or types == ["any"]:
        return None  # no job named a type: the records cannot split utilisation by type
    # a type no run's cluster has (a trace naming GPUs the cluster lacks) has no capacity to divide by
    shown = [t for t in types if t == "any" or any(cap.get(t) for cap in caps)]
    if not shown:
        return None
    values = {}
    for r, cap, h in zip(runs, caps, hours):
        span = (r.summary.get("makespan") or 0.0) / 3600
        denom = {t: (sum(cap.values()) if t == "any" else cap.get(t, 0)) * span for t in shown}
        values[r.label] = [h.get(t, 0.0) / denom[t] if denom[t] else 0.0 for t in shown]
    title = "Utilisation by requested GPU type"
    if len(shown) < len(types):
        title += f"\n(not in the cluster, left out: {', '.join(t for t in types if t not in shown)})"
    return _bars(runs, shown, values, title, "GPU-hours / capacity-hours", "{:.0%}")


def _type_capacity(run: Run) -> dict[str, int]:
    """GPUs per type of the run's cluster (empty when the cluster name no longer loads)."""
    from dlsched.cluster.topology import Cluster
    from dlsched.errors import DlschedError

    name = run.params.get("cluster")
    if not name:
        return {}
    try:
        c = Cluster.load(name)
    except (DlschedError, OSError):
        return {}
    return {gt.name: int(c.type_gpus[i]) for i, gt in enumerate(c.gpu_types)}


def fig_moves(runs):
    keys = ["restarts", "migrations", "resizes"]
    values = {r.label: [float(sum(getattr(x, k) for x in r.records)) for k in keys] for r in runs}
    if not any(any(v) for v in values.values()):
        return None
    return _bars(runs, keys, values, "Restarts, migrations and resizes", "count (all jobs)", "{:.0f}")


def fig_comm(runs):
    """Share of running time spent in exposed communication, per job (CDF)."""
    if not any(x.comm_time > 0 for r in runs for x in r.records):
        return None
    fig, ax = _new("Communication time share", "exposed communication / running time", "fraction of jobs")
    for r in runs:
        v = np.sort([x.comm_time / x.run_time for x in r.records if x.run_time > 0])
        if v.size:
            ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label=r.label)
    _legend(ax, runs)
    return fig


def fig_deadlines(runs):
    from dlsched.policies.crius.policy import deadline_satisfactory_ratio

    ratios = {r.label: deadline_satisfactory_ratio(r.records) for r in runs}
    if all(v is None for v in ratios.values()):
        return None
    return _bars(runs, ["deadline satisfactory ratio"], {k: [v or 0.0] for k, v in ratios.items()},
                 "Deadlines met", "share of jobs with a deadline", "{:.0%}")


def fig_tiers(runs):
    """Network tier of placements, when jobs.csv carries a ``tier`` column (network-aware runs)."""
    if not any("tier" in r.extra_cols for r in runs):
        return None
    tiers = sorted({t for r in runs for t in r.extra_cols.get("tier", []) if t})
    if not tiers:
        return None
    values = {r.label: [r.extra_cols.get("tier", []).count(t) / max(1, len(r.records)) for t in tiers] for r in runs}
    return _bars(runs, tiers, values, "Network tier of placements", "share of jobs", "{:.0%}")


def fig_links(runs):
    """Per-link utilisation from ``links.csv`` (columns ``link`` and ``utilization``), busiest 20."""
    have = [r for r in runs if r.links]
    if not have:
        return None
    fig, ax = _new("Per-link utilisation (busiest 20)", "link", "utilisation")
    for r in have:
        rows = sorted(r.links, key=lambda x: -float(x["utilization"]))[:20]
        ax.plot([x["link"] for x in rows], [float(x["utilization"]) for x in rows], "o-", label=r.label)
    ax.tick_params(axis="x", labelrotation=60, labelsize="x-small")
    _legend(ax, have)
    return fig


FIGURES = [("jct_cdf", fig_jct_cdf), ("queue_cdf", fig_queue_cdf), ("busy_gpus", fig_busy),
           ("queue_length", fig_queue), ("throughput", fig_throughput), ("remaining_jobs", fig_remaining),
           ("gpu_types", fig_gpu_types), ("network_tiers", fig_tiers), ("comm_time", fig_comm),
           ("link_utilisation", fig_links), ("moves", fig_moves), ("deadlines", fig_deadlines)]


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG; no timestamp or software tag, so the same data give the same bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def read_links(path: Path) -> list[dict] | None:
    """``links.csv`` rows when the file exists and has the columns the figure needs."""
    if not path.exists():
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and {"link", "utilization"} <= set(rows[0]):
        return rows
    if rows and "time" not in rows[0] and {"link", "utilisation"} <= set(rows[0]):
        # the flow model's per-link summary (``--links summary``): one mean utilisation per link
        return [{**r, "utilization": r["utilisation"]} for r in rows]
    return None
