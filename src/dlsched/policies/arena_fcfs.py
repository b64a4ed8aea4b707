"""The Crius authors' FCFS (sjtu-epcc/arena ``baselines/fcfs_sched.py``), for replaying their simulator.

``fcfs --option arena=true`` schedules as their baseline does, which differs from our strict
FCFS in two ways that decide who waits on a busy cluster:

- **a blocked job holds back only its own GPU type**: jobs queue in submission order (their
  trace order within a round, where the arena replay keeps it), and
  once one job of a type cannot start, no later job of that type is tried in that call;
  jobs of other types still start (their queue is per type, since each job names its type);
- **a job runs only at its tightest packing**: all its GPUs on one node if they fit in one
  (else whole nodes), on the nodes with the most free GPUs first, ties in node order (their
  "scatter" order); it waits rather than spread.

A job with no GPU type (never in their traces) is one more class of its own, placed on the
first type where it fits by the same rule, and tried only while some type is not held back.
"""

from __future__ import annotations


def tightest_spread(fm, n: int, t: int, per_node_cap: int) -> list[int] | None:
    """``n`` GPU ids of type ``t`` at the tightest packing, most-free nodes first; None if none."""
    per = n if n <= per_node_cap else per_node_cap
    if n % per:
        return None
    k = n // per
    nodes = [node for node in fm._type_nodes[t] if fm.free_on_node(node) >= per]
    if len(nodes) < k:
        return None
    nodes.sort(key=lambda node: -fm.free_on_node(node))  # stable: ties keep node order
    out: list[int] = []
    for node in nodes[:k]:
        out += fm.free_ids_of_node(node, per)
    return out


def node_capacity(cluster, t: int) -> int:
    """GPUs per node of type ``t`` (the largest, should a type have nodes of several sizes)."""
    caps = cluster.derived("arena_fcfs.node_cap", lambda: [
        int(cluster.node_gpus[cluster.node_type == i].max(initial=0)) for i in range(len(cluster.gpu_types))])
    return caps[t]


def schedule_by_type(view, decision, type_of, allocation) -> None:
    """One call of the authors' FCFS: queued jobs in order, each type blocked at its first misfit."""
    fm = None
    blocked: set = set()
    ntypes = len(view.cluster.gpu_types)
    # their queue: submission round, then trace order (kept by the arena replay), then job id
    queue = sorted(view.queued(), key=lambda j: (j.spec.submit_time, (j.spec.extra or {}).get("arena_order", 0)))
    for job in queue:
        t = type_of(view, job)
        if t in blocked:
            continue
        fm = fm or view.free.copy()
        n = job.spec.num_gpus
        types = range(ntypes) if t is None else (t,)
        gpus = None
        for tt in types:
            if fm.free_of_type(tt) >= n:
                gpus = tightest_spread(fm, n, tt, node_capacity(view.cluster, tt))
                if gpus is not None:
                    break
        if gpus is None:
            blocked.add(t)
            if all(i in blocked for i in range(ntypes)):
                break  # every type is held back: nothing later can start
            continue
        fm.allocate(gpus)
        decision.allocate[job.job_id] = allocation(tuple(sorted(gpus)))
