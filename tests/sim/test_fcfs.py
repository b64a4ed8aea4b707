import pytest

from dlsched.cluster import Cluster
from dlsched.perf.base import IterCost, PerfModel
from dlsched.policies.registry import make_policy, policy_names
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec
from dlsched.errors import UnknownNameError


class FixedPerf(PerfModel):
    def price(self, job, gpus, plan=None):
        return IterCost(1.0, 1.0, 0.0)


def run(policy, jobs, cluster_name="crius-testbed"):
    c = Cluster.load(cluster_name)
    return Simulator(c, make_policy(policy), jobs, perf=FixedPerf(c), config=SimConfig(debug=True)).run()


def j(jid, t, n, iters, gpu=None):
    return JobSpec(jid, t, "resnet50", n, 32, total_iterations=iters, gpu_type=gpu)


def test_registry():
    assert {"fcfs", "fcfs-backfill"} <= set(policy_names())
    with pytest.raises(UnknownNameError, match="fcfs"):
        make_policy("nope")


def test_strict_fcfs_blocks_behind_the_head():
    # 64 GPUs: a holds 40, b wants 32 (blocked), c wants 1 and must wait behind b
    jobs = [j("a", 0, 40, 100), j("b", 1, 32, 10), j("c", 2, 1, 10)]
    by = {r.job_id: r for r in run("fcfs", jobs).records}
    assert by["b"].first_start == 100 and by["c"].first_start == 100


def test_backfill_runs_short_jobs_without_delaying_the_head():
    jobs = [j("a", 0, 40, 100), j("b", 1, 50, 10), j("c", 2, 1, 10), j("d", 3, 20, 500)]
    by = {r.job_id: r for r in run("fcfs-backfill", jobs).records}
    assert by["c"].first_start == 2  # ends at 12, long before the head's reservation at 100
    assert by["b"].first_start == 100  # the head is not delayed
    assert by["d"].first_start >= 100  # 20 GPUs for 500 s would delay the head: not backfilled


def test_pinned_types_are_respected():
    jobs = [j("a", 0, 2, 10, "A40"), j("b", 0, 2, 10, "A10")]
    res = run("fcfs", jobs)
    c = Cluster.load("crius-testbed")
    assert all(r.status == "finished" for r in res.records)
    assert c.type_id("A40") != c.type_id("A10")


def test_fcfs_is_deterministic():
    jobs = [j(f"x{i}", i * 3.0, 1 + i % 8, 50 + 7 * i) for i in range(60)]
    a = run("fcfs-backfill", jobs)
    b = run("fcfs-backfill", jobs)
    assert a.records == b.records and a.summary == b.summary
    assert a.summary["finished"] == 60


@pytest.mark.parametrize("name", ["fcfs", "fcfs-backfill"])
def test_left_out_calls_change_nothing(name):
    # FCFS only starts queued jobs, so the simulator leaves out its calls with an empty queue or a
    # full cluster; the same run with every call made gives the same records and series
    from dlsched.workload.synthetic import philly_like

    c = Cluster.load("crius-testbed")
    jobs = philly_like(c, n_jobs=300, days=1.0, seed=3)
    runs = []
    for skip in (True, False):
        policy = make_policy(name)
        policy.only_starts_queued = skip
        runs.append(Simulator(c, policy, jobs, perf=FixedPerf(c), config=SimConfig(debug=True)).run())
    fewer, every = runs
    assert fewer.records == every.records and fewer.series == every.series
    assert fewer.summary == every.summary
    assert fewer.stats["schedule_calls"] < every.stats["schedule_calls"]


def test_exclusive_allocation_is_a_plain_one():
    from dlsched.policies.base import Allocation, exclusive_allocation

    fast = exclusive_allocation((2, 5))
    assert fast == Allocation((2, 5)) and hash(fast) == hash(Allocation((2, 5)))
    assert (fast.gpus, fast.plan, fast.mode, fast.shared) == ((2, 5), None, "exclusive", False)
