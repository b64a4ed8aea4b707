"""GPU sharing through the core: exclusive, packed and time-sliced allocations cannot go wrong."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.core import EngineCosts, ExecutionCore
from dlsched.errors import InvariantError
from dlsched.perf.default import default_perf_model
from dlsched.policies.base import Allocation, Decision, JobPolicy, JobState, JobStatus
from dlsched.workload.job import JobSpec


class Idle(JobPolicy):
    name = "idle"

    def schedule(self, view, now):
        return Decision()


@pytest.fixture(scope="module")
def cluster():
    return Cluster.load("crius-testbed")


def core_with(cluster, *jobs, perf=None):
    core = ExecutionCore(cluster, Idle(), perf or default_perf_model(cluster), EngineCosts())
    for spec in jobs:
        core.submit(JobState(spec, 10_000), 0.0)
    return core


def spec(jid, model="resnet50", batch=32):
    return JobSpec(jid, 0.0, model, 1, batch, total_iterations=10_000)


def test_packed_jobs_run_at_the_interference_factors_under_the_default_perf_model(cluster):
    perf = default_perf_model(cluster)  # "adaptive": packing used to fall back to 1/n here
    core = core_with(cluster, spec("a"), spec("b", "vgg16"), perf=perf)
    core.apply(Decision(allocate={"a": Allocation.of([0], mode="packed"),
                                  "b": Allocation.of([0], mode="packed")}), 0.0)
    core.check(0.0)
    gpu = cluster.nodes[0].gpu.name
    fa, fb = perf.packing_factors([core.jobs["a"].spec, core.jobs["b"].spec], gpu)
    assert (fa, fb) != (0.5, 0.5) and 0 < fa < 1 and 0 < fb < 1
    solo = perf.iteration_time(core.jobs["a"].spec, [0])
    assert core.jobs["a"].rate == pytest.approx(fa / solo)


def test_exclusive_and_shared_never_mix_on_a_gpu(cluster):
    core = core_with(cluster, spec("a"), spec("b"), spec("c"))
    core.apply(Decision(allocate={"a": Allocation.of([0])}), 0.0)
    with pytest.raises(InvariantError, match="another sharing mode"):
        core.apply(Decision(allocate={"b": Allocation.of([0], mode="packed")}), 1.0)
    core = core_with(cluster, spec("a"), spec("b"))
    core.apply(Decision(allocate={"a": Allocation.of([0], mode="packed")}), 0.0)
    with pytest.raises(InvariantError, match="already held"):
        core.apply(Decision(allocate={"b": Allocation.of([0])}), 1.0)
    core = core_with(cluster, spec("a"), spec("b"))
    core.apply(Decision(allocate={"a": Allocation.of([0], mode="sliced")}), 0.0)
    with pytest.raises(InvariantError, match="another sharing mode"):
        core.apply(Decision(allocate={"b": Allocation.of([0], mode="packed")}), 1.0)


def test_a_packing_that_overflows_memory_is_the_policys_error(cluster):
    big = [JobSpec(j, 0.0, "gpt2-xl", 1, 16, total_iterations=10) for j in ("a", "b")]  # ~1.5 B parameters: 24 GB of state each
    core = core_with(cluster, *big)
    with pytest.raises(InvariantError, match="policy idle packed jobs on GPU 0 that overflow its memory"):
        core.apply(Decision(allocate={j.job_id: Allocation.of([0], mode="packed") for j in big}), 0.0)


def test_flipping_a_running_jobs_mode_is_applied(cluster):
    core = core_with(cluster, spec("a"), spec("b"))
    core.apply(Decision(allocate={"a": Allocation.of([0]), "b": Allocation.of([1])}), 0.0)
    solo = core.jobs["a"].rate
    acts = core.apply(Decision(allocate={"a": Allocation.of([0], mode="packed")}), 10.0)
    assert [a.kind for a in acts] == ["pack"]
    assert core.jobs["a"].allocation.mode == "packed" and core.jobs["a"].rate == solo  # alone: full speed
    acts = core.apply(Decision(allocate={"b": Allocation.of([0], mode="packed")}), 20.0)
    assert [a.kind for a in acts] == ["migrate", "rate"]  # b joins a; a slows down
    assert core.jobs["a"].rate < solo
    acts = core.apply(Decision(allocate={"b": Allocation.of([1])}), 30.0)
    assert [a.kind for a in acts] == ["rate", "migrate"]  # b leaves; a speeds up again
    assert core.jobs["a"].rate == solo
    acts = core.apply(Decision(allocate={"a": Allocation.of([0])}), 40.0)
    assert [a.kind for a in acts] == ["unpack"]
    assert core.free.mode[0] == 1  # exclusive again
    core.check(40.0)
    kinds = [e.kind for e in core.events if e.job_id == "a"]
    assert kinds == ["submit", "start", "ready", "pack", "ready", "unpack", "ready"]


def test_sliced_jobs_take_turns_and_pay_the_switch(cluster):
    costs = EngineCosts(slice_quantum_s=20.0, slice_switch_s=2.0)
    core = ExecutionCore(cluster, Idle(), default_perf_model(cluster), costs)
    for j in ("a", "b", "c"):
        core.submit(JobState(spec(j), 10_000), 0.0)
    core.apply(Decision(allocate={"a": Allocation.of([0])}), 0.0)
    solo = core.jobs["a"].rate
    core.apply(Decision(allocate={j: Allocation.of([0], mode="sliced") for j in "abc"}), 0.0)
    assert core.jobs["a"].rate == pytest.approx(solo * (1 - 2.0 / 20.0) / 3)
    core.check(0.0)


def test_debug_check_finds_a_gpu_holder_the_map_does_not_know(cluster):
    core = core_with(cluster, spec("a"), spec("b"))
    core.apply(Decision(allocate={"a": Allocation.of([0], mode="packed"),
                                  "b": Allocation.of([0], mode="packed")}), 0.0)
    core.holders[0].discard("b")
    with pytest.raises(InvariantError, match="holder lists"):
        core.check(0.0)


@pytest.mark.parametrize("mode", ["packed", "sliced"])
def test_a_shared_gpus_time_is_split_between_its_holders(cluster, mode):
    # counting a shared GPU whole for each holder put GPU-hours (and compute utilisation) above capacity
    core = core_with(cluster, spec("a"), spec("b"), spec("c", batch=16))
    core.apply(Decision(allocate={"a": Allocation.of([0], mode=mode), "b": Allocation.of([0], mode=mode),
                                  "c": Allocation.of([1, 2])}), 0.0)
    core.apply(Decision(preempt=["b"]), 100.0)  # b leaves: a holds GPU 0 alone from here
    for j in core.jobs.values():
        core.settle(j, 300.0)
    gs = {j.job_id: j.gpu_seconds for j in core.jobs.values()}
    assert gs["a"] == pytest.approx(100 * 0.5 + 200 * 1.0)
    assert gs["b"] == pytest.approx(100 * 0.5)
    assert gs["c"] == pytest.approx(300 * 2.0)


def test_jobs_adopted_after_a_restart_split_their_shared_gpu(cluster):
    # the live service rebuilds its state with adopt(): a packed pair adopted each counted GPU 0
    # whole, and the debug check did not know they shared it
    core = core_with(cluster)
    for jid in "ab":
        core.adopt(JobState(spec(jid), 10_000, status=JobStatus.RUNNING, updated_at=0.0,
                            allocation=Allocation.of([0], mode="packed")))
    core.adopt(JobState(spec("c"), 10_000, status=JobStatus.RUNNING, updated_at=0.0,
                        allocation=Allocation.of([1, 2])))
    assert core.holders == {0: {"a", "b"}}
    core.check(0.0)
    for j in core.jobs.values():
        core.settle(j, 100.0)
    assert {j.job_id: j.gpu_seconds for j in core.jobs.values()} == \
        pytest.approx({"a": 50.0, "b": 50.0, "c": 200.0})
