"""Greedy least-congested path choice, shared by CRUX's path selection and TACCL*."""

from __future__ import annotations

from typing import Iterable

from dlsched.comm.base import CommJob, CommView


# A path's network links, kept while the policy sees one fabric (a run's views share one link set), so
# the same job's candidate paths are filtered once, not at every re-assignment.
_NET: dict = {"links": None, "paths": {}}


def _network_part(view: CommView, path: tuple[int, ...]) -> tuple[int, ...]:
    if _NET["links"] is not view.network_links:
        _NET["links"], _NET["paths"] = view.network_links, {}
    got = _NET["paths"].get(path)
    if got is None:
        got = _NET["paths"][path] = tuple(l for l in path if l in view.network_links)
    return got


def least_congested(view: CommView, order: Iterable[CommJob]) -> dict[str, dict[int, int]]:
    """Place jobs' flows one job at a time in ``order``, each flow on the candidate path whose most
    loaded network link is least loaded once it is added (load: offered bytes/s over capacity)."""
    load: dict[int, float] = {}
    out: dict[str, dict[int, int]] = {}
    for job in order:
        picks: dict[int, int] = {}
        for i, f in enumerate(job.flows):
            rate = f.nbytes / job.iteration_s if job.iteration_s > 0 else 0.0
            best, best_key = 0, None
            for c, path in enumerate(f.candidates):
                net = _network_part(view, path)
                worst = max((load.get(l, 0.0) + rate / view.capacity[l] for l in net), default=0.0)
                key = (worst, sum(load.get(l, 0.0) for l in net), c)
                if best_key is None or key < best_key:
                    best, best_key = c, key
            picks[i] = best
            for l in _network_part(view, f.candidates[best]):
                load[l] = load.get(l, 0.0) + rate / view.capacity[l]
        out[job.job_id] = picks
    return out
