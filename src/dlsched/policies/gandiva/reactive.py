"""Gandiva's reactive mode: where a newly arrived (or still waiting) job goes.

The node-allocation algorithm of the paper (Algorithm 1, section 4.2.1), in
order of preference:

1. a node whose affinity equals the job's GPU demand and that still has the
   GPUs free, least loaded (lowest height) first;
2. an unaffined (empty) node, the smallest that fits;
3. any free GPUs, ignoring affinity (possibly across nodes: migration
   defragments later);
4. time-slicing on a node of the same affinity, least loaded first, joining
   the group of GPUs that has the fewest jobs taking turns on it, so that
   oversubscription stays balanced across servers (Fig. 7: two servers with
   six 1-GPU jobs each) -- never on GPUs whose jobs have a higher priority
   than this one (Gandiva never suspends a job for a lower-priority one);
5. otherwise the job waits.

Inside a node the GPUs with the tightest PCIe-switch/socket tier are taken.
Simplification: a job larger than one server is placed by steps 2-3 only
(on whole free servers first) and waits rather than time-slices; the paper
does not say how Algorithm 1 treats such jobs.
"""

from __future__ import annotations

from dlsched.policies.base import JobState
from dlsched.policies.gandiva.plan import Plan, best_in_node


def job_type(plan: Plan, job: JobState) -> int | None:
    name = job.spec.gpu_type
    if not name:
        return None
    ids = plan.c.derived("gandiva.type_ids", dict)  # asked for every queued job at every call
    got = ids.get(name)
    if got is None:
        got = ids[name] = plan.c.type_id(name)
    return got


def place_new(plan: Plan, job: JobState, allow_slice: bool = True) -> str | None:
    """Place ``job`` in the plan; returns the step that placed it ("affinity", "free-node",
    "any-free", "slice") or None when it must wait."""
    c = plan.c
    n = job.spec.num_gpus
    # the answer depends on these and the plan only: a long queue of alike jobs is searched once
    # until something moves (the same answer, far fewer searches)
    question = (n, job.spec.gpu_type, job.spec.priority, allow_slice)
    if plan.failed.get(question) == plan.version:
        return None
    t = job_type(plan, job)
    fits_one = plan.nodes_fitting(t, n)
    if fits_one:
        free_on_node = plan.scratch.free_on_node
        same = min(((plan.height(i), i) for i in plan.affine_nodes(n, fits_one) if free_on_node(i) >= n),
                   default=None)
        if same is not None:
            plan.place(job, best_in_node(c, plan.free_in_node(same[1]), n))
            return "affinity"
        empty = plan.first_empty(fits_one)
        if empty is not None:
            plan.place(job, best_in_node(c, plan.free_in_node(empty), n))
            return "free-node"
    gpus = plan.pick_free(n, t)
    if gpus is not None:
        plan.place(job, gpus)
        return "any-free"
    group = slice_target(plan, job, fits_one) if allow_slice and fits_one else None
    if group is None:
        plan.failed[question] = plan.version
        return None
    plan.place(job, group)
    return "slice"


def slice_target(plan: Plan, job: JobState, nodes: list[int]) -> tuple[int, ...] | None:
    """The GPUs of a same-affinity node to time-slice ``job`` onto (see the module docstring)."""
    n = job.spec.num_gpus
    prio = job.spec.priority
    best = None
    all_gpus, all_holders, jobs = plan.gpus, plan.holders, plan.jobs
    # order does not matter: keys differ by their GPUs, and the jobs of one group give one key;
    # a group is checked only if its key would beat the best so far (the same minimum)
    for node in plan.affine_nodes(n, nodes):
        height = plan.height(node)
        seen = set()
        for jid in plan.node_jobs_view(node):
            gpus = all_gpus[jid]
            if len(gpus) != n or gpus in seen:
                continue
            seen.add(gpus)
            holders = all_holders[gpus[0]]
            key = (len(holders), height, gpus)
            if best is not None and not key < best[0]:
                continue
            if n > 1 and any(set(all_holders[g]) != set(holders) for g in gpus):
                continue  # only whole groups that the same jobs hold (a grown job's GPUs are not one)
            if max(jobs[h].spec.priority for h in holders) > prio:
                continue
            best = (key, gpus)
    return None if best is None else best[1]
