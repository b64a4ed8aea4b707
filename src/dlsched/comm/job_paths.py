"""Per-job path choice: CRUX's granularity (section 4.1, "For each job, CRUX selects the least congested
path from all available options"), and TACCL*'s as CRUX ran it (footnote 3: "selects the least
congested link for each job").

A job's path is one switch route, the same route number for every one of its inter-host flows (a
flow with fewer routes takes the number modulo its count; on a two-layer Clos the routes between two
ToRs are the aggregation switches, numbered alike for every ToR pair, so the job crosses one
aggregation switch).  Jobs in the policy's order each take the route whose most loaded network link
(the port each hop's bundle would give it: its least loaded) is least loaded once the job's flow
there is added; ties to the least total load, then the lowest route.  Parallel ports of one bundle
are not a path in the paper's sense (they join the same two switches): each flow on the job's route
takes its hop's least loaded port, as ``paths._PortLoads`` does.

``paths.least_congested`` (a path per flow) stays as ours: on a 1:1 Clos it gives every flow its own
port, which leaves nothing contended for priorities to order (docs/crux.md, "Mechanisms").
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from dlsched.comm.base import CommJob, CommView
from dlsched.comm import paths
from dlsched.comm.paths import _PortLoads, _network_part, replayed_prefix

PATH_MODES = ("job", "flow")


def check_mode(path: str) -> str:
    if path not in PATH_MODES:
        raise ValueError(f"path granularity {path!r}: one of {', '.join(PATH_MODES)}")
    return path


def least_congested_per_job(view: CommView, order: Iterable[CommJob],
                            memo: dict | None = None) -> dict[str, dict[int, int]]:
    """``least_congested``'s answer shape (job -> flow index -> candidate index), one route per job.

    ``memo``: as ``least_congested``'s, the jobs that open the order as last time replay their picks."""
    order = list(order)
    same, prev_picks = replayed_prefix(view, order, memo)  # ``links_meeting`` answers only per flow
    if paths.COMPILED:  # the same picks in one compiled loop (``greedy_kernel.greedy_per_job``)
        got = paths._compiled_greedy(view, order, memo, same, prev_picks, per_job=True)
        if got is not None:
            return got
    ports: _PortLoads | None = None
    listed: dict[int, float] = {}
    out: dict[str, dict[int, int]] = {}
    for k, job in enumerate(order):
        rates = [f.nbytes / job.iteration_s if job.iteration_s > 0 else 0.0 for f in job.flows]
        if any(getattr(f.candidates, "routes", None) is None for f in job.flows):
            out[job.job_id] = prev_picks[k] if k < same else _by_listing(view, job, rates, listed)
            if k < same:
                _load_listing(view, job, rates, out[job.job_id], listed)
            continue
        if ports is None:
            ports = _PortLoads(view)
        if k < same:
            picks = prev_picks[k]
            for i, f in enumerate(job.flows):
                ports.take(f.candidates, picks[i], rate=rates[i])
        else:
            picks = _choose(ports, job, rates)
        out[job.job_id] = picks
    if memo is not None:
        memo.update(fabric=view.network_links, jobs=order, picks=[out[j.job_id] for j in order])
    return out


def _choose(ports: _PortLoads, job: CommJob, rates: list[float]) -> dict[int, int]:
    statics = [ports._static(f.candidates) for f in job.flows]
    R = max((len(s[4]) for s in statics), default=0)
    worst = np.zeros(max(R, 1))
    total = np.zeros(max(R, 1))
    for s, rate in zip(statics, rates):
        _, F, capF, cols, first, width, offsets, net = s
        if not len(first) or not len(cols):
            continue
        got = ports.load[F + ports.least[F]]  # routes x network hops
        w = np.maximum.reduce(got + rate / capF, axis=1)  # ``.max(axis=1)`` without its Python wrapper
        t = got[:, 0]
        for h in range(1, len(cols)):
            t = t + got[:, h]
        if len(first) != R:  # fewer routes than the job's widest flow: route r is r modulo their count
            q = np.arange(R) % len(first)
            w, t = w[q], t[q]
        np.maximum(worst, w, out=worst)
        total = total + t
    tied = np.flatnonzero(worst == worst.min())
    r = int(tied[np.argmin(total[tied])]) if len(tied) > 1 else int(tied[0])
    picks: dict[int, int] = {}
    for i, (f, s, rate) in enumerate(zip(job.flows, statics, rates)):
        _, F, capF, cols, first, width, offsets, net = s
        if not len(first):
            picks[i] = 0
            continue
        q = r % len(first)
        hop_picks = [0] * first.shape[1]
        for h in cols.tolist():
            hop_picks[h] = int(ports.least[first[q, h]])
        c = 0
        for w_, p in zip(width[q].tolist(), hop_picks):
            c = c * w_ + p
        picks[i] = int(offsets[q]) + c
        ports._add(first[q].tolist(), width[q].tolist(), hop_picks, net[q].tolist(), rate)
    return picks


def _by_listing(view: CommView, job: CommJob, rates: list[float], load: dict[int, float]) -> dict[int, int]:
    """Hand-made candidate lists: candidate number ``c`` (modulo each flow's count) is the job's path."""
    n = max((len(f.candidates) for f in job.flows), default=0)
    best, best_key = 0, None
    for c in range(n):
        worst, total = 0.0, 0.0
        for f, rate in zip(job.flows, rates):
            net = _network_part(view, f.candidates[c % len(f.candidates)])
            worst = max([worst] + [load.get(l, 0.0) + rate / view.capacity[l] for l in net])
            total += sum(load.get(l, 0.0) for l in net)
        if best_key is None or (worst, total) < best_key:
            best, best_key = c, (worst, total)
    picks = {i: best % len(f.candidates) for i, f in enumerate(job.flows) if len(f.candidates)}
    _load_listing(view, job, rates, picks, load)
    return picks


def _load_listing(view, job, rates, picks, load) -> None:
    for i, (f, rate) in enumerate(zip(job.flows, rates)):
        if i in picks:
            for l in _network_part(view, f.candidates[picks[i]]):
                load[l] = load.get(l, 0.0) + rate / view.capacity[l]
