"""The shortcuts of Dally's and Tiresias's place-or-preempt step give what the plain computations give.

``preempt_to_fit`` asks ``pick_gpus`` again only when a release touched a node or rack
that may now fit; a scratch map's best fit gives up at once when no node of the type is
large enough; Dally's priorities of running jobs come from one loop.  Each is compared
here with the plain computation on random states.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from dlsched.cluster import Cluster, FreeMap, Tier
from dlsched.cluster.placement import pick_gpus
from dlsched.policies.base import Allocation, ClusterView, JobState, JobStatus
from dlsched.policies.common.preemption import preempt_to_fit
from dlsched.policies.dally.priority import READINGS, priority, running_priorities
from dlsched.workload.job import JobSpec


def _plain_preempt_to_fit(cluster, scratch, n, type_id, max_tier, victims):
    """The step as first written: pick_gpus after every victim released."""
    trial, taken = None, []
    for v in victims:
        own = v.allocation.gpus
        if type_id is not None and int(cluster.gpu_type_idx[own[0]]) != type_id:
            continue
        trial = trial or scratch.copy()
        trial.release(own)
        taken.append(v)
        if trial.free_of_type(type_id) >= n:
            gpus = pick_gpus(trial, n, type_id, max_tier=max_tier)
            if gpus is not None:
                return gpus, trial, taken
    return None


def _job(i: int, gpus, submit: float = 0.0) -> JobState:
    spec = JobSpec(job_id=f"j{i}", submit_time=submit, model="resnet50", num_gpus=len(gpus), duration_s=3600.0)
    job = JobState(spec=spec, total_iterations=1000, status=JobStatus.RUNNING)
    job.allocation = Allocation.of(tuple(int(g) for g in gpus))
    return job


def _busy_map(c: Cluster, rng: random.Random):
    """A scratch map filled by random jobs of 1-16 GPUs, and those jobs as running victims."""
    fm = FreeMap(c).copy()
    jobs = []
    for i in range(rng.randint(20, 400)):
        n = rng.choice([1, 1, 1, 2, 2, 4, 8, 16])
        t = rng.choice([None, *range(len(c.gpu_types))])
        gpus = pick_gpus(fm, n, t, max_tier=rng.choice([Tier.NVLINK, Tier.RACK, Tier.NETWORK]))
        if gpus is None:
            continue
        fm.allocate(gpus)
        jobs.append(_job(i, gpus))
    rng.shuffle(jobs)
    return fm, jobs


@pytest.mark.parametrize("name", ["crius-sim", "dally-4racks"])
def test_preempt_to_fit_takes_the_victims_and_gpus_of_the_plain_step(name):
    c = Cluster.load(name)
    rng = random.Random(7)
    found = 0
    for _ in range(60):
        fm, jobs = _busy_map(c, rng)
        for _ in range(10):
            n = rng.choice([1, 2, 4, 8, 12, 16, 32])
            t = rng.choice([None, *range(len(c.gpu_types))])
            tier = rng.choice([Tier.NVLINK, Tier.RACK, Tier.NETWORK])
            victims = jobs[:rng.randint(0, len(jobs))]
            got = preempt_to_fit(c, fm, n, t, tier, victims)
            want = _plain_preempt_to_fit(c, fm, n, t, tier, victims)
            assert (got is None) == (want is None)
            if got is not None:
                found += 1
                assert np.array_equal(got[0], want[0])
                assert [v.job_id for v in got[2]] == [v.job_id for v in want[2]]
                assert np.array_equal(got[1].occupancy, want[1].occupancy)
    assert found > 50  # the comparison saw placements, not only failures


def test_a_scratch_best_fit_finds_what_the_engine_map_finds():
    c = Cluster.load("crius-sim")
    rng = random.Random(3)
    for _ in range(30):
        engine = FreeMap(c)
        for _ in range(rng.randint(0, 300)):
            gpus = pick_gpus(engine, rng.choice([1, 2, 4, 8, 16]), rng.choice([None, 0, 1, 2, 3]))
            if gpus is not None:
                engine.allocate(gpus)
        scratch = engine.copy()
        for t in range(len(c.gpu_types)):
            for n in (1, 2, 3, 4, 8, 16, 17):
                assert scratch.best_fit_node(t, n) == engine.best_fit_node(t, n)


def test_running_priorities_are_the_floats_priority_gives():
    c = Cluster.load("crius-sim")
    fm = FreeMap(c)
    rng = random.Random(11)
    jobs = []
    for i in range(300):
        gpus = pick_gpus(fm, rng.choice([1, 2, 4, 8]))
        j = _job(i, gpus, submit=rng.uniform(0, 100))
        j.total_iterations = rng.randint(1, 10**6)
        j.done_iterations = rng.choice([0.0, rng.uniform(0, j.total_iterations)])
        j.rate = rng.choice([0.0, rng.uniform(0, 50)])
        j.run_time = rng.choice([0.0, rng.uniform(0, 1e5)])
        j.gpu_seconds = j.run_time * len(gpus)
        j.updated_at = rng.uniform(0, 2e5)
        j.ready_at = j.updated_at + rng.choice([0.0, -5.0, rng.uniform(0, 600)])
        j.policy_data["dally_ideal_iter_s"] = rng.uniform(0.01, 2.0) if i % 3 else None
        if j.policy_data["dally_ideal_iter_s"] is None:
            del j.policy_data["dally_ideal_iter_s"]
        jobs.append(j)
    view = ClusterView(c, fm, {j.job_id: j for j in jobs}, perf=_Perf())
    for now in (0.0, 1e5, 2e5, 3e5):
        for reading in READINGS:
            want = [priority(view, j, now, reading) for j in jobs]
            got = running_priorities(view, jobs, now, reading)
            assert [x.hex() for x in got] == [x.hex() for x in want]


class _Perf:
    """Prices compute only, for the ideal iteration time of jobs without one remembered."""

    def price(self, spec, gpus, plan=None):
        from dlsched.perf.base import IterCost

        return IterCost(total=0.5, compute=0.25 * spec.num_gpus, comm=0.25)


class _HeldView:
    """The parts of a ClusterView that ``HeldJobs`` reads."""

    def __init__(self, running, prices_alone=True):
        self.running_jobs, self.prices_alone = running, prices_alone
        self.jobs = {j.job_id: j for j in running}

    def running(self):
        return list(self.running_jobs)

    def queued_count(self):
        return 0


@pytest.mark.parametrize("prices_alone", [True, False])
def test_held_jobs_rank_as_a_fresh_sort_of_every_running_job(prices_alone):
    from dlsched.policies.tiresias import HeldJobs, _rows

    rng = random.Random(5)
    held, running, thresholds = HeldJobs(), [], (3600.0, 36000.0)
    now, serial = 0.0, 0
    for step in range(200):
        now += rng.choice([0.0, 600.0, 1800.0])
        fresh = []
        for _ in range(rng.randint(0, 4)):  # started by the policy
            serial += 1
            j = _job(serial, range(rng.choice([1, 2, 4, 8])), submit=float(rng.randint(0, 50)))
            j.gpu_seconds = rng.choice([0.0, rng.uniform(0, 40000)])
            j.updated_at = now
            j.policy_data["tiresias_started"] = now
            fresh.append(j)
        running += fresh
        held.started(fresh)
        gone = [j for j in running if rng.random() < 0.05]  # finished or preempted
        running = [j for j in running if j not in gone]
        held.left(gone)
        if step % 50 == 17:
            stranger = _job(10**6 + step, [0])  # a job the policy was not told of
            stranger.policy_data["tiresias_started"] = now - 1200.0
            running.append(stranger)
        view = _HeldView(running, prices_alone)
        victims, neg = held.ranked(view, now, 600.0 - 1e-9, thresholds)
        want = sorted(_rows(running, now, 600.0 - 1e-9, thresholds))
        assert [v.job_id for v in victims] == [r[3].job_id for r in want]
        assert neg == [r[0] for r in want]
