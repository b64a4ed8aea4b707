"""Crius's search indexes (``GrowIndex``, ``ReleaseIndex``) give the same moves as the scans
they replace, so whole schedules are unchanged."""

from __future__ import annotations

import random

import pytest

from dlsched.cluster import Cluster
from dlsched.perf.default import default_perf_model
from dlsched.policies.crius.common import ShapeTable
from dlsched.policies.crius.search import (GrowIndex, ReleaseIndex, VirtualCluster, best_grow, best_release,
                                           ranked_moves)
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import philly_like


def random_state(rng: random.Random, n_jobs: int = 40, types: int = 3):
    tables, shapes = {}, {}
    free = [rng.randint(0, 24) for _ in range(types)]
    for i in range(n_jobs):
        jid = f"j{i:03d}"
        thr = {(t, n): rng.choice([1.0, 2.0, 3.5]) * n ** rng.uniform(0.5, 1.0) * (1 + t)
               for t in range(types) for n in (1, 2, 4, 8) if rng.random() < 0.8}
        if not thr:
            continue
        tables[jid] = ShapeTable.build(thr)
        shapes[jid] = rng.choice(sorted(thr))
    return free, shapes, tables


@pytest.mark.parametrize("seed", range(6))
def test_indexes_answer_as_the_scans_through_moves(seed):
    rng = random.Random(seed)
    free, shapes, tables = random_state(rng)
    grow, release = GrowIndex(tables, 0.05), ReleaseIndex(tables)
    indexed = VirtualCluster(list(free), dict(shapes), (grow, release))
    for index in (grow, release):
        index.sync(indexed.shapes)
    plain = VirtualCluster(list(free), dict(shapes))
    for step in range(25):
        skip = set(rng.sample(sorted(plain.shapes), 3))
        ref = best_grow(plain, tables, skip, 0.05)
        assert grow.best(indexed.free, skip, None) == ref
        t, need = rng.randrange(3), rng.randint(1, 12)
        assert best_release(indexed, tables, t, need, 3, 4, skip, 0.02) == \
            best_release(plain, tables, t, need, 3, 4, skip, 0.02)
        assert [g[0].job_id for g in release.ranked(t, 100, 0)[0]] == \
            [g[0].job_id for g in ranked_moves(plain, tables, t)][:100]
        if ref is not None:  # apply the move to both, as Crius does
            for vc in (indexed, plain):
                vc.apply([ref])
        elif plain.shapes:
            gone = rng.choice(sorted(plain.shapes))
            for vc in (indexed, plain):
                vc.remove(gone)


@pytest.mark.parametrize("policy", ["crius", "crius-ddl"])
def test_schedules_with_and_without_indexes_are_identical(policy):
    cluster = Cluster.load("crius-sim")
    jobs = philly_like(cluster, n_jobs=400, days=0.4, seed=5)
    runs = []
    for fast in (True, False):
        p = make_policy(policy)
        p.fast = fast
        res = Simulator(cluster, p, jobs, perf=default_perf_model(cluster), config=SimConfig(seed=0)).run()
        runs.append([r.row() for r in res.records])
    assert runs[0] == runs[1]


def test_running_shapes_reports_every_change():
    from dlsched.policies.base import Allocation, JobState
    from dlsched.policies.crius.common import RunningShapes
    from dlsched.workload.job import JobSpec

    cluster = Cluster.load("crius-sim")
    jobs = {f"j{i}": JobState(JobSpec(f"j{i}", 0.0, "resnet50", 1, total_iterations=10), 10) for i in range(4)}
    rec = RunningShapes()

    def run(**gpus):
        for jid, g in gpus.items():
            jobs[jid].allocation = Allocation.of(g)
        return [jobs[j] for j in gpus]

    running = run(j0=[0], j1=[1, 2], j2=[3])
    changed, gone = rec.update(cluster, running)
    assert set(changed) == {"j0", "j1", "j2"} and not gone
    assert rec.update(cluster, running) == ({}, set())  # nothing moved
    jobs["j1"].allocation = Allocation.of([4, 5, 6, 7])  # resized in place
    changed, gone = rec.update(cluster, [jobs["j0"], jobs["j1"]])  # j2 left
    assert set(changed) == {"j1"} and gone == {"j2"} and rec.shape["j1"][1] == 4
    shared = Allocation.of([8])  # one object held by two jobs: everything is reported again
    jobs["j0"].allocation = jobs["j3"].allocation = shared
    changed, gone = rec.update(cluster, [jobs["j0"], jobs["j1"], jobs["j3"]])
    assert set(changed) == {"j0", "j1", "j3"} and not gone
    assert set(rec.shape) == {"j0", "j1", "j3"}
    # a job that leaves while another starts on equal GPUs at the same place is still news
    jobs["j2"].allocation = Allocation.of([9])
    rec.update(cluster, [jobs["j2"]])
    jobs["j3"].allocation = Allocation.of([9])
    changed, gone = rec.update(cluster, [jobs["j3"]])
    assert set(changed) == {"j3"} and gone == {"j2"}


def test_running_shapes_from_named_jobs_agree_with_a_full_compare():
    """``update_some`` looks only at the jobs it is told may have changed; it gives what
    ``update`` gives, and refuses (None) when the engine's running count shows a change it
    was not told of.  After it, a full ``update`` still reports every change."""
    from dlsched.policies.base import Allocation, JobState
    from dlsched.policies.crius.common import RunningShapes
    from dlsched.workload.job import JobSpec

    cluster = Cluster.load("crius-sim")
    jobs = {f"j{i}": JobState(JobSpec(f"j{i}", 0.0, "resnet50", 1, total_iterations=10), 10) for i in range(5)}
    named, full = RunningShapes(), RunningShapes()

    def set_gpus(**gpus):
        for jid, g in gpus.items():
            jobs[jid].allocation = None if g is None else Allocation.of(g)
        return [j for j in jobs.values() if j.allocation is not None]

    steps = [dict(j0=[0], j1=[1, 2]), dict(j2=[3, 4, 5, 6]), dict(j1=None, j3=[7]), dict(j2=[100, 101])]
    for step in steps:
        running = set_gpus(**step)
        got = named.update_some(cluster, jobs, step, len(running))
        assert got == full.update(cluster, running)
        assert named.shape == full.shape
    # a job stopped without being named: the counts disagree and the caller must compare all
    jobs["j0"].allocation = None
    running = [j for j in jobs.values() if j.allocation is not None]
    assert named.update_some(cluster, jobs, (), len(running)) is None
    # its id lists were left behind by the named updates: every running job is news (a superset
    # of the changes, which the callers' index syncs treat as no-ops), and the departure is found
    changed, gone = named.update(cluster, running)
    assert set(changed) == {j.job_id for j in running} and gone == {"j0"}
    assert full.update(cluster, running) == ({}, {"j0"})
    assert named.shape == full.shape
    # an empty running set after a named update is still news to ``update``
    named.update_some(cluster, jobs, ("j4",), len(running))
    for j in jobs.values():
        j.allocation = None
    changed, gone = named.update(cluster, [])
    assert not changed and gone == {"j2", "j3"} and not named.shape


@pytest.mark.parametrize("policy", ["crius", "crius-ddl"])
def test_idle_rounds_skipped_without_changing_the_schedule(policy):
    """A round that changed nothing lets the simulator skip the rounds until the next event
    (``rounds_idle``): same records as calling Crius at every round, in fewer calls.  The
    deadline-aware variant depends on the clock and is never idle."""
    from dlsched.policies.crius.policy import Crius

    cluster = Cluster.load("crius-sim")
    jobs = philly_like(cluster, n_jobs=150, days=0.3, seed=7)
    runs = []
    for skip in (True, False):
        p = make_policy(policy)
        if not skip:
            p.rounds_idle = lambda: False
        res = Simulator(cluster, p, jobs, perf=default_perf_model(cluster), config=SimConfig(seed=0)).run()
        runs.append(([r.row() for r in res.records], res.stats["schedule_calls"]))
    assert runs[0][0] == runs[1][0]
    if policy == "crius":
        assert runs[0][1] < runs[1][1]  # rounds were skipped
    else:
        assert runs[0][1] == runs[1][1] and not Crius.deadline_aware


@pytest.mark.parametrize("seed", range(4))
def test_bounded_release_search_equals_full_enumeration(seed):
    """``best_release`` skips combinations by bounds on what they free and gain; the answer is
    the one enumerating them all, for every type, need, depth and skip set tried."""
    rng = random.Random(100 + seed)
    free, shapes, tables = random_state(rng, n_jobs=30)
    for _ in range(60):
        vc = VirtualCluster(list(free), dict(shapes))
        skip = set(rng.sample(sorted(shapes), 2))
        t, need, depth = rng.randrange(3), rng.randint(1, 20), rng.randint(1, 3)
        args = (vc, tables, t, need, depth, rng.choice([2, 4, 6]), skip, rng.choice([0.0, 0.02, 0.2]))
        fewest = rng.random() < 0.3
        assert best_release(*args, fewest_moves=fewest) == best_release(*args, fewest_moves=fewest, bounded=False)
