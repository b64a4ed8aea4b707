"""The driver of strict FCFS's compiled loop (``fcfs_kernel``): arrays in, prices on demand, results out.

It lays the trace and the cluster out as arrays, calls the kernel, prices each placement the kernel
has not seen (``perf.price`` and the policy's ``overhead``, the calls ``fcfs_loop`` makes, in its
order), grows the series and heap arrays when full, and at the end turns the arrays into what the
Python loop leaves behind: records of the finished jobs in trace order, the jobs still queued in the
core (``Simulator.result`` records them as unfinished), the series, the counters.

Used where ``fcfs_loop.applies`` and, on top, the perf model is ``spec_keyed`` (a price depends on
nothing of the job but its (model, variant, batch) and its GPU ids: what the kernel's price table is
keyed by), placement packs jobs (not ``first_free``) and the trace is large enough to pay for
loading numba (``MIN_JOBS``; ``DLSCHED_FCFS_KERNEL=1`` forces it, ``0`` turns it off).
"""

from __future__ import annotations

import os
from itertools import repeat
from math import ceil as _ceil
from operator import attrgetter

import numpy as np

from dlsched.policies.base import JobState, exclusive_allocation
from dlsched.report.records import JobRecord

MIN_JOBS = 50_000  # below this, loading numba (about 0.5 s) costs more than the kernel saves
# first sizes of the growing arrays (doubled when full: tests set them tiny to go through every
# growth), and the steps between progress reports
SIZES = {"series": None, "prices": 1 << 14, "heap": None, "progress_steps": 1 << 16}
# (None: the series 2 rows per job, about what a run stores; the heap 2 predictions per GPU, at most one job each)
_I64_MAX = 2**62  # iteration counts past this stay in Python ints (the Python loop)


def applies(sim) -> bool:
    """True where the compiled loop may run ``sim`` (``fcfs_loop.applies`` already holds)."""
    flag = os.environ.get("DLSCHED_FCFS_KERNEL", "")
    if flag == "0" or not getattr(sim.perf, "spec_keyed", False) or sim.core.free.first_free:
        return False
    if flag != "1" and len(sim.specs) < MIN_JOBS:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _topology(cluster) -> np.ndarray:
    """The cluster's index arrays (``fcfs_kernel.TOPO``) in one array, after their offsets."""
    def build():
        from dlsched.sim.fcfs_kernel import TOPO

        types = len(cluster.gpu_types)
        node_type = cluster.node_type.astype(np.int64)
        node_rack = cluster.node_rack.astype(np.int64)
        tn_ptr, tn_nodes, rt_ptr, rt_rack, rn_ptr, rn_nodes = [0], [], [0], [], [0], []
        for t in range(types):
            nodes = np.flatnonzero(node_type == t)
            tn_nodes += nodes.tolist()
            tn_ptr.append(len(tn_nodes))
            racks = node_rack[nodes]
            for r in sorted(set(racks.tolist())):
                rt_rack.append(r)
                rn_nodes += nodes[racks == r].tolist()
                rn_ptr.append(len(rn_nodes))
            rt_ptr.append(len(rt_rack))
        parts = {"gpu_node": cluster.gpu_node, "node_first": [nd.first_gpu for nd in cluster.nodes],
                 "node_count": [nd.num_gpus for nd in cluster.nodes], "node_rack": node_rack,
                 "node_type": node_type, "tn_ptr": tn_ptr, "tn_nodes": tn_nodes, "rt_ptr": rt_ptr,
                 "rt_rack": rt_rack, "rn_ptr": rn_ptr, "rn_nodes": rn_nodes}
        arrays = [np.asarray(parts[name], dtype=np.int64) for name in TOPO]
        offsets = np.cumsum([len(TOPO) + 1] + [len(x) for x in arrays])
        return np.concatenate([offsets, *arrays]).astype(np.int64)
    return cluster.derived("sim.fcfs_compiled.topology", build)


def _iterations(specs, perf) -> list[int]:
    """Each job's iterations, as ``Simulator.step`` sizes it at its arrival: ``max(1, ceil(duration /
    reference_time - 1e-9))`` unless the trace gives them, as whole arrays (one reference time per
    (model, variant, batch, GPUs, type): the key a ``spec_keyed`` model memoises it by)."""
    given = list(map(attrgetter("total_iterations"), specs))
    todo = [s for s, it in zip(specs, given) if it is None]
    if not todo:
        return [int(it) for it in given]
    key = attrgetter("model", "params", "batch_size", "num_gpus", "gpu_type")
    ref: dict = {}
    for s in todo:  # first in trace order, as the loop meets them
        k = key(s)
        if k not in ref:
            ref[k] = perf.reference_time(s)
    rt = np.array([ref[k] for k in map(key, todo)], dtype=np.float64)
    dur = np.fromiter(map(attrgetter("duration_s"), todo), np.float64, len(todo))
    with np.errstate(all="ignore"):
        x = np.ceil(dur / rt - 1e-9)
    if not (np.isfinite(x).all() and x.max() < _I64_MAX):  # Python's ints (or its error) for these
        rt_of = perf.reference_time
        return [max(1, int(_ceil(s.duration_s / rt_of(s) - 1e-9))) if it is None else int(it)
                for s, it in zip(specs, given)]
    sized = iter(np.maximum(x.astype(np.int64), 1).tolist())
    return [next(sized) if it is None else int(it) for it in given]


def _grown(a: np.ndarray) -> np.ndarray:
    """``a`` with its last axis doubled (zeros after)."""
    return np.concatenate([a, np.zeros_like(a)], axis=-1)


class _Prices:
    """The kernel's price table: (price key, GPU ids) -> (iteration time, exposed comm, start overhead);
    entry ``e``'s ints are ``EI[:, e]`` (key, GPU count, offset in ``ids``), its floats ``EF[:, e]``."""

    def __init__(self, size: int):
        self.count = self.used = 0
        self.table = np.zeros(4 * size, np.int64)
        self.EI = np.zeros((3, size), np.int64)
        self.EF = np.zeros((3, size))
        self.ids = np.zeros(4 * size, np.int64)

    def add(self, K, key: int, ids: np.ndarray, total: float, comm: float, cost: float) -> None:
        e, m = self.count, len(ids)
        if e == self.EI.shape[1]:
            self.EI, self.EF = _grown(self.EI), _grown(self.EF)
        while self.used + m > len(self.ids):
            self.ids = _grown(self.ids)
        EI, EF = self.EI, self.EF
        EI[0, e], EI[1, e], EI[2, e] = key, m, self.used
        EF[0, e], EF[1, e], EF[2, e] = total, comm, cost
        self.ids[self.used:self.used + m] = ids
        self.used += m
        self.count += 1
        if 2 * self.count > len(self.table):  # at most half full: short probes
            self.table = np.zeros(2 * len(self.table), np.int64)
            K.rehash(self.table, EI[0], EI[1], EI[2], self.ids, self.count)
        else:
            K.insert(self.table, EI[0], EI[1], EI[2], self.ids, e, key, ids, m)


def run(sim, progress=None) -> bool:
    """Run ``sim`` (after ``sim.start()``) to its end, as ``fcfs_loop.run`` would; False (nothing
    done) for a trace the arrays cannot hold: iteration counts past int64, a GPU type the cluster
    lacks or a job of no GPUs (the Python loop then reports it where it meets it)."""
    from dlsched.sim import fcfs_kernel as K

    core, specs, perf, policy, cluster = sim.core, sim.specs, sim.perf, sim.policy, sim.cluster
    n = len(specs)
    its = _iterations(specs, perf)
    if n and (max(its) >= _I64_MAX or min(map(attrgetter("num_gpus"), specs)) <= 0):
        return False
    type_ids: dict = {"": -1}
    try:
        for name in set(map(attrgetter("gpu_type"), specs)):
            if (name or "") not in type_ids:
                type_ids[name] = cluster.type_id(name)
    except Exception:
        return False
    keys: dict = {}
    JF, JI = np.zeros((K.N_JF, n)), np.zeros((K.N_JI, n), np.int64)
    JF[K.J_SUBMIT] = np.fromiter(map(attrgetter("submit_time"), specs), np.float64, n)
    JF[K.J_BATCH] = np.fromiter(map(attrgetter("batch_size"), specs), np.float64, n)
    JI[K.J_NEED] = np.fromiter(map(attrgetter("num_gpus"), specs), np.int64, n)
    JI[K.J_TYPE] = np.fromiter((type_ids[g or ""] for g in map(attrgetter("gpu_type"), specs)), np.int64, n)
    JI[K.J_KEY] = np.fromiter((keys.setdefault(k, len(keys))
                               for k in map(attrgetter("model", "params", "batch_size"), specs)), np.int64, n)
    JI[K.J_TOTAL] = its
    JI[K.J_VERSION] = JI[K.J_ENTRY] = -1
    free = core.free
    occ, node_free = np.zeros(cluster.num_gpus, np.int8), free.node_free.astype(np.int64)
    rtf, type_free = free.rack_type_free.astype(np.int64), free.type_free.astype(np.int64)
    topo = _topology(cluster)
    cap = SIZES["heap"] or 2 * cluster.num_gpus + 16
    HF, HI = np.zeros(cap), np.zeros((3, cap), np.int64)
    rows = SIZES["series"] or 2 * n + 16
    SF, SI = np.zeros((2, rows)), np.zeros((3, rows), np.int64)
    prices = _Prices(SIZES["prices"])
    scr = np.zeros((4, max(cluster.num_gpus, cluster.num_nodes)), np.int64)
    si, sf = np.zeros(K.N_INT, np.int64), np.zeros(K.N_FLOAT)
    si[K.I_FREE], si[K.I_RECORD], si[K.I_GPUS] = free.total_free, sim._record_series, sim._num_gpus
    si[K.I_CHUNK] = SIZES["progress_steps"] if progress is not None else 0
    sf[K.F_NOW] = sim.now
    price, overhead, start_s = perf.price, policy.overhead, core.costs.start_overhead_s
    while True:
        code = K.run(si, sf, JF, JI, HF, HI, SF, SI, prices.table, prices.EI, prices.EF, prices.ids, occ, node_free,
                     rtf, type_free, topo, scr)
        if code == K.DONE:
            break
        if code == K.MISS:  # a placement not priced yet: the Python loop's calls, in its order
            j, m = int(si[K.I_MISS_JOB]), int(si[K.I_MISS_N])
            ids = scr[0, :m].copy()
            gl = tuple(ids.tolist())
            spec = specs[j]
            fresh = JobState(spec, its[j], updated_at=spec.submit_time, queued_since=spec.submit_time)
            alloc = exclusive_allocation(gl)
            cost = overhead(cluster, fresh, None, alloc, "start")
            if cost is None:
                cost = start_s  # ``default_cost("start", ...)``
            ic = price(spec, gl, None)
            total = ic.total
            if not 0.0 < total < np.inf:
                raise core._error(
                    f"policy {policy.name}: job {spec.job_id} ({spec.model}) cannot run on GPUs "
                    f"{list(gl)[:8]}: iteration time {total} s, sharing factor 1.0 "
                    f"(e.g. the model does not fit in GPU memory)")
            prices.add(K, int(JI[K.J_KEY, j]), ids, total, ic.comm, cost)
        elif code == K.GROW_SERIES:
            SF, SI = _grown(SF), _grown(SI)
        elif code == K.GROW_HEAP:
            HF, HI = _grown(HF), _grown(HI)
        elif code == K.PROGRESS:
            progress(float(sf[K.F_NOW]), sim.done + int(si[K.I_DONE]), n)
    bufs = {"JF": JF, "SF": SF, "SI": SI}
    del prices, HF, HI, occ, node_free, rtf, type_free, JI, JF, SF, SI  # freed before the records are built
    _results(sim, its, si, sf, bufs)
    return True


def _results(sim, its, si, sf, bufs: dict) -> None:
    """What the Python loop leaves behind: finished records (trace order), queued jobs, series, counters.
    ``bufs`` holds the kernel's last arrays, each dropped once read (a million jobs' columns: 100 MiB)."""
    from dlsched.sim import fcfs_kernel as K

    core, specs = sim.core, sim.specs
    q, cursor = int(si[K.I_QHEAD]), int(si[K.I_CURSOR])
    sn = int(si[K.I_SERIES])
    ser, SF, SI = sim.series, bufs.pop("SF"), bufs.pop("SI")
    ser.time, ser.throughput = SF[0, :sn].tolist(), SF[1, :sn].tolist()
    ser.busy_gpus, ser.running_jobs, ser.queued_jobs = SI[0, :sn].tolist(), SI[1, :sn].tolist(), SI[2, :sn].tolist()
    ser._tail = float(sf[K.F_TAIL]) if si[K.I_TAIL] else None
    del SF, SI
    JF = bufs.pop("JF")
    done = specs[:q]  # strict FCFS: the first ``q`` jobs started, and every started job finished
    col = lambda row: JF[row, :q].tolist()  # noqa: E731  (one column at a time: its floats live on in the records)
    core.records.extend(map(
        JobRecord, map(attrgetter("job_id"), done),
        [s.model if not s.params else f"{s.model}-{s.params}" for s in done],
        map(attrgetter("num_gpus"), done), [s.gpu_type or "" for s in done], map(attrgetter("submit_time"), done),
        col(K.J_FIRST), col(K.J_FINISH), repeat("finished", q), its[:q],
        np.asarray(its[:q], dtype=np.float64).tolist(),  # ``round(float(total), 6)``: an integral float is its own
        (JF[K.J_QUEUED, :q] + 0.0).tolist(), col(K.J_RUN), col(K.J_GPUS), col(K.J_COMMT),
        repeat(0, q), repeat(0, q), repeat(0, q), map(attrgetter("deadline"), done), repeat("", q)))
    for j in range(q, cursor):  # still queued (nothing could place the head): recorded by ``result``
        spec = specs[j]
        t = spec.submit_time
        js = JobState(spec, its[j], updated_at=t, queued_since=t)
        core.jobs[spec.job_id] = js
        core.queue[spec.job_id] = js
    sim._records_in_order = True  # finished jobs [0, q) here, then the queued ones [q, n) by ``close``
    sim.now = float(sf[K.F_NOW])
    sim._thr, sim._seq, sim.cursor = float(sf[K.F_THR]), int(si[K.I_SEQ]), cursor
    sim.done += int(si[K.I_DONE])
    sim.events += int(si[K.I_EVENTS])
    sim.sched_calls += int(si[K.I_CALLS])
