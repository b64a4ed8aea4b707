"""Greedy least-congested path choice, shared by CRUX's path selection and TACCL*."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from dlsched.comm.base import CommJob, CommView


# A path's network links, kept while the policy sees one fabric (a run's views share one link set), so
# the same job's candidate paths are filtered once, not at every re-assignment; and the fabric's link
# capacities and network-link mask as arrays, for scoring every switch route of a flow at once.
# PathSet candidates go through the compiled loop (``greedy_kernel``); False keeps ``_PortLoads``, the
# reference the tests hold it equal to
COMPILED = True

_NET: dict = {"links": None, "paths": {}, "capacity": None, "arrays": None, "sets": {}}


def _network_part(view: CommView, path: tuple[int, ...]) -> tuple[int, ...]:
    if _NET["links"] is not view.network_links:
        _NET["links"], _NET["paths"] = view.network_links, {}
    got = _NET["paths"].get(path)
    if got is None:
        got = _NET["paths"][path] = tuple(l for l in path if l in view.network_links)
    return got


def _fabric_arrays(view: CommView) -> tuple[np.ndarray, np.ndarray]:
    """The view's capacities (bytes/s) and network-link mask as arrays, built once per fabric."""
    if _NET["arrays"] is None or _NET["capacity"] is not view.capacity or _NET["links"] is not view.network_links:
        _network_part(view, ())  # resets the path cache if the link set changed
        cap = np.asarray(view.capacity, dtype=float)
        net = np.zeros(len(cap), dtype=bool)
        net[list(view.network_links)] = True
        _NET["capacity"], _NET["arrays"], _NET["sets"] = view.capacity, (cap, net), {}
    return _NET["arrays"]


def replayed_prefix(view: CommView, order: list, memo: dict | None) -> tuple[int, list]:
    """How many jobs open ``order`` as they opened the memo's last order (the same ``CommJob``
    objects, on the same fabric), and that order's picks; the memo's per-flow link answers are
    dropped, as they belong to the last search only."""
    prev_jobs, prev_picks = ([], []) if memo is None or memo.get("fabric") is not view.network_links \
        else (memo["jobs"], memo["picks"])
    same = 0
    while same < len(order) and same < len(prev_jobs) and order[same] is prev_jobs[same]:
        same += 1
    if memo is not None:
        memo.pop("links", None)
    return same, prev_picks


def least_congested(view: CommView, order: Iterable[CommJob], memo: dict | None = None) -> dict[str, dict[int, int]]:
    """Place jobs' flows one job at a time in ``order``, each flow on the candidate path whose most
    loaded network link is least loaded once it is added (load: offered bytes/s over capacity);
    ties to the least total load, then the lowest candidate index.

    ``memo`` (a dict the caller keeps between calls over one fabric): the greedy's state after a job
    depends only on the jobs before it, so the jobs that open the order as they did last time (the same
    ``CommJob`` objects, which ``build_view`` reuses while a job's traffic and price are unchanged) get
    last time's picks back, replayed onto the loads with the same additions in the same order; the
    search resumes at the first job that differs.  The picks and loads are those of a fresh search."""
    load: dict[int, float] = {}  # for hand-made candidate lists (``_by_listing``)
    ports: _PortLoads | None = None  # for ``PathSet`` candidates (the flow model's)
    out: dict[str, dict[int, int]] = {}
    order = list(order)
    same, prev_picks = replayed_prefix(view, order, memo)
    if COMPILED:
        got = _compiled_greedy(view, order, memo, same, prev_picks)
        if got is not None:
            return got
    for k, job in enumerate(order):
        picks: dict[int, int] = prev_picks[k] if k < same else {}
        for i, f in enumerate(job.flows):
            rate = f.nbytes / job.iteration_s if job.iteration_s > 0 else 0.0
            if getattr(f.candidates, "routes", None) is not None:
                if ports is None:
                    ports = _PortLoads(view)
                if k < same:
                    ports.take(f.candidates, picks[i], rate)
                else:
                    picks[i] = ports.choose(f.candidates, rate)
                continue
            best = picks[i] if k < same else _by_listing(view, f.candidates, load, rate)
            picks[i] = best
            for l in _network_part(view, f.candidates[best]):
                load[l] = load.get(l, 0.0) + rate / view.capacity[l]
        out[job.job_id] = picks
    if memo is not None:
        memo.update(fabric=view.network_links, jobs=order, picks=[out[j.job_id] for j in order])
    return out


def _compiled_greedy(view: CommView, order: list[CommJob], memo: dict | None, same: int,
                     prev_picks: list, per_job: bool = False) -> dict[str, dict[int, int]] | None:
    """``least_congested`` where every candidate list is a ``PathSet`` (None where one is not): the same picks, in one compiled
    loop over the flows (``greedy_kernel``); the jobs' chosen network links go to ``memo["links"]``
    (for ``links_meeting``).  ``per_job``: ``job_paths.least_congested_per_job``'s rule instead (one
    route per job, ``greedy_kernel.greedy_per_job``); its flows' links are kept alike, so CRUX's contention
    DAG under per-job paths is read from them too, not rebuilt from every flow's path."""
    from dlsched.comm.greedy_kernel import greedy, greedy_per_job

    cap, _ = _fabric_arrays(view)
    flat = _NET.get("flat")
    if flat is None or flat.cap is not cap:
        flat = _NET["flat"] = _FlatSets(view)
    known = flat.per_job  # a job's set numbers are this registry's
    sets, rates, sizes = [], [], []
    for k, job in enumerate(order):
        got = known.get(id(job))
        if got is None or got[0] is not job:
            if any(getattr(f.candidates, "routes", None) is None for f in job.flows):
                return None  # hand-made candidate lists: ``_by_listing``
            s = np.array([flat.number(f.candidates) for f in job.flows], dtype=np.int64)
            r = np.array([f.nbytes / job.iteration_s if job.iteration_s > 0 else 0.0 for f in job.flows],
                         dtype=np.float64)
            got = known[id(job)] = (job, s, r)
        sets.append(got[1])
        rates.append(got[2])
        sizes.append(len(job.flows))
    if len(known) > 4 * len(order) + 64:  # jobs gone from the view: forget them
        keep = {id(j) for j in order}
        for key in [key for key in known if key not in keep]:
            del known[key]
    n = int(sum(sizes))
    flow_set = np.concatenate(sets) if n else np.zeros(0, dtype=np.int64)
    fixed = np.full(n, -1, dtype=np.int64)  # the replayed jobs' picks, flow by flow; -1: to choose
    m = int(sum(sizes[:same]))
    last = memo.get("flat") if memo is not None else None
    if last is not None and last[0] is memo.get("jobs") and len(last[1]) >= m:
        fixed[:m] = last[1][:m]  # the same jobs open the order: their flows open last time's picks
    else:
        at = 0
        for k in range(same):
            prev = prev_picks[k]
            fixed[at:at + sizes[k]] = [prev[i] for i in range(sizes[k])]
            at += sizes[k]
    A = flat.arrays()
    load = np.zeros(len(cap))
    least = np.zeros(len(cap), dtype=np.int64)
    pick = np.zeros(n, dtype=np.int64)
    links = np.empty((n, max(flat.max_hops, 1)), dtype=np.int64)
    if n and per_job:
        job_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=job_ptr[1:])
        greedy_per_job(job_ptr, flow_set, np.concatenate(rates), fixed, *A, cap, load, least, pick, links)
    elif n:
        greedy(flow_set, np.concatenate(rates), fixed, *A, cap, load, least, pick, links)
    if memo is not None:  # every flow's pick, for the next call's replayed jobs (``fixed`` above)
        memo["flat"] = (order, pick)
    out: dict[str, dict[int, int]] = {}
    at = 0
    picks_list = pick.tolist()
    for k, (job, m) in enumerate(zip(order, sizes)):
        out[job.job_id] = prev_picks[k] if k < same else dict(enumerate(picks_list[at:at + m]))
        at += m
    if memo is not None:
        memo.update(fabric=view.network_links, jobs=order, picks=[out[j.job_id] for j in order],
                    links=(order, np.asarray(sizes, dtype=np.int64), links))
    return out


def links_meeting(memo: dict, view: CommView) -> dict[str, set[str]] | None:
    """``base.shares_links`` under the picks of the last ``least_congested`` call with ``memo``, from the
    network links its compiled loop recorded (None where it did not run over exactly these jobs)."""
    got = memo.get("links")
    if got is None or len(got[0]) != len(view.jobs) or any(view.jobs.get(j.job_id) is not j for j in got[0]):
        return None
    order, sizes, links = got
    out: dict[str, set[str]] = {j: set() for j in view.jobs}
    if not len(links):
        return out
    n = len(order)
    job_of = np.repeat(np.arange(n, dtype=np.int64), sizes)
    mask = links >= 0
    pairs = np.unique(links[mask] * n + np.broadcast_to(job_of[:, None], links.shape)[mask])
    link, jobs = pairs // n, pairs % n
    starts = np.flatnonzero(np.r_[True, link[1:] != link[:-1]])
    counts = np.diff(np.r_[starts, len(link)])
    ids = [j.job_id for j in order]
    for s0, c in zip(starts[counts > 1].tolist(), counts[counts > 1].tolist()):
        members = {ids[q] for q in jobs[s0:s0 + c].tolist()}
        for j in members:
            out[j] |= members
    for j in out:
        out[j].discard(j)
    return out


class _FlatSets:
    """Every ``PathSet`` a fabric's flows have met, numbered, its grid flattened into growable arrays
    (``greedy_kernel``'s layout)."""

    def __init__(self, view: CommView):
        self.cap, self.net = _fabric_arrays(view)
        self.num: dict[int, tuple] = {}
        self.per_job: dict[int, tuple] = {}  # id(CommJob) -> (job, its flows' set numbers, their rates)
        self.meta = [np.zeros(0, dtype=np.int64) for _ in range(5)]  # rh_ptr, r_ptr, h_ptr, routes, hops
        self.grid = [np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_)]
        self.col = np.zeros(0, dtype=np.bool_)
        self.offsets = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.used = [0, 0, 0]  # rh, r, h
        self.max_hops = 0

    @staticmethod
    def _fit(a: np.ndarray, need: int) -> np.ndarray:
        if len(a) >= need:
            return a
        b = np.zeros(max(need, 2 * len(a), 64), dtype=a.dtype)
        b[:len(a)] = a
        return b

    def number(self, paths) -> int:
        got = self.num.get(id(paths))
        if got is not None and got[0] is paths:
            return got[1]
        first, width, offsets = paths.grid()
        R = len(first)
        H = first.shape[1] if R else 0
        net = self.net[first] if R else np.zeros((0, H), dtype=bool)
        p = self.count
        self.count += 1
        rh, r, h = self.used
        self.meta = [self._fit(a, p + 1) for a in self.meta]
        for a, v in zip(self.meta, (rh, r, h, R, H)):
            a[p] = v
        self.grid = [self._fit(a, rh + R * H) for a in self.grid]
        self.grid[0][rh:rh + R * H] = first.ravel()
        self.grid[1][rh:rh + R * H] = width.ravel()
        self.grid[2][rh:rh + R * H] = net.ravel()
        self.col = self._fit(self.col, h + H)
        self.col[h:h + H] = net.any(axis=0) if R else False
        self.offsets = self._fit(self.offsets, r + R)
        self.offsets[r:r + R] = offsets
        self.used = [rh + R * H, r + R, h + H]
        self.max_hops = max(self.max_hops, H)
        self.num[id(paths)] = (paths, p)
        return p

    def arrays(self) -> tuple:
        rh_ptr, r_ptr, h_ptr, routes, hops = self.meta
        return (rh_ptr, r_ptr, h_ptr, routes, hops, self.grid[0], self.grid[1], self.grid[2], self.col,
                self.offsets)


def _by_listing(view: CommView, candidates, load: dict[int, float], rate: float) -> int:
    best, best_key = 0, None
    for c, path in enumerate(candidates):
        net = _network_part(view, path)
        worst = max((load.get(l, 0.0) + rate / view.capacity[l] for l in net), default=0.0)
        key = (worst, sum(load.get(l, 0.0) for l in net), c)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


class _PortLoads:
    """``_by_listing``'s choice over a ``PathSet`` without listing its port combinations.

    The ports of one hop share one capacity, so on each switch route the least loaded port of every
    hop (the lowest on ties) gives that route's least worst link and least total load at once, and
    its lowest candidate index; routes are numbered in order, so among equal keys the first route
    wins.  Every route of a flow is scored at once over ``PathSet.grid`` (route x hop arrays), and
    each bundle's least loaded port is kept between flows (``least``, by the bundle's first link):
    loads only grow, so it changes only when a flow lands on that very port.  Hops off the network
    (never loaded) count as capacity infinity, i.e. nothing, and columns of them are dropped; the
    total load adds up hop by hop in route order, as a per-route loop does, so the floats are equal.
    """

    def __init__(self, view: CommView):
        self.cap, self.net = _fabric_arrays(view)
        self.load = np.zeros(len(self.cap))
        self.least = np.zeros(len(self.cap), dtype=np.int64)  # all idle: port 0 of every bundle

    def _static(self, paths) -> tuple:
        """Per ``PathSet`` (kept while the fabric is): its network columns, their first links and
        per-port capacities (infinite off the network), and per hop (first, width, network?) by route."""
        got = _NET["sets"].get(id(paths))
        if got is None or got[0] is not paths:
            first, width, offsets = paths.grid()
            net = self.net[first]
            cols = np.flatnonzero(net.any(axis=0)) if len(first) else np.zeros(0, dtype=np.int64)
            F = np.ascontiguousarray(first[:, cols])
            capF = np.where(net[:, cols], self.cap[F], np.inf)
            got = _NET["sets"][id(paths)] = (paths, F, capF, cols, first, width, offsets, net)
        return got

    def choose(self, paths, rate: float) -> int:
        _, F, capF, cols, first, width, offsets, net = self._static(paths)
        if not len(first):
            return 0
        k = self.least[F]
        if len(F) == 1:
            r = 0
        else:
            got = self.load[F + k]
            worst = (got + rate / capF).max(axis=1) if len(cols) else np.zeros(len(F))
            tied = np.flatnonzero(worst == worst.min())
            if len(tied) > 1 and len(cols):
                g = got[tied]
                total = g[:, 0]
                for h in range(1, len(cols)):
                    total = total + g[:, h]
                tied = tied[np.argmin(total):]
            r = int(tied[0])
        picks = [0] * first.shape[1]  # off-network bundles are never loaded: their port 0 is least
        for j, h in enumerate(cols.tolist()):
            picks[h] = int(k[r, j])
        c = 0
        for h, (f, w, p) in enumerate(zip(first[r].tolist(), width[r].tolist(), picks)):
            c = c * w + p
        self._add(first[r].tolist(), width[r].tolist(), picks, net[r].tolist(), rate)
        return int(offsets[r]) + c

    def _add(self, first: list, width: list, picks: list, on_net: list, rate: float) -> None:
        """A flow's rate onto the ports it takes, and each bundle's least loaded port kept."""
        for f, w, p, on in zip(first, width, picks, on_net):
            if on:
                l = f + p
                self.load[l] += rate / self.cap[l]
                if w > 1 and self.least[f] == p:
                    self.least[f] = int(self.load[f:f + w].argmin())

    def take(self, paths, index: int, rate: float) -> None:
        """Candidate ``index`` taken again (a replayed pick): the same load updates ``choose`` made for it."""
        _, F, capF, cols, first, width, offsets, net = self._static(paths)
        if not len(first):
            return
        r = int(np.searchsorted(offsets, index, side="right")) - 1
        rest = index - int(offsets[r])
        widths = width[r].tolist()
        picks = [0] * len(widths)
        for h in range(len(widths) - 1, -1, -1):
            rest, picks[h] = divmod(rest, widths[h])
        self._add(first[r].tolist(), widths, picks, net[r].tolist(), rate)
