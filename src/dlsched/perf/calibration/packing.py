"""Packing interference and the cost of spreading a job, fitted to Gavel's measured throughputs.

**Packing** (``colocated`` tables against the isolated table): the interference
model of ``dlsched.perf.sharing.interference`` prices two jobs on one GPU as
``t_i = (1 - u_i) + u_i (1 + (1 + p) U)`` of solo time, ``u`` a job's solo
GPU utilisation from the compute model (its resource use) and ``U`` the other
job's.  The compute model puts nearly every Gavel job at u > 0.9 (kernels
dominate in FLOPs terms), which makes any pair run at about half speed, while
Gavel measured a median of 0.6; so two figures per model family are fitted,
a scale on the utilisation (``u = min(1, s_f x u_model)``: the host-side share
the FLOPs model does not see) and the contention ``p_f``, by robust least
squares on log(packed / isolated speed).  Only the products (1 + p_f) s_f s_g
are identified (see ``RIDGE``), and those are what the fit is tested on.

**Spreading** (``unconsolidated`` tables): a job of n workers on n servers
against the same job consolidated on one server; the throughput kept per
halving of GPUs per node (the form ``AdaptivePerfModel.spread_factor`` uses)
is ``ratio ** (1 / log2 n)``, and the fit is the median over the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dlsched.cluster.gpus import gpu_type
from dlsched.errors import InputError
from dlsched.perf import compute as cmp
from dlsched.workload.models import get_model
from dlsched.workload.readers.profiles import ColocatedRow, UnconsolidatedRow

LOSS, F_SCALE = "soft_l1", 0.1
# Below one (clipped) utilisation, a packed iteration takes 1 + (1 + p_f) s_f s_g u v of its solo time:
# only the products (1 + p_f) s_f s_g are identified, so scaling every s by c and every 1 + p by 1/c^2
# fits the same.  A weak pull of log s toward 0 picks one answer (the smallest change of utilisation).
RIDGE = 1e-3
P_BOUNDS = (-0.9, 5.0)  # contention: below -1 a packed kernel would run faster than alone
S_BOUNDS = (0.05, 2.0)  # utilisation scale


@dataclass(frozen=True, slots=True)
class PackedPair:
    """A measured packed row resolved to the model's inputs: the scored job and its partner."""

    job_type: str
    other_job_type: str
    family: str
    other_family: str
    util: float  # the compute model's solo utilisation of the scored job on this GPU
    other_util: float
    measured: float  # packed / isolated throughput of the scored job
    line: int


def _job(job_type: str, gpu: str):
    from dlsched.workload.readers.gavel import parse_job_type

    name, batch = parse_job_type(job_type)
    model = get_model(name)
    return model, cmp.utilisation(model, gpu_type(gpu), batch or model.default_batch)


def resolve_pairs(rows: Sequence[ColocatedRow], isolated) -> tuple[list[PackedPair], list[tuple[int, str]]]:
    """Rows whose scored job has an isolated throughput and a zoo model; the rest with a reason.

    ``isolated`` is a ``ThroughputTable`` (``dlsched.perf.measured.replay.read_throughputs``).
    A 0 throughput (Gavel: the pair does not run together) has no speed to fit.
    """
    pairs, skipped = [], []
    cache: dict[tuple[str, str], tuple] = {}
    for r in rows:
        iso = isolated.steps_per_s.get((r.job_type, r.scale_factor, r.gpu_type.lower()))
        if not iso:
            skipped.append((r.line, f"no isolated throughput for {r.job_type} x{r.scale_factor} on {r.gpu_type}"))
            continue
        if r.steps_per_s <= 0 or r.other_steps_per_s <= 0:
            skipped.append((r.line, "the pair does not run together (0 steps/s)"))
            continue
        try:
            for jt in (r.job_type, r.other_job_type):
                if (jt, r.gpu_type) not in cache:
                    cache[(jt, r.gpu_type)] = _job(jt, r.gpu_type)
        except InputError as e:
            skipped.append((r.line, e.reason))
            continue
        (m1, u1), (m2, u2) = cache[(r.job_type, r.gpu_type)], cache[(r.other_job_type, r.gpu_type)]
        pairs.append(PackedPair(r.job_type, r.other_job_type, m1.family, m2.family, u1, u2,
                                r.steps_per_s / iso, r.line))
    return pairs, skipped


@dataclass(frozen=True)
class PackingFit:
    contention: dict[str, float]
    utilisation: dict[str, float]
    rows: int


def predict(pairs: Sequence[PackedPair], contention: dict[str, float], utilisation: dict[str, float],
            default_p: float = 0.5) -> np.ndarray:
    """Packed / isolated speed of each pair's scored job under the interference model."""
    s_u = np.array([utilisation.get(q.family, 1.0) for q in pairs])
    s_v = np.array([utilisation.get(q.other_family, 1.0) for q in pairs])
    p = np.array([contention.get(q.family, default_p) for q in pairs])
    return _speed(np.array([q.util for q in pairs]) * s_u, np.array([q.other_util for q in pairs]) * s_v, p)


def _speed(u: np.ndarray, v: np.ndarray, p: np.ndarray) -> np.ndarray:
    """1 / ((1 - u) + u (1 + (1 + p) v)), with utilisations clipped to [0.01, 1] as ``pack`` does."""
    u = np.clip(u, 0.01, 1.0)
    v = np.clip(v, 0.01, 1.0)
    return 1.0 / ((1.0 - u) + u * (1.0 + (1.0 + p) * v))


def fit_packing(pairs: Sequence[PackedPair]) -> PackingFit:
    """Per family (of the scored jobs and their partners) a utilisation scale and a contention."""
    from scipy.optimize import least_squares

    from dlsched.perf.sharing.interference import CONTENTION, DEFAULT_CONTENTION

    fams = sorted({q.family for q in pairs} | {q.other_family for q in pairs})
    if not pairs:
        return PackingFit({}, {}, 0)
    logm = np.log([q.measured for q in pairs])
    n = len(fams)

    def unpack(x):
        return dict(zip(fams, x[:n])), dict(zip(fams, np.exp(x[n:])))

    fi = np.array([fams.index(q.family) for q in pairs])
    fo = np.array([fams.index(q.other_family) for q in pairs])
    u0 = np.array([q.util for q in pairs])
    v0 = np.array([q.other_util for q in pairs])

    ridge = math.sqrt(RIDGE)

    def residuals(x):  # vectorised: the fit is repeated once per held-out job type
        s = np.exp(x[n:])
        return np.concatenate([np.log(_speed(u0 * s[fi], v0 * s[fo], x[:n][fi])) - logm, ridge * x[n:]])

    x0 = np.array([CONTENTION.get(f, DEFAULT_CONTENTION) for f in fams] + [0.0] * n)
    lo = [P_BOUNDS[0]] * n + [math.log(S_BOUNDS[0])] * n
    hi = [P_BOUNDS[1]] * n + [math.log(S_BOUNDS[1])] * n
    sol = least_squares(residuals, np.clip(x0, lo, hi), bounds=(lo, hi), loss=LOSS, f_scale=F_SCALE,
                        method="trf", xtol=1e-6, ftol=1e-6, max_nfev=300)
    p, s = unpack(sol.x)
    return PackingFit({f: float(v) for f, v in p.items()}, {f: float(v) for f, v in s.items()}, len(pairs))


@dataclass(frozen=True, slots=True)
class SpreadRow:
    job_type: str
    gpu_type: str
    workers: int
    measured: float  # unconsolidated / consolidated throughput
    line: int


def resolve_spread(rows: Sequence[UnconsolidatedRow], isolated) -> list[SpreadRow]:
    out = []
    for r in rows:
        iso = isolated.steps_per_s.get((r.job_type, r.scale_factor, r.gpu_type.lower()))
        if iso and r.scale_factor >= 2 and r.steps_per_s > 0:
            out.append(SpreadRow(r.job_type, r.gpu_type, r.scale_factor, r.steps_per_s / iso, r.line))
    return out


def fit_spread(rows: Sequence[SpreadRow]) -> float | None:
    """Throughput kept per halving of GPUs per node: the median of ratio ** (1 / log2 workers)."""
    if not rows:
        return None
    keep = float(np.exp(np.median([math.log(r.measured) / math.log2(r.workers) for r in rows])))
    return min(1.0, keep)


def predict_spread(rows: Sequence[SpreadRow], keep: float) -> np.ndarray:
    return np.array([keep ** math.log2(r.workers) for r in rows])
