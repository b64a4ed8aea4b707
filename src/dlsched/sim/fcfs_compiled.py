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


def _cluster_arrays(cluster) -> dict:
    def build():
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
        arr = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
        return {"gpu_node": cluster.gpu_node.astype(np.int64), "node_first": arr([nd.first_gpu for nd in cluster.nodes]),
                "node_count": arr([nd.num_gpus for nd in cluster.nodes]), "node_rack": node_rack,
                "node_type": node_type, "tn_ptr": arr(tn_ptr), "tn_nodes": arr(tn_nodes), "rt_ptr": arr(rt_ptr),
                "rt_rack": arr(rt_rack), "rn_ptr": arr(rn_ptr), "rn_nodes": arr(rn_nodes)}
    return cluster.derived("sim.fcfs_compiled.arrays", build)


def _iterations(specs, perf) -> list[int]:
    """Each job's iterations, as ``Simulator.step`` sizes it at its arrival."""
    rt = perf.reference_time
    return [max(1, int(_ceil(s.duration_s / rt(s) - 1e-9))) if it is None else int(it)
            for s, it in zip(specs, map(attrgetter("total_iterations"), specs))]


class _Prices:
    """The kernel's price table: (price key, GPU ids) -> (iteration time, exposed comm, start overhead)."""

    def __init__(self):
        self.count = 0
        self.table = np.zeros(1 << 16, np.int64)
        self.key = np.zeros(1 << 14, np.int64)
        self.n = np.zeros(1 << 14, np.int64)
        self.ptr = np.zeros(1 << 14, np.int64)
        self.total = np.zeros(1 << 14)
        self.comm = np.zeros(1 << 14)
        self.cost = np.zeros(1 << 14)
        self.ids = np.zeros(1 << 16, np.int64)
        self.used = 0

    def add(self, K, key: int, ids: np.ndarray, total: float, comm: float, cost: float) -> None:
        e, m = self.count, len(ids)
        if e == len(self.key):
            for name in ("key", "n", "ptr", "total", "comm", "cost"):
                a = getattr(self, name)
                setattr(self, name, np.concatenate([a, np.zeros_like(a)]))
        while self.used + m > len(self.ids):
            self.ids = np.concatenate([self.ids, np.zeros_like(self.ids)])
        self.key[e], self.n[e], self.ptr[e] = key, m, self.used
        self.total[e], self.comm[e], self.cost[e] = total, comm, cost
        self.ids[self.used:self.used + m] = ids
        self.used += m
        self.count += 1
        if 2 * self.count > len(self.table):  # at most half full: short probes
            self.table = np.zeros(2 * len(self.table), np.int64)
            K.rehash(self.table, self.key, self.n, self.ptr, self.ids, self.count)
        else:
            K.insert(self.table, self.key, self.n, self.ptr, self.ids, e, key, ids, m)


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
    submit = np.fromiter(map(attrgetter("submit_time"), specs), np.float64, n)
    need = np.fromiter(map(attrgetter("num_gpus"), specs), np.int64, n)
    jty = np.fromiter((type_ids[g or ""] for g in map(attrgetter("gpu_type"), specs)), np.int64, n)
    jkey = np.fromiter((keys.setdefault(k, len(keys)) for k in map(attrgetter("model", "params", "batch_size"), specs)),
                       np.int64, n)
    batch = np.fromiter(map(attrgetter("batch_size"), specs), np.float64, n)
    total_it = np.array(its, dtype=np.int64)
    z = lambda dt=np.float64: np.zeros(n, dt)  # noqa: E731
    job = {"version": np.full(n, -1, np.int64), "upd": z(), "ready_at": z(), "rate": z(), "comm": z(), "contrib": z(),
           "in_contrib": np.zeros(n, np.bool_), "entry": np.full(n, -1, np.int64), "first_start": z(),
           "finish": z(), "queued": z(), "run_time": z(), "gpu_seconds": z(), "comm_time": z()}
    free = core.free
    state = {"occ": np.zeros(cluster.num_gpus, np.int8), "node_free": free.node_free.astype(np.int64),
             "rtf": free.rack_type_free.astype(np.int64), "type_free": free.type_free.astype(np.int64)}
    ca = _cluster_arrays(cluster)
    cap = 2 * cluster.num_gpus + 16
    heap = [np.zeros(cap), np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int64)]
    scap = 1 << 16
    series = [np.zeros(scap), np.zeros(scap, np.int64), np.zeros(scap, np.int64), np.zeros(scap, np.int64),
              np.zeros(scap)]
    prices = _Prices()
    nodes = cluster.num_nodes
    pick_out, cand, scratch = np.zeros(cluster.num_gpus, np.int64), np.zeros(nodes, np.int64), np.zeros(nodes, np.int64)
    si, sf = np.zeros(K.N_INT, np.int64), np.zeros(K.N_FLOAT)
    si[K.I_FREE] = free.total_free
    sf[K.F_NOW] = sim.now
    price, overhead, start_s = perf.price, policy.overhead, core.costs.start_overhead_s
    chunk = 1 << 16 if progress is not None else 0
    while True:
        code = K.run(si, sf, chunk, sim._record_series, sim._num_gpus, submit, need, jty, jkey, batch, total_it,
                     *job.values(), *heap, *series, prices.table, prices.key, prices.n, prices.ptr, prices.ids,
                     prices.total, prices.comm, prices.cost, *state.values(), *ca.values(), pick_out, cand, scratch)
        if code == K.DONE:
            break
        if code == K.MISS:  # a placement not priced yet: the Python loop's calls, in its order
            j, m = int(si[K.I_MISS_JOB]), int(si[K.I_MISS_N])
            gl = tuple(pick_out[:m].tolist())
            spec = specs[j]
            fresh = JobState(spec, its[j], updated_at=spec.submit_time, queued_since=spec.submit_time)
            alloc = exclusive_allocation(gl)
            cost = overhead(cluster, fresh, None, alloc, "start")
            if cost is None:
                cost = start_s  # ``default_cost("start", ...)``
            ic = price(spec, alloc.gpus, None)
            total = ic.total
            if not 0.0 < total < np.inf:
                raise core._error(
                    f"policy {policy.name}: job {spec.job_id} ({spec.model}) cannot run on GPUs "
                    f"{list(gl)[:8]}: iteration time {total} s, sharing factor 1.0 "
                    f"(e.g. the model does not fit in GPU memory)")
            prices.add(K, int(jkey[j]), pick_out[:m].copy(), total, ic.comm, cost)
        elif code == K.GROW_SERIES:
            series = [np.concatenate([a, np.zeros_like(a)]) for a in series]
        elif code == K.GROW_HEAP:
            heap = [np.concatenate([a, np.zeros_like(a)]) for a in heap]
        elif code == K.PROGRESS:
            progress(float(sf[K.F_NOW]), sim.done + int(si[K.I_DONE]), n)
    _results(sim, its, si, sf, job, series)
    return True


def _results(sim, its, si, sf, job, series) -> None:
    """What the Python loop leaves behind: finished records (trace order), queued jobs, series, counters."""
    from dlsched.sim import fcfs_kernel as K

    core, specs = sim.core, sim.specs
    q, cursor = int(si[K.I_QHEAD]), int(si[K.I_CURSOR])
    done = specs[:q]  # strict FCFS: the first ``q`` jobs started, and every started job finished
    core.records.extend(map(
        JobRecord, map(attrgetter("job_id"), done),
        [s.model if not s.params else f"{s.model}-{s.params}" for s in done],
        map(attrgetter("num_gpus"), done), [s.gpu_type or "" for s in done], map(attrgetter("submit_time"), done),
        job["first_start"][:q].tolist(), job["finish"][:q].tolist(), repeat("finished", q), its[:q],
        np.asarray(its[:q], dtype=np.float64).tolist(),  # ``round(float(total), 6)``: an integral float is its own
        (job["queued"][:q] + 0.0).tolist(), job["run_time"][:q].tolist(), job["gpu_seconds"][:q].tolist(),
        job["comm_time"][:q].tolist(), repeat(0, q), repeat(0, q), repeat(0, q), map(attrgetter("deadline"), done),
        repeat("", q)))
    for j in range(q, cursor):  # still queued (nothing could place the head): recorded by ``result``
        spec = specs[j]
        t = spec.submit_time
        js = JobState(spec, its[j], updated_at=t, queued_since=t)
        core.jobs[spec.job_id] = js
        core.queue[spec.job_id] = js
    sim._records_in_order = True  # finished jobs [0, q) here, then the queued ones [q, n) by ``close``
    sn = int(si[K.I_SERIES])
    s = sim.series
    s.time, s.busy_gpus, s.running_jobs, s.queued_jobs, s.throughput = (a[:sn].tolist() for a in series)
    s._tail = float(sf[K.F_TAIL]) if si[K.I_TAIL] else None
    sim.now = float(sf[K.F_NOW])
    sim._thr, sim._seq, sim.cursor = float(sf[K.F_THR]), int(si[K.I_SEQ]), cursor
    sim.done += int(si[K.I_DONE])
    sim.events += int(si[K.I_EVENTS])
    sim.sched_calls += int(si[K.I_CALLS])
