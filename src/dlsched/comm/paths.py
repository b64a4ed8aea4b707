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
    loaded network link is least loaded once it is added (load: offered bytes/s over capacity);
    ties to the least total load, then the lowest candidate index."""
    load: dict[int, float] = {}
    out: dict[str, dict[int, int]] = {}
    for job in order:
        picks: dict[int, int] = {}
        for i, f in enumerate(job.flows):
            rate = f.nbytes / job.iteration_s if job.iteration_s > 0 else 0.0
            routes = getattr(f.candidates, "routes", None)
            best = _by_ports(view, f.candidates, routes, load, rate) if routes is not None else \
                _by_listing(view, f.candidates, load, rate)
            picks[i] = best
            for l in _network_part(view, f.candidates[best]):
                load[l] = load.get(l, 0.0) + rate / view.capacity[l]
        out[job.job_id] = picks
    return out


def _by_listing(view: CommView, candidates, load: dict[int, float], rate: float) -> int:
    best, best_key = 0, None
    for c, path in enumerate(candidates):
        net = _network_part(view, path)
        worst = max((load.get(l, 0.0) + rate / view.capacity[l] for l in net), default=0.0)
        key = (worst, sum(load.get(l, 0.0) for l in net), c)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


def _by_ports(view: CommView, paths, routes, load: dict[int, float], rate: float) -> int:
    """``_by_listing``'s choice without listing every port combination: the ports of one hop have
    one capacity, so on each route the least loaded port of every hop (lowest first on ties) gives
    that route's least worst link and least total load at once, and its lowest index."""
    best, best_key = 0, None
    net = view.network_links
    least: dict[int, int] = {}  # a bundle (by its first link; routes share bundles) -> its least loaded port
    for r, hops in enumerate(routes):
        worst = total = 0.0
        picks = []
        for hop in hops:
            k = least.get(hop[0])
            if k is None:
                k = least[hop[0]] = _least_port(hop, load)
            picks.append(k)
            l = hop[k]
            if l in net:
                got = load.get(l, 0.0)
                worst = max(worst, got + rate / view.capacity[l])
                total += got
        c = paths.index_of(r, picks)
        key = (worst, total, c)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


def _least_port(hop: tuple[int, ...], load: dict[int, float]) -> int:
    """The least loaded port of a bundle, the lowest on ties; an idle one ends the search (loads are
    never negative), which on wide bundles (hundreds of ports) is the common case."""
    if len(hop) == 1:
        return 0
    for p, l in enumerate(hop):
        if not load.get(l, 0.0):
            return p
    return min(range(len(hop)), key=lambda p: load[hop[p]])
