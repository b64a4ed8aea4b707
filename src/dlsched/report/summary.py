"""Summary statistics over job records and time series."""

from __future__ import annotations

import math
from collections import Counter
from operator import attrgetter

import numpy as np

from dlsched.report.records import JobRecord, TimeSeries


def _time_weighted_mean(t: np.ndarray, v: np.ndarray, end: float) -> float:
    if t.size == 0 or end <= t[0]:
        return 0.0
    dt = np.diff(np.append(t, end))
    return float((v * dt).sum() / (end - t[0]))


def percentile(x: np.ndarray, q: float) -> float:
    """``float(np.percentile(x, q))`` of a non-empty 1-D array (numpy's default, 'linear' method),
    computed step for step as numpy 2 does it, so the same float.  Not np.percentile itself:
    its first call imports ``numpy.ma``, about 0.018 CPU s of every run's start-up (issue 21).
    ``tests/report/test_percentile.py`` compares the two."""
    s = np.sort(x)
    n = s.size
    last = float(s[-1])
    if last != last:  # a NaN sorts last; numpy's answer is then NaN
        return last
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:  # numpy takes the last value at both ends, gamma from index -1
        lo = hi = -1
    else:
        lo = int(math.floor(virtual))
        hi = lo + 1
    a, b = float(s[lo]), float(s[hi])
    gamma = virtual - lo
    diff = b - a
    # numpy's _lerp: from the nearer end, so a quantile at an exact index is that value
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def _compute_gpu_seconds(col: dict) -> float:
    """GPU-seconds not blocked on exposed communication, summed in record order over the jobs that ran:
    ``sum(g * (1 - min(c / r, 1)))`` term by term as numpy computes each (the same doubles), added by
    Python's ``sum`` as before."""
    run = np.array(col["run_time"], dtype=float)
    ran = run > 0
    if not ran.any():
        return 0
    share = np.array(col["comm_time"], dtype=float)[ran] / run[ran]
    # Python's min(x, 1.0) keeps x unless 1.0 is smaller: a NaN share stays NaN, as np.fmin would not
    share = np.where(share > 1.0, 1.0, share)
    return sum((np.array(col["gpu_seconds"], dtype=float)[ran] * (1.0 - share)).tolist())


def summarize(records: list[JobRecord], series: TimeSeries, total_gpus: int) -> dict:
    """Headline figures of a run.  Times in seconds; utilisation in [0, 1]."""
    # one attribute per pass through C-level map/attrgetter: a million records summarise in
    # about a second; every sum still adds in record order, so the figures are unchanged
    col = {name: list(map(attrgetter(name), records)) for name in
           ("status", "submit", "finish", "queueing_delay", "comm_time", "restarts", "migrations", "resizes",
            "gpu_seconds", "run_time")}
    # the finished jobs' figures by a mask over whole columns: elementwise float arithmetic in numpy
    # gives the same doubles as Python's, and every sum below still adds in record order
    is_fin = np.array(col["status"], dtype=object) == "finished"
    fin_finish = np.array(col["finish"], dtype=float)[is_fin]
    jct = fin_finish - np.array(col["submit"], dtype=float)[is_fin]
    n_finished = int(is_fin.sum())
    queue = np.array(col["queueing_delay"], dtype=float)
    submit0 = min(col["submit"], default=0.0)
    end = max(fin_finish.tolist(), default=submit0)
    t = np.asarray(series.time, dtype=float)
    busy = np.asarray(series.busy_gpus, dtype=float)
    thr = np.asarray(series.throughput, dtype=float)
    horizon = max(end, t[-1] if t.size else end)
    statuses = Counter(col["status"])

    def pct(q, x=jct):
        return percentile(x, q) if x.size else None

    return {
        "jobs": len(records),
        "finished": n_finished,
        "dropped": statuses["dropped"],
        "unfinished": statuses["unfinished"],
        "avg_jct": float(jct.mean()) if jct.size else None,
        "median_jct": pct(50),
        "p95_jct": pct(95),
        "p99_jct": pct(99),
        "makespan": float(end - submit0),
        "avg_queue": float(queue.mean()) if queue.size else None,
        "p95_queue": pct(95, queue),
        "p99_queue": pct(99, queue),
        # Dally's "communication latency": exposed communication time per finished job
        "avg_comm_s": (float(np.mean(np.array(col["comm_time"], dtype=float)[is_fin])) if n_finished else None),
        "utilization": _time_weighted_mean(t, busy, horizon) / total_gpus if total_gpus else 0.0,
        "avg_throughput": _time_weighted_mean(t, thr, horizon),
        "peak_throughput": float(thr.max()) if thr.size else 0.0,
        "restarts_per_job": float(np.mean(col["restarts"])) if records else 0.0,
        "migrations": int(sum(col["migrations"])),
        "resizes": int(sum(col["resizes"])),
        "gpu_hours": float(sum(col["gpu_seconds"]) / 3600),
        "comm_share": (float(sum(col["comm_time"]) / sum(col["run_time"]))
                       if any(col["run_time"]) else 0.0),
        # CRUX's metric (Cao et al., SIGCOMM '24, section 3): computation done over time, here GPU-seconds
        # spent computing (not blocked on exposed communication) over the cluster's GPU-seconds
        "gpu_compute_utilization": (float(_compute_gpu_seconds(col) / (total_gpus * (horizon - submit0)))
                                    if total_gpus and horizon > submit0 else 0.0),
    }
