"""CRUX's correction factors k_j (Cao et al., SIGCOMM '24, section 4.2, Figures 11-12).

GPU intensity alone ignores two things that decide who should go first on a
shared link: iteration length (a short-iteration job turns bandwidth into
computation more often) and compute-communication overlap (a job whose
communication hides under its computation loses little when delayed).  The
paper folds both into P_j = k_j I_j: k = 1 for the reference job (the one with
the most network traffic); for any other job j, put j and the reference on one
link, try both strict orders, and measure how many more seconds of its own data
each job moves when it is the one served first (D_ref, D_j).  Equal priority
means both choices buy the same computation, so I_ref D_ref = I_j D_j and
k_j = D_j / D_ref (the paper's worked example: 3 s / 2 s gives k = 1.5).

Simplifications, stated: the two jobs are replayed alone on one link that each
would fill alone (as in the paper's examples), with one communication phase per
iteration starting where the perf model puts it, on a time grid of 1/200 of the
shorter iteration over 20 of the longer; results are cached by the pair's shape.
"""

from __future__ import annotations

from functools import lru_cache

from dlsched.comm.base import CommJob

K_MIN, K_MAX = 1e-3, 1e3


def _moved(jobs: tuple[tuple[float, float, float], ...], first: int) -> list[float]:
    """Seconds of its own data each job moves on one shared link, ``first`` served first.

    Each job: (iteration seconds alone, communication seconds alone, when its communication starts).
    Time steps of 1/200 of the shorter iteration over 20 of the longer; in each, the job served first
    sends what it has left, the other uses what is free; an iteration ends once its computation time
    has passed and its communication is sent (``replay_kernel``, compiled).
    """
    from dlsched.comm.replay_kernel import replay

    dt = min(j[0] for j in jobs) / 200.0
    steps = int(round(20 * max(j[0] for j in jobs) / dt))
    (it0, comm0, start0), (it1, comm1, start1) = jobs
    return list(replay(float(it0), float(comm0), float(start0), float(it1), float(comm1), float(start1),
                       int(first), float(dt), steps))


@lru_cache(maxsize=65536)
def _factor(ref: tuple[float, float, float], job: tuple[float, float, float]) -> float:
    ref_first = _moved((ref, job), 0)
    job_first = _moved((ref, job), 1)
    d_ref = ref_first[0] - job_first[0]
    d_job = job_first[1] - ref_first[1]
    if d_ref <= 1e-9 and d_job <= 1e-9:
        return 1.0
    if d_job <= 1e-9:
        return K_MIN  # going first buys j nothing: its communication hides under its computation
    if d_ref <= 1e-9:
        return K_MAX
    return min(max(d_job / d_ref, K_MIN), K_MAX)


def _shape(j: CommJob) -> tuple[float, float, float]:
    # rounded so that similar jobs share a cache entry (1 ms resolution)
    return (round(j.iteration_s, 3), round(j.comm_s, 3), round(j.start_s, 3))


# id(CommJob) -> (the job, its network bytes per second, its shape): a policy is asked at every event
# over every placed job, and ``build_view`` reuses a job's ``CommJob`` while its traffic and price are
# unchanged, so each is summed and rounded once
_TRAITS: dict[int, tuple] = {}


def _traits(j: CommJob) -> tuple:
    got = _TRAITS.get(id(j))
    if got is None or got[0] is not j:
        got = _TRAITS[id(j)] = (j, j.network_bytes / j.iteration_s, _shape(j))
    return got


def correction_factors(jobs: list[CommJob]) -> dict[str, float]:
    """k_j of every job against the reference job (the most network bytes per second)."""
    talking = [j for j in jobs if j.comm_s > 0 and j.iteration_s > 0]
    if not talking:
        return {j.job_id: 1.0 for j in jobs}
    if len(_TRAITS) > 4 * len(jobs) + 256:  # jobs gone: forget them
        keep = {id(j) for j in jobs}
        for k in [k for k in _TRAITS if k not in keep]:
            del _TRAITS[k]
    traits = [_traits(j) for j in talking]
    ref, _, ref_shape = max(traits, key=lambda t: (t[1], t[0].job_id))
    out = {j.job_id: 1.0 for j in jobs}
    for j, _, shape in traits:
        if j is not ref:
            out[j.job_id] = _factor(ref_shape, shape)
    return out
