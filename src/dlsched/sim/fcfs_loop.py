"""Strict FCFS's own event loop: ``Simulator.step`` and ``FCFS.schedule`` in one pass, same results.

A million-job FCFS run spends most of its engine time on what the general loop needs for every
policy and strict FCFS does not: a ``Decision`` per call, the core diffing it into ``Action``s,
the view's queue, per-job policy scratch, handler dispatch.  Strict FCFS without a network model
only ever starts the queue's head jobs, in order, alone on free GPUs, and nothing re-prices a
running job, so its loop can be written out: arrivals append to the queue, completions free GPUs,
and each policy call places head jobs until one does not fit.

The same calls as the general path make every choice (``pick_gpu_ids`` on the engine's free map,
``perf.price``, the policy's ``overhead``), in the same order, and the core's bookkeeping for a
start and a finish (``_place``, ``_price``, ``settle``, ``_stop``, ``job_record``) is written out
with the same float operations, so ``jobs.csv``, ``series.csv`` and ``summary.json`` are
byte-identical (tests/sim/test_fcfs_loop.py compares both loops; ``DLSCHED_FCFS_LOOP=0`` turns
this one off).  Where the general path places a second job of one call on a scratch copy of the
free map, this loop places it on the engine's own map with the first job's GPUs already taken:
the two maps place alike (tests/cluster: the engine's map and a scratch copy after random changes).
"""

from __future__ import annotations

import math
import os
import time as _time
from heapq import heappop, heappush
from math import ceil as _ceil

from dlsched.cluster.placement import pick_gpu_ids
from dlsched.policies.base import JobState, JobStatus, exclusive_allocation
from dlsched.report.records import JobRecord as job_record

_COMPLETE, _READY = 0, 1  # the engine's heap kinds (sim/engine.py)
_RUNNING, _FINISHED = JobStatus.RUNNING, JobStatus.FINISHED
_INF = math.inf


def applies(sim) -> bool:
    """True when ``sim`` runs strict FCFS where this loop gives the general one's results."""
    from dlsched.policies.fcfs import FCFS

    p, cfg = sim.policy, sim.config
    return (type(p) is FCFS and not p.arena and p.period is None and p.schedule_on_events and p.only_starts_queued
            and sim.contention is None and not cfg.debug and cfg.max_time is None and not cfg.record_events
            and os.environ.get("DLSCHED_FCFS_LOOP", "1") != "0")


def run(sim, progress=None) -> None:
    """Step ``sim`` (after ``sim.start()``) to the end of its run, as ``while sim.step()`` would."""
    from dlsched.sim import fcfs_compiled

    if fcfs_compiled.applies(sim) and fcfs_compiled.run(sim, progress):
        sim._loop = "fcfs-compiled"
        return
    core, specs, perf, policy = sim.core, sim.specs, sim.perf, sim.policy
    n = len(specs)
    free, jobs, queue, running = core.free, core.jobs, core.queue, core.running
    comm_per_iter, release, append = core.comm_per_iter, core.free.release, core.records.append
    heap, version, contrib, series = sim._heap, sim._version, sim._contrib, sim.series
    cluster, costs, overhead = sim.cluster, core.costs, policy.overhead
    record_series, num_gpus = sim._record_series, sim._num_gpus
    times, busy_col, run_col, queue_col, thr_col = (series.time, series.busy_gpus, series.running_jobs,
                                                    series.queued_jobs, series.throughput)
    type_ids: dict[str, int | None] = {"": None}
    price, reference_time = perf.price, perf.reference_time
    job_state = JobState
    thr, seq, cursor, events, calls, done = sim._thr, sim._seq, sim.cursor, 0, 0, 0
    last = _time.perf_counter()
    step = 0
    while True:
        # ---- the next timestamp (``Simulator.step``'s head)
        if cursor >= n and not jobs:
            break
        while heap:  # superseded predictions (none in strict FCFS; kept as the general loop has it)
            top = heap[0]
            if top[2] > _READY or version.get(top[3]) == top[4]:
                break
            heappop(heap)
        t = specs[cursor].submit_time if cursor < n else _INF
        if heap and heap[0][0] < t:
            t = heap[0][0]
        if t == _INF:
            break
        changed = False
        first = cursor
        while cursor < n:  # arrivals
            spec = specs[cursor]
            if spec.submit_time != t:
                break
            it = spec.total_iterations
            if it is None:
                it = max(1, int(_ceil(spec.duration_s / reference_time(spec) - 1e-9)))
            else:
                it = int(it)
            jid = spec.job_id
            version[jid] = 0
            job = job_state(spec, it, updated_at=t, queued_since=t)
            jobs[jid] = job  # ``ExecutionCore.submit`` without its event log (off here) and
            queue[jid] = job  # FCFS's ``on_submit`` (the base class's: nothing)
            cursor += 1
            changed = True
        popped = 0
        while heap and heap[0][0] == t:
            _, _, kind, jid, ver = heappop(heap)
            popped += 1
            if version.get(jid) != ver:
                continue
            job = jobs[jid]
            if kind == _COMPLETE:  # ``Simulator._on_complete``
                del version[jid]
                thr -= contrib.pop(jid, 0.0)
                if not contrib:
                    thr = 0.0
                # ``ExecutionCore.finish`` for an exclusive job alone on its GPUs (no co-tenant to
                # re-price): ``settle``, ``_stop``, ``_record`` and ``job_record``, written out
                spec = job.spec
                upd = job.updated_at
                dt = t - upd
                if dt > 0:
                    job.run_time += dt
                    job.gpu_seconds += dt * (job.gpu_share or len(job.allocation.gpus))
                    ready = job.ready_at
                    start = upd if upd > ready else ready
                    rate = job.rate
                    if t > start and rate > 0:
                        prog = min(rate * (t - start), job.total_iterations - job.done_iterations)
                        job.done_iterations += prog
                        job.comm_time += prog * comm_per_iter.get(jid, 0.0)
                job.updated_at = t
                total_it = job.total_iterations
                job.done_iterations = float(total_it)
                job.finish_time = t
                release(job.allocation.gpus)
                del running[jid]
                job.allocation = None
                job.rate = 0.0
                job.status = _FINISHED
                append(job_record(spec.job_id, spec.model if not spec.params else f"{spec.model}-{spec.params}",
                                  spec.num_gpus, spec.gpu_type or "", spec.submit_time, job.first_start, t,
                                  "finished", total_it, round(job.done_iterations, 6), job.queued_time + 0.0,
                                  job.run_time, job.gpu_seconds, job.comm_time, job.restarts, job.migrations,
                                  job.resizes, spec.deadline, ""))
                del jobs[jid]
                queue.pop(jid, None)
                comm_per_iter.pop(jid, None)
                done += 1
                changed = True
            else:  # ready: the start overhead is paid (``_on_ready``, ``_set_contrib``)
                c = job.rate * job.spec.batch_size
                thr += c - contrib.get(jid, 0.0)
                contrib[jid] = c
        events += cursor - first + popped
        # ---- the policy call: ``FCFS.schedule`` and ``ExecutionCore.apply``, one job at a time
        if changed and queue and free.total_free:
            calls += 1
            placed = 0
            for job in queue.values():
                spec = job.spec
                tname = spec.gpu_type or ""
                ty = type_ids.get(tname, -1)
                if ty == -1:
                    ty = type_ids[tname] = cluster.type_id(tname)
                need = spec.num_gpus
                if placed:
                    if free.total_free == 0 or free.free_of_type(ty) < need:
                        break
                    gpus = pick_gpu_ids(free, need, ty)
                    if gpus is None:
                        break
                else:
                    # the head: it did not fit on these very free GPUs at the last call
                    fits = free.free_of_type(ty) >= need
                    pd = job.policy_data
                    if fits and pd.get("blocked_at") == free.version:
                        fits = False
                    gpus = pick_gpu_ids(free, need, ty) if fits else None
                    if gpus is None:
                        pd["blocked_at"] = free.version
                        break
                alloc = exclusive_allocation(tuple(sorted(gpus)))
                gl = alloc.gpus
                free.allocate(gl, mode="exclusive")
                placed += 1
                # ``ExecutionCore._place`` for a start
                jid = spec.job_id
                job.queued_time += t - job.queued_since
                cost = overhead(cluster, job, None, alloc, "start")
                if cost is None:
                    cost = costs.start_overhead_s  # ``default_cost("start", ...)``
                if job.first_start is None:
                    job.first_start = t
                job.status = _RUNNING
                job.allocation = alloc
                job.updated_at = t
                ready = job.ready_at = t + cost
                running[jid] = job
                # ``ExecutionCore._price``, exclusive and alone
                ic = price(spec, gl, None)
                total = ic.total
                if not 0.0 < total < _INF:
                    raise core._error(
                        f"policy {policy.name}: job {jid} ({spec.model}) cannot run on GPUs "
                        f"{list(gl)[:8]}: iteration time {total} s, sharing factor 1.0 "
                        f"(e.g. the model does not fit in GPU memory)")
                rate = job.rate = 1.0 / total
                comm_per_iter[jid] = ic.comm
                job.gpu_share = float(len(gl))
                # ``Simulator._predict``
                ver = version[jid] + 1
                version[jid] = ver
                seq += 1
                heappush(heap, ((ready if ready > t else t) + (job.total_iterations - job.done_iterations) / rate,
                                seq, _COMPLETE, jid, ver))
                if ready > t:
                    seq += 1
                    heappush(heap, (ready, seq, _READY, jid, ver))
                else:
                    c = rate * spec.batch_size
                    thr += c - contrib.get(jid, 0.0)
                    contrib[jid] = c
            for _ in range(placed):  # the started jobs were the queue's first ``placed``
                queue.popitem(last=False)
        # ---- the series sample (``Simulator.step``'s, in place)
        if record_series:
            th = thr if thr > 0.0 else 0.0
            busy, nrun, nq = num_gpus - free.total_free, len(running), len(queue)
            if times:
                if times[-1] == t:
                    busy_col[-1], run_col[-1], queue_col[-1], thr_col[-1] = busy, nrun, nq, th
                elif busy_col[-1] == busy and run_col[-1] == nrun and queue_col[-1] == nq and thr_col[-1] == th:
                    series._tail = t
                else:
                    series._tail = None
                    times.append(t)
                    busy_col.append(busy)
                    run_col.append(nrun)
                    queue_col.append(nq)
                    thr_col.append(th)
            else:
                series.add(t, busy, nrun, nq, th)
        sim.now = t
        if progress is not None:
            step += 1
            if not step & 1023 and _time.perf_counter() - last > 0.2:
                last = _time.perf_counter()
                sim.cursor, sim.done = cursor, sim.done + done
                done = 0
                progress(t, sim.done, n)
        if not (heap or cursor < n or not queue or running):
            break  # queued jobs that nothing can unblock: the run is over
    sim._thr, sim._seq, sim.cursor = thr, seq, cursor
    sim.done += done
    sim.events += events
    sim.sched_calls += calls
