"""Synthetic job streams calibrated to Philly (../shared/traces/philly-stats.md).

- Duration: the quantile function of source R (philly_runtime.csv, 83,154 Philly runtimes,
  philly-stats.md section 1) interpolated piecewise log-linearly between its published
  points: p10 61 s, p25 131 s, p50 1,186 s, p75 3,341.5 s, p90 12,859 s, p99 287,283 s,
  plus "9.2 % under 60 s" (p9.2 = 60 s), "3.5 % over a day" (p96.5 = 86,400 s), a 10 s floor
  at p0 and the maximum 4,628,239 s at p100.
- Dependence on GPU count (section 3, source G): multi-GPU jobs run longer.  A job of n GPUs
  draws from R and is scaled by ``GPU_DURATION_RATIO[n]``, the ratio of G's median for n GPUs
  to G's median for 1 GPU (2: 9.49, 4: 6.68, 8: 6.03; 16+ reuse 8's).  1-GPU jobs are scaled
  by a factor solved so that the mixture's median stays R's 1,186 s.
- GPU demand (section 2's calibration target): 1: 0.85, 2: 0.05, 4: 0.05, 8: 0.04, 16: 0.01.
  Sizes above the cap (cluster size, the largest pinned type, or ``max_gpus``) are removed
  and the rest renormalised.
- Arrivals: Poisson at ``rate_per_hour`` (Philly's all-jobs mean 35.7 jobs/h, section 4), or
  a batch at t = 0.

Deterministic for a seed: one ``numpy.random.Generator(PCG64(seed))`` drives every draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.gctuning import rare_gc
from dlsched.workload.job import JobSpec, unchecked_spec
from dlsched.workload.load import DEFAULT_LOAD
from dlsched.workload.models import get_model

# (probability, seconds) points of R's quantile function (philly-stats.md section 1).
DURATION_QUANTILES: tuple[tuple[float, float], ...] = (
    (0.0, 10.0), (0.092, 60.0), (0.10, 61.0), (0.25, 131.0), (0.50, 1186.0), (0.75, 3341.5),
    (0.90, 12859.0), (0.965, 86400.0), (0.99, 287283.0), (1.0, 4628239.0))
MEDIAN_DURATION_S = 1186.0
MAX_DURATION_S = DURATION_QUANTILES[-1][1]  # no job runs longer than R's longest

# GPU-count mix (philly-stats.md section 2, the suggested calibration target).
GPU_MIX: dict[int, float] = {1: 0.85, 2: 0.05, 4: 0.05, 8: 0.04, 16: 0.01}

# Ratio of source G's median duration for n GPUs to 1 GPU (philly-stats.md section 3).
GPU_DURATION_RATIO: dict[int, float] = {2: 101659 / 10710, 4: 71556 / 10710, 8: 64585 / 10710}

PHILLY_RATE_PER_HOUR = 117325 / (137 * 24)  # section 4: 35.7 jobs/hour

# Everyday models for jobs without names: CNNs, recurrent and Transformer models of the zoo.
MODEL_MIX: dict[str, float] = {
    "resnet50": 0.20, "resnet18": 0.15, "vgg16": 0.08, "inception_v3": 0.08, "mobilenet_v3_large": 0.05,
    "bert-base": 0.12, "transformer": 0.10, "lstm_lm": 0.08, "gnmt": 0.07, "deepspeech2": 0.07,
}

_PS = np.array([p for p, _ in DURATION_QUANTILES])
_LOGQ = np.log([q for _, q in DURATION_QUANTILES])


def duration_quantile(u) -> np.ndarray:
    """R's quantile function at probabilities ``u``: log-linear between the published points."""
    return np.exp(np.interp(u, _PS, _LOGQ))


def duration_cdf(x) -> np.ndarray:
    """Inverse of ``duration_quantile`` (probability that a duration is <= x)."""
    return np.interp(np.log(np.maximum(x, 1e-9)), _LOGQ, _PS)


def duration_ratio(n: int) -> float:
    if n <= 1:
        return 1.0
    known = sorted(GPU_DURATION_RATIO)
    return GPU_DURATION_RATIO[max([k for k in known if k <= n], default=known[0])]


def single_gpu_scale(mix: Mapping[int, float], median: float = MEDIAN_DURATION_S) -> float:
    """Factor c for 1-GPU jobs so that the mixture of scaled durations has the given median.

    P(D <= m) = w1 F(m / c) + sum_n wn F(m / r_n) = 0.5, solved by bisection on log c.
    """
    total = sum(mix.values())
    multi = sum(w / total * float(duration_cdf(median / duration_ratio(n))) for n, w in mix.items() if n > 1)
    w1 = mix.get(1, 0.0) / total
    if w1 == 0:
        return 1.0
    lo, hi = math.log(1e-3), math.log(1e3)
    for _ in range(80):
        mid = (lo + hi) / 2
        if w1 * float(duration_cdf(median / math.exp(mid))) + multi > 0.5:
            lo = mid  # too many short jobs: scale 1-GPU durations up
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def _normalised(mix: Mapping, what: str) -> tuple[list, np.ndarray]:
    keys = list(mix)
    w = np.array([float(mix[k]) for k in keys])
    if not keys or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"{what} must have positive weights, got {dict(mix)}")
    return keys, w / w.sum()


def generate(n_jobs: int | None = None, duration_s: float | None = None, *,
             arrival: Literal["poisson", "batch"] = "poisson", rate_per_hour: float = PHILLY_RATE_PER_HOUR,
             seed: int = 0, gpu_mix: Mapping[int, float] | None = None,
             models: Mapping[str, float] | None = None, cluster: Cluster | None = None,
             pin_gpu_types: bool = False, max_gpus: int | None = None, duration_scale: float = 1.0,
             max_duration_s: float | None = None, gpu_duration_dependence: bool = True,
             id_prefix: str = "") -> list[JobSpec]:
    """A Philly-like job stream (see the module docstring for every distribution and its source);
    ``_generate_columns`` documents the arguments."""
    cols = _generate_columns(n_jobs, duration_s, arrival=arrival, rate_per_hour=rate_per_hour, seed=seed,
                             gpu_mix=gpu_mix, models=models, cluster=cluster, pin_gpu_types=pin_gpu_types,
                             max_gpus=max_gpus, duration_scale=duration_scale, max_duration_s=max_duration_s,
                             gpu_duration_dependence=gpu_duration_dependence)
    return _specs(cols, cols.submit, id_prefix)


@dataclass
class _Columns:
    """A generated stream as plain Python lists, one per field: specs are built from them once,
    after any change to the arrival times (``philly_at_load``), instead of twice."""

    submit: list[float]
    gpus: list[int]
    chosen: list[tuple[str, int]]  # (model name, per-GPU default batch)
    length: list[float]
    pinned: list[str | None]


def _specs(cols: _Columns, submit: list[float], id_prefix: str = "") -> list[JobSpec]:
    jobs = []
    with rare_gc():  # a million specs and their dicts, all kept: the collector need not re-walk them
        for i, (g, (name, batch), dur, gpu, t) in enumerate(zip(cols.gpus, cols.chosen, cols.length,
                                                                   cols.pinned, submit)):
            jobs.append(unchecked_spec(f"{id_prefix}{i}", t, name, g, batch * g, dur, gpu,
                                       {"source": "synthetic"}))
    return jobs


def _generate_columns(n_jobs: int | None = None, duration_s: float | None = None, *,
                      arrival: Literal["poisson", "batch"] = "poisson", rate_per_hour: float = PHILLY_RATE_PER_HOUR,
                      seed: int = 0, gpu_mix: Mapping[int, float] | None = None,
                      models: Mapping[str, float] | None = None, cluster: Cluster | None = None,
                      pin_gpu_types: bool = False, max_gpus: int | None = None, duration_scale: float = 1.0,
                      max_duration_s: float | None = None, gpu_duration_dependence: bool = True) -> _Columns:
    """A Philly-like job stream (see the module docstring for every distribution and its source).

    Give ``n_jobs`` (count), ``duration_s`` (arrival window), or both (then the Poisson rate is
    ``n_jobs / duration_s`` and ``rate_per_hour`` is ignored).  ``cluster`` caps GPU demand at
    its size and, with ``pin_gpu_types``, pins each job to one of its GPU types chosen with
    probability = that type's share of the cluster's GPUs (among types with enough GPUs).
    ``duration_scale`` multiplies every duration; ``max_duration_s`` caps them.
    """
    if n_jobs is None and duration_s is None:
        raise ValueError("give n_jobs, duration_s or both")
    _check_args(n_jobs=n_jobs, duration_s=duration_s, rate_per_hour=rate_per_hour, duration_scale=duration_scale,
                max_duration_s=max_duration_s)
    if arrival not in ("poisson", "batch"):
        raise ValueError(f"arrival must be 'poisson' or 'batch', got {arrival!r}")
    rng = np.random.Generator(np.random.PCG64(seed))
    rate = rate_per_hour / 3600.0
    if n_jobs is not None and duration_s is not None:
        rate = n_jobs / duration_s
    if rate <= 0:
        raise ValueError("arrival rate must be positive")

    # Arrivals.
    if arrival == "batch":
        if n_jobs is None:
            n_jobs = max(1, int(round(rate * duration_s)))
        times = np.zeros(n_jobs)
    elif n_jobs is not None:
        times = np.cumsum(rng.exponential(1.0 / rate, n_jobs))
        times -= times[0]
    else:
        gaps = rng.exponential(1.0 / rate, int(rate * duration_s * 1.5) + 16)
        times = np.cumsum(gaps) - gaps[0]
        while times[-1] < duration_s:
            more = np.cumsum(rng.exponential(1.0 / rate, len(times))) + times[-1]
            times = np.concatenate([times, more])
        times = times[times < duration_s]
    n = len(times)

    # GPU demand, capped by the cluster.
    cap = max_gpus if max_gpus is not None else math.inf
    type_names: list[str] = []
    type_counts = np.zeros(0)
    if cluster is not None:
        type_names = [t.name for t in cluster.gpu_types]
        type_counts = np.asarray(cluster.type_gpus, dtype=float)
        cap = min(cap, type_counts.max() if pin_gpu_types else cluster.num_gpus)
    mix = {int(k): v for k, v in (gpu_mix or GPU_MIX).items() if int(k) <= cap}
    sizes, w = _normalised(mix, "gpu_mix")
    gpus = np.asarray(sizes)[rng.choice(len(sizes), size=n, p=w)]

    # Durations: R's quantile function, scaled by GPU count.
    u = rng.random(n)
    dur = duration_quantile(u)
    if gpu_duration_dependence:
        c1 = single_gpu_scale(mix)
        ratio = {g: c1 if g == 1 else duration_ratio(g) for g in set(gpus.tolist())}  # per size, not per job
        dur = np.minimum(dur * np.array([ratio[g] for g in gpus.tolist()]), MAX_DURATION_S)
    dur = dur * duration_scale
    if max_duration_s is not None:
        dur = np.minimum(dur, max_duration_s)

    names, mw = _normalised(models or MODEL_MIX, "models")
    picked = rng.choice(len(names), size=n, p=mw)
    pins = rng.random(n)
    share = type_counts / type_counts.sum() if len(type_counts) else type_counts

    # rounded as whole arrays (numpy's rounding, the same as rounding each numpy scalar) and
    # turned into Python numbers once: per-element numpy calls cost ~1 s per million jobs
    submit = np.round(times, 3).tolist()
    length = np.round(dur, 3).tolist()
    zoo = [get_model(name) for name in names]
    chosen = [(zoo[k].name, zoo[k].default_batch) for k in picked.tolist()]
    sizes_l = gpus.tolist()
    pinned: list[str | None] = [None] * n
    if pin_gpu_types and cluster is not None:
        for i, g in enumerate(sizes_l):
            ok = np.where(type_counts >= g, share, 0.0)
            cdf = np.cumsum(ok / ok.sum())
            pinned[i] = type_names[int(min(np.searchsorted(cdf, pins[i], side="right"), len(cdf) - 1))]
    return _Columns(submit, sizes_l, chosen, length, pinned)


def offered_load(jobs: list[JobSpec], cluster_gpus: int, window_s: float) -> float:
    """GPU-seconds asked for divided by GPU-seconds available over the window."""
    return sum(j.num_gpus * (j.duration_s or 0.0) for j in jobs) / (cluster_gpus * window_s)


# philly_like: Philly's durations at Philly's arrival rate offer the 1,280-GPU crius-sim about
# 0.5 x its capacity once durations are capped at the two-week window (a longer job cannot
# finish inside the trace anyway).  Durations are therefore scaled by the factor s that makes
# the expected offered load PHILLY_LIKE_LOAD (s = 2.8 for 13,000 jobs in 14 days on crius-sim:
# a median job of ~55 min instead of Philly's 20; realised loads 0.93-1.02 over seeds 0-3),
# then capped at the window.  The cap is never shorter than two weeks: with a one-day window a
# cap at the window would cut off most of the heavy tail and the load target would then
# inflate every job (median ~5 h for 2,000 jobs in 2 days); keeping the tail keeps Philly's
# shape, and the jobs that outlast a short window are what a short window of Philly shows.
PHILLY_LIKE_LOAD = 1.0
MIN_DURATION_CAP_S = 14 * 86400.0


def expected_gpu_seconds(mix: Mapping[int, float] = GPU_MIX, scale: float = 1.0,
                         max_duration_s: float | None = None, samples: int = 100_001) -> float:
    """Mean GPU-seconds per job under ``generate``'s distributions (midpoint rule, deterministic)."""
    u = (np.arange(samples) + 0.5) / samples
    base = duration_quantile(u)
    c1 = single_gpu_scale(mix)
    total = sum(mix.values())
    out = 0.0
    for g, w in mix.items():
        d = np.minimum(base * (c1 if g == 1 else duration_ratio(g)), MAX_DURATION_S) * scale
        if max_duration_s is not None:
            d = np.minimum(d, max_duration_s)
        out += w / total * g * float(d.mean())
    return out


def load_scale(cluster_gpus: int, n_jobs: int, window_s: float, load: float,
               mix: Mapping[int, float] = GPU_MIX, cap_s: float | None = None) -> float:
    """Duration scale s with E[offered load over the window] = ``load``, durations capped at
    ``cap_s`` (default: the window)."""
    cap_s = window_s if cap_s is None else cap_s
    want = load * cluster_gpus * window_s / n_jobs
    lo, hi = math.log(1e-3), math.log(1e3)
    for _ in range(40):
        mid = (lo + hi) / 2
        if expected_gpu_seconds(mix, math.exp(mid), cap_s, samples=20_001) < want:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def _check_args(**values) -> None:
    """``InputError`` (a ValueError) for a job count that is not a whole number >= 1, or a size
    or rate that is not a positive finite number; None means "not given"."""
    for name, v in values.items():
        if v is None:
            continue
        if name == "n_jobs":
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"must be a whole number >= 1, got {v!r}", field=name)
        elif isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not (math.isfinite(v) and v > 0):
            raise InputError(f"must be a positive finite number, got {v!r}", field=name)


def philly_like(cluster: Cluster, n_jobs: int = 13000, days: float = 14.0, seed: int = 0, *,
                load: float = PHILLY_LIKE_LOAD, pin_gpu_types: bool = False) -> list[JobSpec]:
    """Philly-shaped jobs arriving over ``days`` that offer about ``load`` x the cluster's capacity.

    The benchmark trace is ``philly_like(Cluster.load("crius-sim"), 13000, 14)``: 13,000 jobs in
    two weeks is 38.7 jobs/hour, close to Philly's 35.7; durations are ``generate``'s scaled by
    ``load_scale`` (2.8 there) and capped at the window (docs/trace-formats.md).
    """
    _check_args(n_jobs=n_jobs, days=days, load=load)
    window = days * 86400.0
    cap = max(window, MIN_DURATION_CAP_S)
    mix = {g: w for g, w in GPU_MIX.items() if g <= cluster.num_gpus}
    scale = load_scale(cluster.num_gpus, n_jobs, window, load, mix, cap)
    return generate(n_jobs, window, seed=seed, cluster=cluster, pin_gpu_types=pin_gpu_types,
                    duration_scale=scale, max_duration_s=cap)


# The default workload (what `dlsched simulate` generates without a trace).  Jobs keep Philly's
# shape (durations, GPU mix, multi-GPU jobs running longer) at Philly's own scale; only the
# arrival rate follows the cluster and the chosen offered load (workload/load.py).  Durations
# are capped at DEFAULT_MAX_DURATION_S: Philly's last 3.5% run past a day and its last 1% hold
# about two thirds of all GPU-seconds, so in a few hundred jobs an uncapped tail puts most of
# the offered work in one or two jobs that outlive the arrival window, and the rest arrive too
# sparsely to queue (docs/workloads.md, "The default workload").
DEFAULT_MAX_DURATION_S = 86400.0


def philly_at_load(cluster: Cluster, n_jobs: int, seed: int = 0, *, load: float | None = DEFAULT_LOAD,
                   days: float | None = None, max_duration_s: float | None = DEFAULT_MAX_DURATION_S,
                   pin_gpu_types: bool = False) -> list[JobSpec]:
    """``n_jobs`` Philly-shaped jobs whose Poisson arrivals offer ``load`` x the cluster's capacity
    over their window (first to last arrival), or arrive over ``days`` (then ``load`` must be None).

    Sizes are drawn first and the window is then set from their GPU-seconds, so the realised
    offered load is ``load`` itself, not an expectation a heavy tail would miss.  Given n
    arrivals, a Poisson process's arrival times are uniform order statistics: normalised sums of
    exponential gaps, scaled to the window.
    """
    if (load is None) == (days is None):
        raise InputError("give exactly one of load and days", field="load")
    _check_args(n_jobs=n_jobs, load=load, days=days, max_duration_s=max_duration_s)
    cols = _generate_columns(n_jobs, arrival="batch", seed=seed, cluster=cluster, pin_gpu_types=pin_gpu_types,
                             max_duration_s=max_duration_s)
    if days is not None:
        window = days * 86400.0
    else:
        work = math.fsum(g * d for g, d in zip(cols.gpus, cols.length))
        window = work / (load * cluster.num_gpus)
    # a second stream of the same seed: the sizes stay those of generate(seed) whatever the window
    rng = np.random.Generator(np.random.PCG64([seed, 1]))
    sums = np.cumsum(rng.exponential(1.0, n_jobs))
    span = sums[-1] - sums[0]
    times = (sums - sums[0]) / span * window if span > 0 else np.zeros(n_jobs)
    return _specs(cols, np.round(times, 3).tolist())
