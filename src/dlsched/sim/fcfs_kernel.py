"""Strict FCFS's event loop compiled (numba), over flat arrays: ``fcfs_loop``'s steps, same floats.

``fcfs_loop.run`` spells out ``Simulator.step`` + ``FCFS.schedule`` + the core's bookkeeping for
a start and a finish; this is that loop again, on arrays indexed by the job's slot in the sorted
trace.  Strict FCFS only starts the queue's head, so the queue is the slots ``[qhead, cursor)``;
a job's counters are a few float columns; the free map is per-GPU occupancy with per-node,
per-(rack, type) and per-type free counts; placement is ``cluster.placement.pick_gpu_ids``
written out (best-fit node, then the fullest rack that fits, then fullest racks and nodes first;
ties as there); the heap orders (time, sequence number) as the tuples in ``heapq`` do.

Prices stay Python's: a price (and the start overhead) is a pure function of the job's (model,
variant, batch) and its GPU ids where the perf model is ``spec_keyed``, so the kernel looks them up
in a table keyed by both and, on a placement it has not seen, returns ``MISS`` with the GPU ids;
the driver (``fcfs_loop``) prices them with the same calls the Python loop makes, adds the entry
and calls again, and the kernel resumes at the same placement (the pick is repeated on the same
free map: the same ids).  It also returns to grow a full series or heap, and every ``chunk`` steps
for the progress bar.  All state lives in the arrays the driver holds, so a return costs nothing
but the call.

Determinism: no fastmath, no parallelism; each float is computed by the same operation, in the
same order, as in ``fcfs_loop`` (tests/sim/test_fcfs_loop.py compares the written bytes).
"""

from __future__ import annotations

import numpy as np

from dlsched.numba_cache import compiled as _compiled

# return codes
DONE, MISS, GROW_SERIES, GROW_HEAP, PROGRESS = 0, 1, 2, 3, 4
# int state slots
(I_PHASE, I_CURSOR, I_QHEAD, I_SEQ, I_HEAP, I_CALLS, I_EVENTS, I_DONE, I_PLACED, I_FREE, I_SERIES,
 I_NRUN, I_NCONTRIB, I_MISS_JOB, I_MISS_N, I_TAIL, I_STEPS, I_CHUNK, I_RECORD, I_GPUS) = range(20)
N_INT = 20
# float state slots
F_T, F_THR, F_TAIL, F_NOW = range(4)
N_FLOAT = 4
# rows of the per-job float (``JF``) and int (``JI``) columns
(J_SUBMIT, J_BATCH, J_UPD, J_READY, J_RATE, J_COMM, J_CONTRIB, J_FIRST, J_FINISH, J_QUEUED, J_RUN, J_GPUS,
 J_COMMT) = range(13)
N_JF = 13
J_NEED, J_TYPE, J_KEY, J_TOTAL, J_VERSION, J_INCONTRIB, J_ENTRY = range(7)
N_JI = 7
# the cluster's index arrays, in ``topo`` after their offsets
TOPO = ("gpu_node", "node_first", "node_count", "node_rack", "node_type", "tn_ptr", "tn_nodes", "rt_ptr",
        "rt_rack", "rn_ptr", "rn_nodes")

_COMPLETE, _READY = 0, 1
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)


@_compiled
def slot_hash(key, ids, m):
    """Hash of (price key, GPU ids) for the price table."""
    h = np.uint64(key) * _M1 + np.uint64(m)
    for i in range(m):
        h = (h ^ np.uint64(ids[i])) * _M2
        h ^= h >> np.uint64(29)
    return h


@_compiled
def lookup(table, e_key, e_n, e_ptr, e_ids, key, ids, m):
    """The price entry of (key, ids[:m]), or -1."""
    mask = table.shape[0] - 1
    s = np.int64(slot_hash(key, ids, m) & np.uint64(mask))
    while True:
        e = table[s] - 1
        if e < 0:
            return -1
        if e_key[e] == key and e_n[e] == m:
            p = e_ptr[e]
            same = True
            for i in range(m):
                if e_ids[p + i] != ids[i]:
                    same = False
                    break
            if same:
                return e
        s = (s + 1) & mask


@_compiled
def insert(table, e_key, e_n, e_ptr, e_ids, e, key, ids, m):
    """Put entry ``e`` (already filled in) in the table."""
    mask = table.shape[0] - 1
    s = np.int64(slot_hash(key, ids, m) & np.uint64(mask))
    while table[s] != 0:
        s = (s + 1) & mask
    table[s] = e + 1


@_compiled
def rehash(table, e_key, e_n, e_ptr, e_ids, count):
    for e in range(count):
        p = e_ptr[e]
        insert(table, e_key, e_n, e_ptr, e_ids, e, e_key[e], e_ids[p:p + e_n[e]], e_n[e])


# ---------------------------------------------------------------------- placement (pick_gpu_ids)

@_compiled
def _node_ids(node, want, occ, node_free, node_first, node_count, out, k):
    """Append the first ``want`` free GPU ids of ``node`` (ascending) to ``out`` from ``k``."""
    first = node_first[node]
    if node_free[node] == node_count[node]:
        c = node_count[node]
        top = want if want < c else c
        for i in range(top):
            out[k] = first + i
            k += 1
        return k
    got = 0
    for i in range(node_count[node]):
        if got == want:
            break
        if occ[first + i] == 0:
            out[k] = first + i
            k += 1
            got += 1
    return k


@_compiled
def _take(order, cnt, n, occ, node_free, node_first, node_count, out):
    k = 0
    for i in range(cnt):
        node = order[i]
        if node_free[node]:
            k = _node_ids(node, n - k, occ, node_free, node_first, node_count, out, k)
            if k == n:
                break
    return k


@_compiled
def _sift(keys, vals, root, end):
    while True:
        c = 2 * root + 1
        if c >= end:
            return
        if c + 1 < end and keys[c + 1] > keys[c]:
            c += 1
        if keys[c] <= keys[root]:
            return
        keys[root], keys[c] = keys[c], keys[root]
        vals[root], vals[c] = vals[c], vals[root]
        root = c


@_compiled
def _sort(keys, vals, cnt):
    """Sort ``keys[:cnt]`` ascending (distinct keys: any sort gives this order), ``vals`` alongside.
    A heapsort: numpy's sorts take seconds to compile, this a fraction."""
    for root in range(cnt // 2 - 1, -1, -1):
        _sift(keys, vals, root, cnt)
    for end in range(cnt - 1, 0, -1):
        keys[0], keys[end] = keys[end], keys[0]
        vals[0], vals[end] = vals[end], vals[0]
        _sift(keys, vals, 0, end)


@_compiled
def _sorted_nodes(cand, cnt, rack_free, node_rack, node_free, scratch, keys):
    """``cand[:cnt]`` by (-rack_free[rack], -node_free, node) into ``scratch``."""
    for i in range(cnt):
        nd = cand[i]
        keys[i] = ((-rack_free[node_rack[nd]]) * 4194304 - node_free[nd]) * 4194304 + nd
        scratch[i] = nd
    _sort(keys, scratch, cnt)


@_compiled
def pick(n, ty, ntypes, type_free, total_free, occ, node_free, rtf, node_first, node_count, node_rack,
         node_type, tn_ptr, tn_nodes, rt_ptr, rt_rack, rn_ptr, rn_nodes, out, cand, scratch, keys):
    """``pick_gpu_ids(freemap, n, ty or None)``'s ids into ``out`` (unsorted, as it returns them);
    the count taken, 0 where none fit."""
    t0, t1 = (0, ntypes) if ty < 0 else (ty, ty + 1)
    first_type = -1
    for t in range(t0, t1):  # the single node: best fit, ties to the lowest node id
        if type_free[t] < n:
            continue
        if first_type < 0:
            first_type = t
        best, best_k = -1, 1 << 40
        for i in range(tn_ptr[t], tn_ptr[t + 1]):
            nd = tn_nodes[i]
            k = node_free[nd]
            if n <= k < best_k:
                best, best_k = nd, k
                if k == n:
                    break
        if best >= 0:
            return _node_ids(best, n, occ, node_free, node_first, node_count, out, 0)
    for t in range(t0, t1):  # one rack: the fullest that fits, its nodes by free GPUs, most first
        if type_free[t] < n:
            continue
        bi, best_k = -1, 1 << 40
        for j in range(rt_ptr[t], rt_ptr[t + 1]):
            k = rtf[rt_rack[j], t]
            if n <= k < best_k:
                bi, best_k = j, k
                if k == n:
                    break
        if bi >= 0:
            cnt = 0
            for i in range(rn_ptr[bi], rn_ptr[bi + 1]):
                cand[cnt] = rn_nodes[i]
                cnt += 1
            # a stable sort by free GPUs, most first (ties: node id, as listed)
            for i in range(cnt):
                keys[i] = -node_free[cand[i]] * 4194304 + cand[i]
                scratch[i] = cand[i]
            _sort(keys, scratch, cnt)
            return _take(scratch, cnt, n, occ, node_free, node_first, node_count, out)
    if first_type >= 0:  # across racks, in the first type that has n free
        t = first_type
        cnt = 0
        for i in range(tn_ptr[t], tn_ptr[t + 1]):
            nd = tn_nodes[i]
            if node_free[nd] > 0:
                cand[cnt] = nd
                cnt += 1
        rack_free = np.empty(rtf.shape[0], np.int64)
        for r in range(rtf.shape[0]):
            rack_free[r] = rtf[r, t]
        _sorted_nodes(cand, cnt, rack_free, node_rack, node_free, scratch, keys)
        return _take(scratch, cnt, n, occ, node_free, node_first, node_count, out)
    if ty < 0 and total_free >= n:  # across types
        cnt = 0
        for nd in range(node_free.shape[0]):
            if node_free[nd] > 0:
                cand[cnt] = nd
                cnt += 1
        rack_free = np.zeros(rtf.shape[0], np.int64)
        for r in range(rtf.shape[0]):
            for u in range(rtf.shape[1]):
                rack_free[r] += rtf[r, u]
        _sorted_nodes(cand, cnt, rack_free, node_rack, node_free, scratch, keys)
        return _take(scratch, cnt, n, occ, node_free, node_first, node_count, out)
    return 0


@_compiled
def _count(ids, p, m, sign, gpu_node, node_rack, node_type, node_free, rtf, type_free):
    for i in range(p, p + m):
        nd = gpu_node[ids[i]]
        node_free[nd] += sign
        rtf[node_rack[nd], node_type[nd]] += sign
        type_free[node_type[nd]] += sign


# ---------------------------------------------------------------------- heap on (time, seq)

@_compiled
def _less(ht, hs, a, b):
    return ht[a] < ht[b] or (ht[a] == ht[b] and hs[a] < hs[b])


@_compiled
def _swap(ht, hs, hk, hj, a, b):
    ht[a], ht[b] = ht[b], ht[a]
    hs[a], hs[b] = hs[b], hs[a]
    hk[a], hk[b] = hk[b], hk[a]
    hj[a], hj[b] = hj[b], hj[a]


@_compiled
def _push(ht, hs, hk, hj, size, t, seq, kind, j):
    i = size
    ht[i], hs[i], hk[i], hj[i] = t, seq, kind, j
    while i > 0:
        p = (i - 1) >> 1
        if _less(ht, hs, i, p):
            _swap(ht, hs, hk, hj, i, p)
            i = p
        else:
            break
    return size + 1


@_compiled
def _pop(ht, hs, hk, hj, size):
    """Remove the top (read it first); returns the new size."""
    size -= 1
    if size > 0:
        ht[0], hs[0], hk[0], hj[0] = ht[size], hs[size], hk[size], hj[size]
        i = 0
        while True:
            a = 2 * i + 1
            if a >= size:
                break
            b = a + 1
            c = b if b < size and _less(ht, hs, b, a) else a
            if _less(ht, hs, c, i):
                _swap(ht, hs, hk, hj, c, i)
                i = c
            else:
                break
    return size


# ---------------------------------------------------------------------- the loop

@_compiled
def run(si, sf, JF, JI, HF, HI, SF, SI, table, EI, EF, e_ids, occ, node_free, rtf, type_free, topo, scr):
    """Step until the run ends (``DONE``) or the driver is needed (the other codes); see the module.

    Few arguments (a call's cost grows with them, and the driver calls again on every new price):
    per-job columns are rows of ``JF`` (floats) and ``JI`` (ints), the heap ``HF`` / ``HI``, the
    series ``SF`` / ``SI``, price entries ``EI`` / ``EF``, the cluster's index arrays packed in
    ``topo`` (``TOPO`` order, offsets first), scratch rows in ``scr``."""
    submit, batch, upd, ready_at, rate, comm, contrib = JF[J_SUBMIT], JF[J_BATCH], JF[J_UPD], JF[J_READY], \
        JF[J_RATE], JF[J_COMM], JF[J_CONTRIB]
    first_start, finish, queued, run_time, gpu_seconds, comm_time = JF[J_FIRST], JF[J_FINISH], JF[J_QUEUED], \
        JF[J_RUN], JF[J_GPUS], JF[J_COMMT]
    need, jty, jkey, total_it, version, in_contrib, entry = JI[J_NEED], JI[J_TYPE], JI[J_KEY], JI[J_TOTAL], \
        JI[J_VERSION], JI[J_INCONTRIB], JI[J_ENTRY]
    ht, hs, hk, hj = HF, HI[0], HI[1], HI[2]
    s_t, s_thr, s_busy, s_run, s_q = SF[0], SF[1], SI[0], SI[1], SI[2]
    e_key, e_n, e_ptr, e_total, e_comm, e_cost = EI[0], EI[1], EI[2], EF[0], EF[1], EF[2]
    gpu_node, node_first, node_count, node_rack, node_type = topo[topo[0]:topo[1]], topo[topo[1]:topo[2]], \
        topo[topo[2]:topo[3]], topo[topo[3]:topo[4]], topo[topo[4]:topo[5]]
    tn_ptr, tn_nodes, rt_ptr, rt_rack, rn_ptr, rn_nodes = topo[topo[5]:topo[6]], topo[topo[6]:topo[7]], \
        topo[topo[7]:topo[8]], topo[topo[8]:topo[9]], topo[topo[9]:topo[10]], topo[topo[10]:topo[11]]
    pick_out, cand, scratch, keys = scr[0], scr[1], scr[2], scr[3]
    chunk, record_series, num_gpus = si[I_CHUNK], si[I_RECORD], si[I_GPUS]
    inf = np.inf
    n = submit.shape[0]
    ntypes = type_free.shape[0]
    phase, cursor, qhead, seq, hsize = si[I_PHASE], si[I_CURSOR], si[I_QHEAD], si[I_SEQ], si[I_HEAP]
    calls, events, done, placed, total_free = si[I_CALLS], si[I_EVENTS], si[I_DONE], si[I_PLACED], si[I_FREE]
    sn, nrun, ncontrib, has_tail, steps = si[I_SERIES], si[I_NRUN], si[I_NCONTRIB], si[I_TAIL], si[I_STEPS]
    t, thr, tail, now = sf[F_T], sf[F_THR], sf[F_TAIL], sf[F_NOW]
    code = DONE
    while True:
        if phase == 0:  # ``Simulator.step``'s head: the next time, arrivals, completions
            if cursor >= n and qhead == cursor and nrun == 0:
                break
            while hsize > 0:  # superseded predictions
                if hk[0] > _READY or version[hj[0]] == 1:  # a started job's predictions: version 1
                    break
                hsize = _pop(ht, hs, hk, hj, hsize)
            t = submit[cursor] if cursor < n else inf
            if hsize > 0 and ht[0] < t:
                t = ht[0]
            if t == inf:
                break
            changed = False
            first = cursor
            while cursor < n:
                if submit[cursor] != t:
                    break
                version[cursor] = 0
                cursor += 1
                changed = True
            popped = 0
            while hsize > 0 and ht[0] == t:
                kind, j = hk[0], hj[0]
                hsize = _pop(ht, hs, hk, hj, hsize)
                popped += 1
                if version[j] != 1:  # every prediction is of version 1 (pushed at the start)
                    continue
                if kind == _COMPLETE:
                    version[j] = -1
                    thr -= contrib[j] if in_contrib[j] else 0.0
                    if in_contrib[j]:
                        in_contrib[j] = 0
                        ncontrib -= 1
                    if ncontrib == 0:
                        thr = 0.0
                    u = upd[j]
                    dt = t - u
                    if dt > 0:
                        run_time[j] += dt
                        gpu_seconds[j] += dt * float(need[j])
                        ready = ready_at[j]
                        start = u if u > ready else ready
                        r = rate[j]
                        if t > start and r > 0:
                            a = r * (t - start)
                            b = float(total_it[j]) - 0.0
                            prog = b if b < a else a
                            comm_time[j] += prog * comm[j]
                    upd[j] = t
                    finish[j] = t
                    e = entry[j]
                    p = e_ptr[e]
                    m = e_n[e]
                    for i in range(p, p + m):
                        occ[e_ids[i]] = 0
                    _count(e_ids, p, m, 1, gpu_node, node_rack, node_type, node_free, rtf, type_free)
                    total_free += m
                    nrun -= 1
                    done += 1
                    changed = True
                else:
                    c = rate[j] * batch[j]
                    thr += c - (contrib[j] if in_contrib[j] else 0.0)
                    if not in_contrib[j]:
                        in_contrib[j] = 1
                        ncontrib += 1
                    contrib[j] = c
            events += cursor - first + popped
            if changed and qhead < cursor and total_free > 0:
                calls += 1
                placed = 0
                phase = 1
            else:
                phase = 2
        if phase == 1:  # ``FCFS.schedule`` + ``ExecutionCore.apply``: the head jobs that fit
            while qhead < cursor:
                if hsize + 2 > ht.shape[0]:
                    code = GROW_HEAP
                    break
                j = qhead
                m = need[j]
                ty = jty[j]
                if total_free == 0 or (total_free if ty < 0 else type_free[ty]) < m:
                    break
                got = pick(m, ty, ntypes, type_free, total_free, occ, node_free, rtf, node_first, node_count,
                           node_rack, node_type, tn_ptr, tn_nodes, rt_ptr, rt_rack, rn_ptr, rn_nodes, pick_out,
                           cand, scratch, keys)
                if got == 0:
                    break
                ids = pick_out[:got]
                for i in range(got):
                    keys[i] = ids[i]
                _sort(keys, ids, got)  # distinct ids: sorted as ``tuple(sorted(gpus))``
                e = lookup(table, e_key, e_n, e_ptr, e_ids, jkey[j], ids, got)
                if e < 0:
                    si[I_MISS_JOB], si[I_MISS_N] = j, got
                    code = MISS
                    break
                for i in range(got):
                    occ[ids[i]] = 1
                _count(ids, 0, got, -1, gpu_node, node_rack, node_type, node_free, rtf, type_free)
                total_free -= got
                placed += 1
                queued[j] += t - submit[j]
                first_start[j] = t
                upd[j] = t
                ready = t + e_cost[e]
                ready_at[j] = ready
                nrun += 1
                entry[j] = e
                r = 1.0 / e_total[e]
                rate[j] = r
                comm[j] = e_comm[e]
                version[j] = 1
                seq += 1
                hsize = _push(ht, hs, hk, hj, hsize, (ready if ready > t else t) + (float(total_it[j]) - 0.0) / r,
                              seq, _COMPLETE, j)
                if ready > t:
                    seq += 1
                    hsize = _push(ht, hs, hk, hj, hsize, ready, seq, _READY, j)
                else:
                    c = r * batch[j]
                    thr += c - (contrib[j] if in_contrib[j] else 0.0)
                    if not in_contrib[j]:
                        in_contrib[j] = 1
                        ncontrib += 1
                    contrib[j] = c
                qhead += 1
            if code != DONE:
                break
            phase = 2
        if phase == 2:  # the series sample, then the end of the step
            if record_series:
                th = thr if thr > 0.0 else 0.0
                busy, nq = num_gpus - total_free, cursor - qhead
                if sn > 0 and s_t[sn - 1] == t:
                    s_busy[sn - 1], s_run[sn - 1], s_q[sn - 1], s_thr[sn - 1] = busy, nrun, nq, th
                elif (sn > 0 and s_busy[sn - 1] == busy and s_run[sn - 1] == nrun and s_q[sn - 1] == nq
                      and s_thr[sn - 1] == th):
                    tail = t
                    has_tail = 1
                else:
                    if sn == s_t.shape[0]:
                        code = GROW_SERIES
                        break
                    has_tail = 0
                    s_t[sn], s_busy[sn], s_run[sn], s_q[sn], s_thr[sn] = t, busy, nrun, nq, th
                    sn += 1
            now = t
            phase = 0
            steps += 1
            if not (hsize > 0 or cursor < n or qhead == cursor or nrun > 0):
                break
            if chunk > 0 and steps % chunk == 0:
                code = PROGRESS
                break
    si[I_PHASE], si[I_CURSOR], si[I_QHEAD], si[I_SEQ], si[I_HEAP] = phase, cursor, qhead, seq, hsize
    si[I_CALLS], si[I_EVENTS], si[I_DONE], si[I_PLACED], si[I_FREE] = calls, events, done, placed, total_free
    si[I_SERIES], si[I_NRUN], si[I_NCONTRIB], si[I_TAIL], si[I_STEPS] = sn, nrun, ncontrib, has_tail, steps
    sf[F_T], sf[F_THR], sf[F_TAIL], sf[F_NOW] = t, thr, tail, now
    return code

