"""Gandiva's introspective mode: profile running jobs, then pack, migrate, grow and shrink.

Profiling (``observe``) measures each running job's progress rate over a
window during which nothing about its placement changed (same GPUs, same
mode, same number of jobs sharing them): iterations done, read from the
engine's view, over seconds elapsed.  In the simulator that is the progress
the core accounted, including every cost it charged; live it is what the
workers reported.  The perf model's predicted rate is never read.  A rate
measured while ``k`` jobs shared the GPU is kept as ``rate * k`` (the speed
the job gets per turn), so windows with different co-tenant counts compare.

The GPU utilisation the paper's profiler reads from the driver orders the
packing candidates; the simulator has no driver, so that one figure is the
perf model's solo utilisation (``perf.interference.packed_job``), and so is
the memory check (packing needs the summed footprint to fit).  Whether a
packing is kept is decided on measured progress only.
"""

from __future__ import annotations

from dlsched.cluster.topology import Tier
from dlsched.perf.sharing.interference import packed_job
from dlsched.policies.base import ClusterView, JobState
from dlsched.policies.gandiva.plan import Plan, best_in_node
from dlsched.policies.gandiva.reactive import job_type
from dlsched.policies.gandiva.servers import locality, tightest

# ------------------------------------------------------------------ profiling


def signature(plan: Plan, jid: str) -> tuple:
    return plan.gpus[jid], plan.mode(jid), plan.sharing(jid)


def observe(view: ClusterView, plan: Plan, now: float, window_s: float, jids=None) -> list[str]:
    """Close every profiling window that has run its length unchanged; start those that changed.

    ``jids``: the planned jobs to look at (default all); a job whose placement did not change
    and whose window is not yet due is left as it is, so a caller that knows which jobs those
    are may pass only the others.  Returns the jobs whose window was closed or restarted."""
    progress_of, at = view.progress_of, view.now  # view.progress(job), without its call
    gpus, sharing, mode, jobs = plan.gpus, plan.sharing, plan.mode, plan.jobs
    started = []
    for jid in (jobs if jids is None else jids):
        job = jobs[jid]
        sig = gpus[jid], mode(jid), sharing(jid)  # signature(), inlined: every job, every round
        win = job.policy_data.get("win")
        if win is not None and win[2] == sig and now - win[0] >= window_s - 1e-9:
            done = progress_of(job, at)
            # from when it could run again: a move's downtime is the move's cost, not the placement's speed
            start = min(max(win[0], job.ready_at), now - 1e-9)
            rate = (done - win[1]) / (now - start)
            job.policy_data.setdefault("measured", {})[sig[1]] = rate * sig[2]
            if sig[1] == "exclusive":  # by size: grow-shrink keeps a size only if it is faster
                job.policy_data.setdefault("by_size", {})[len(sig[0])] = rate
            job.policy_data["win"] = (now, done, sig)
            started.append(jid)
        elif win is None or win[2] != sig:
            job.policy_data["win"] = (now, progress_of(job, at), sig)
            started.append(jid)
    return started


def restart_windows(view: ClusterView, plan: Plan, now: float, changed=None) -> list[str]:
    """Jobs whose placement the decision changed start a fresh window now (the old one no longer
    applies); ``changed``: ``plan.changed()`` when the caller has it.  Returns the jobs restarted."""
    started = []
    for jid in (plan.changed() if changed is None else changed):
        job = plan.jobs[jid]
        sig = signature(plan, jid)
        win = job.policy_data.get("win")
        if win is None or win[2] != sig:
            job.policy_data["win"] = (now, view.progress(job), sig)
            started.append(jid)
    return started


def utilisation(view: ClusterView, job: JobState) -> float:
    gtype = view.cluster.nodes[int(view.cluster.gpu_node[job.allocation.gpus[0]])].gpu
    return packed_job(job.spec, gtype).utilisation


# ------------------------------------------------------------------ time-slicing fairness


def rotate(plan: Plan, served) -> list[str]:
    """Round-robin inside each time-sliced node of 1-GPU jobs: the least-served jobs get
    the GPUs they need not share for the next quantum (Gandiva suspends a job and may resume
    it on another GPU of the server).  Over a few quanta every job gets its fair share
    (4/6 of a GPU each with six jobs on four GPUs, Fig. 9).  ``served(jid)``: the GPU time a
    job has had (0 for a job placed in this call).  Returns the jobs it moved."""
    c = plan.c
    moved = []
    for node in sorted(plan.shared_nodes()):
        jobs = sorted(plan.node_jobs(node))
        size = int(c.node_gpus[node])
        first = c.nodes[node].first_gpu
        gpus = list(range(first, first + size))
        # also evens out a server whose sharing has ended unevenly (two jobs on one GPU beside a free one)
        if all(len(plan.holders.get(g, ())) <= 1 for g in gpus):
            continue
        if any(plan.jobs[j].spec.num_gpus != 1 or len(plan.gpus[j]) != 1 or j in plan.packed for j in jobs):
            continue
        low, extra = divmod(len(jobs), size)
        # GPUs with fewer holders keep that role (fewer moves); each holds `low` jobs, `extra` hold one more
        by_load = sorted(gpus, key=lambda g: (len(plan.holders.get(g, ())), g))
        cap = {g: low + (1 if i >= size - extra else 0) for i, g in enumerate(by_load)}
        order = sorted(jobs, key=lambda j: (served(j), plan.jobs[j].spec.submit_time, j))
        light = [g for g in by_load if cap[g] == low]
        n_light = low * len(light)
        want: dict[str, list[int]] = {}
        for i, j in enumerate(order):
            want[j] = light if i < n_light else [g for g in by_load if cap[g] == low + 1]
        left = dict(cap)
        target: dict[str, int] = {}
        for j in order:  # stay put where the role allows
            g = plan.gpus[j][0]
            if g in want[j] and left[g] > 0:
                target[j] = g
                left[g] -= 1
        for j in order:
            if j not in target:
                g = next(g for g in want[j] if left[g] > 0)
                target[j] = g
                left[g] -= 1
        for j in order:
            if target[j] != plan.gpus[j][0]:
                plan.place(plan.jobs[j], (target[j],))
                plan.jobs[j].policy_data["rotating"] = True  # costs a suspend-resume, not a migration
                moved.append(j)
    return moved


# ------------------------------------------------------------------ packing


def pack_groups(view: ClusterView, plan: Plan, rejected: set, margin: float) -> None:
    """Decide the packing trials that have been measured, then start new ones.

    A group packed earlier is kept if its jobs' measured packed rates beat what
    time-slicing gave them (their measured per-turn rate over the number of
    jobs), on average by more than ``margin``; otherwise it goes back to
    time-slicing and the same mix of models (and batch sizes) is not packed
    again: their interference is a property of the models, and round-robin keeps
    forming new pairs of the same jobs.  New trials: time-sliced groups whose
    jobs all have a time-slicing measurement, lowest summed utilisation first,
    if their memory fits.
    """
    groups = _shared_groups(plan)

    def mix(hold):
        return tuple(sorted((plan.jobs[h].spec.model, plan.jobs[h].spec.params or "", plan.jobs[h].spec.batch_size)
                            for h in hold))
    for hold in groups:
        if not all(h in plan.packed for h in hold):
            continue
        key = mix(hold)
        gains = []
        for h in hold:
            m = plan.jobs[h].policy_data.get("measured", {})
            if "packed" not in m or "sliced" not in m:
                break
            # both per turn: packed over time-sliced speed; a time-sliced window that saw no progress
            # (every turn spent in a move's downtime) makes any packed progress a gain
            gains.append(m["packed"] / m["sliced"] if m["sliced"] > 0 else (2.0 + margin if m["packed"] > 0 else 1.0))
        else:
            if sum(gains) / len(gains) <= 1.0 + margin:
                plan.set_packed(hold, False)
                rejected.add(key)
            for h in hold:  # decided: a later change of co-tenants measures afresh
                plan.jobs[h].policy_data["measured"].pop("packed", None)
    # New trials.  The first group of a mix whose memory does not fit rules that mix out for good,
    # so a group of the same mix met after it in the plan's holder order is not tried: each
    # group's fit is asked, and that order is read only where a mix has groups on both sides.
    trials: dict[tuple, list] = {}
    for hold in groups:
        key = mix(hold)
        if key in rejected or any(h in plan.packed for h in hold):
            continue
        if not all("sliced" in plan.jobs[h].policy_data.get("measured", {}) for h in hold):
            continue
        gpu = plan.gpus[hold[0]][0]
        gtype = view.cluster.nodes[int(view.cluster.gpu_node[gpu])].gpu.name
        fits = view.perf.packing([plan.jobs[h].spec for h in hold], gtype).feasible
        trials.setdefault(key, []).append((hold, fits))
    candidates = []
    order = None
    for key, tried in trials.items():
        if not all(fits for _, fits in tried):
            rejected.add(key)
            if not any(fits for _, fits in tried):
                continue
            order = order or plan.holder_order()
            tried = sorted(tried, key=lambda t: min(order[g] for g in _group_gpus(plan, t[0])))
        for hold, fits in tried:
            if not fits:
                break
            candidates.append((sum(utilisation(view, plan.jobs[h]) for h in hold), tuple(hold)))
    for _, hold in sorted(candidates):
        plan.set_packed(list(hold), True)


def _group_gpus(plan: Plan, hold: list[str]) -> list[int]:
    """The GPUs whose holders are exactly ``hold`` (where ``_shared_groups`` can meet the group)."""
    want = set(hold)
    return [g for g in plan.gpus[hold[0]] if set(plan.holders[g]) == want]


def _shared_groups(plan: Plan) -> list[list[str]]:
    """Sets of jobs that share exactly the same GPUs (sorted ids), each once, in GPU order
    (read-only: one list while the holders do not change)."""
    return plan.derived_from_holders("shared_groups", _build_shared_groups)


def _build_shared_groups(plan: Plan) -> list[list[str]]:
    seen, out = set(), []
    holders = plan.holders
    for g in sorted(plan.shared):
        hold = holders[g]
        key = tuple(sorted(hold))
        if key in seen:
            continue
        if all(set(plan.gpus[h]) == set(plan.gpus[key[0]]) for h in key):
            seen.add(key)
            out.append(list(key))
    return out


# ------------------------------------------------------------------ migration


def deslice(plan: Plan) -> int:
    """Move time-sliced jobs to free GPUs (lowers the cluster's height); lowest priority moves first,
    so the higher-priority job keeps the GPUs it had.  Returns the number of moves."""
    moves = 0
    jobs, no_room = plan.jobs, plan.no_room
    for hold in sorted(_shared_groups(plan)):
        epoch = plan.free_epoch
        if all(no_room.get(("one node", jobs[h].spec.num_gpus, job_type(plan, jobs[h]))) == epoch for h in hold):
            continue  # whichever holder moves first, _free_one_node already found no room for it
        hold = sorted(hold, key=lambda h: (plan.jobs[h].spec.priority, -plan.jobs[h].spec.submit_time, h))
        for h in hold[:-1]:
            job = plan.jobs[h]
            gpus = _free_one_node(plan, job)
            if gpus is None:
                break
            plan.place(job, gpus)
            moves += 1
    return moves


def _free_one_node(plan: Plan, job: JobState) -> tuple[int, ...] | None:
    """Free GPUs for the job on one node: same affinity, then empty, then any node."""
    n = job.spec.num_gpus
    c = plan.c
    t = job_type(plan, job)
    question = ("one node", n, t)  # whether any node has n free GPUs: the free map alone answers
    if plan.no_room.get(question) == plan.free_epoch:
        return None
    nodes = plan.nodes_array(t)
    roomy = nodes[plan.scratch.node_free[nodes] >= n].tolist()  # the only nodes the loop below takes
    best = None
    for node in roomy:
        aff = plan.affinity(node)
        rank = 0 if aff == n else (1 if aff == 0 else 2)
        key = (rank, plan.height(node), node)
        if best is None or key < best[0]:
            best = (key, node)
    if best is None:
        plan.no_room[question] = plan.free_epoch
        return None
    return best_in_node(c, plan.free_in_node(best[1]), n)


def improve_locality(plan: Plan, ready) -> int:
    """Move exclusive jobs spread wider than they need (across servers, or across sockets/PCIe
    switches inside one) onto tighter free GPUs.  ``ready(jid)``: the job is past its start cost."""
    moves = 0
    for jid in plan.unsure:  # placed since the last look: which of them could be tighter
        own = plan.gpus[jid]
        if len(own) == plan.jobs[jid].spec.num_gpus and not _as_tight_as_can_be(plan, plan.jobs[jid], own):
            plan.loose.add(jid)
    plan.unsure.clear()
    for jid in sorted(plan.loose):  # the others cannot move: the search below would keep them
        job = plan.jobs[jid]
        own = plan.gpus[jid]
        if len(own) < 2 or plan.sharing(jid) > 1 or not ready(jid) or len(own) != job.spec.num_gpus:
            continue
        now_at = locality(plan, own)  # (loose: not yet as tight as that many GPUs can be)
        # the search for tighter GPUs sees the free map with the job's own GPUs freed; it found
        # nothing last time and no GPU has been freed or taken since: it finds nothing again
        question, seen = ("tighter", jid), (own, plan.free_epoch)
        if plan.no_room.get(question) == seen:
            pass
        elif plan.racks and now_at[0] == Tier.RACK and not _one_node_could_hold(plan, own, job_type(plan, job)):
            plan.no_room[question] = seen  # the search would return GPUs on several nodes again
        else:
            scratch = plan.scratch
            scratch.release(own)  # its GPUs are its alone (sharing 1): free while it looks
            best = plan.pick_free(len(own), job_type(plan, job))
            scratch.allocate(own)
            if best is not None and locality(plan, best) < now_at:
                plan.remove(jid)
                plan.place(job, best)
                moves += 1
                continue
            plan.no_room[question] = seen
        plan.keep(jid)  # what taking it off and putting it back did
    return moves


def _one_node_could_hold(plan: Plan, own: tuple[int, ...], t: int | None) -> bool:
    """Some node of the type has ``len(own)`` free GPUs once ``own`` is freed: without one,
    ``pick_free`` finds only GPUs on several nodes.  (First-free placement has its own rule:
    the search is never skipped under it.)"""
    scratch = plan.scratch
    if scratch.first_free:
        return True
    n = len(own)
    nodes = plan.nodes_array(t)
    if len(nodes) and int(scratch.node_free[nodes].max()) >= n:
        return True
    node_free = scratch.node_free
    mine: dict[int, int] = {}
    for g in own:
        node = plan.node_of(g)
        mine[node] = mine.get(node, 0) + 1
    # a typed job's own GPUs are of its type: each node it holds GPUs on is one the search may take
    return any(int(node_free[node]) + k >= n for node, k in mine.items())


def _as_tight_as_can_be(plan: Plan, job: JobState, own: tuple[int, ...]) -> bool:
    """No placement of that many GPUs of the job's type is tighter (a property of the placement)."""
    return locality(plan, own) <= tightest(plan, job_type(plan, job), len(own))


def defragment(plan: Plan, waiting_sizes, ready, threshold: int) -> int:
    """While a waiting job cannot find ``n`` free GPUs on one server although the cluster has
    them: take the non-idle server with the most free GPUs (at least ``threshold``) and move its
    single-server exclusive jobs to servers with fewer free GPUs, where they keep the same tier
    (the loss is negligible).  Repeats until no move helps.  ``waiting_sizes``: the GPU counts
    the waiting jobs ask for (each at least once)."""
    c = plan.c
    need = [k for k in waiting_sizes if k <= int(c.node_gpus.max())]
    if not need:
        return 0
    moves = 0
    tried: set[int] = set()
    n = min(need)
    while True:
        if any(plan.scratch.free_on_node(i) >= n for i in range(c.num_nodes)):
            return moves
        cands = [(plan.scratch.free_on_node(i), -i) for i in range(c.num_nodes)
                 if i not in tried and 0 < plan.scratch.free_on_node(i) < int(c.node_gpus[i])
                 and plan.scratch.free_on_node(i) >= threshold]
        if not cands:
            return moves
        node = -max(cands)[1]
        tried.add(node)
        free_here = plan.scratch.free_on_node(node)
        for jid in sorted(plan.node_jobs(node)):
            job = plan.jobs[jid]
            own = plan.gpus[jid]
            if plan.sharing(jid) > 1 or not ready(jid) or len({plan.node_of(g) for g in own}) > 1:
                continue
            dest = [(plan.scratch.free_on_node(i), i) for i in plan.nodes_of_type(job_type(plan, job))
                    if i != node and len(own) <= plan.scratch.free_on_node(i) < free_here]
            for _, i in sorted(dest):
                gpus = best_in_node(c, plan.free_in_node(i), len(own))
                if gpus is not None and c.tier(gpus) <= c.tier(own):
                    plan.place(job, gpus)
                    moves += 1
                    break


# ------------------------------------------------------------------ grow-shrink


def shrink_all(plan: Plan) -> int:
    """Give back every GPU an elastic job holds beyond its demand, keeping its tightest subset."""
    c = plan.c
    moves = 0
    for jid in sorted(plan.elastic):  # only a grown (so elastic) job holds more than it asked for
        job = plan.jobs[jid]
        own = plan.gpus[jid]
        if len(own) > job.spec.num_gpus:
            keep = best_in_node(c, list(own), job.spec.num_gpus) if len({plan.node_of(g) for g in own}) == 1 \
                else own[:job.spec.num_gpus]
            plan.place(job, keep)
            moves += 1
    return moves


def undo_slower_growth(plan: Plan) -> int:
    """An elastic job measured slower at its grown size than at the size before goes back to
    that size, and grows no further (introspection: the wider placement may cross sockets)."""
    c = plan.c
    moves = 0
    for jid in sorted(plan.elastic):  # only grow_all sets grown_from, on elastic jobs
        job = plan.jobs[jid]
        own = plan.gpus[jid]
        before = job.policy_data.get("grown_from")
        rates = job.policy_data.get("by_size", {})
        if before is None or len(own) <= before or len(own) not in rates or before not in rates:
            continue
        if rates[len(own)] <= rates[before]:
            plan.place(job, best_in_node(c, list(own), before))
            job.policy_data["grow_limit"] = before
            moves += 1
        del job.policy_data["grown_from"]
    return moves


def grow_all(plan: Plan) -> int:
    """Grow each elastic exclusive job to the largest power of two its server can give it
    (Fig. 11: 1 -> 2 -> 4 GPUs as the others leave), once its present size has been measured."""
    c = plan.c
    moves = 0
    for jid in sorted(plan.elastic):  # only elastic jobs grow
        job = plan.jobs[jid]
        own = plan.gpus[jid]
        nodes = {plan.node_of(g) for g in own}
        if not job.spec.elastic or plan.sharing(jid) > 1 or len(nodes) != 1:
            continue
        if len(own) not in job.policy_data.get("by_size", {}):
            continue
        node = nodes.pop()
        free = plan.free_in_node(node)
        size = 1
        limit = job.policy_data.get("grow_limit", len(own) + len(free))
        while size * 2 <= min(limit, len(own) + len(free)):
            size *= 2
        if size <= len(own):
            continue
        job.policy_data["grown_from"] = len(own)
        extra = best_in_node(c, free, size - len(own))
        plan.place(job, tuple(own) + tuple(extra))
        moves += 1
    return moves
