"""One cost rule for every policy: a job's change of shape costs the same whoever schedules it.

Only the plan search differs (Crius's Cell-guided search against the full search), and
Crius profiles a job's GPU types in parallel (section 8.2).
"""

from __future__ import annotations

import pytest

from dlsched.policies.base import Allocation, JobState
from dlsched.policies.common.replan_costs import ChargesReplanning, ReplanCosts
from dlsched.policies.registry import make_policy, policy_names
from dlsched.workload.job import JobSpec

# every registered policy is under the rule (none keeps the engine's default restore cost)
OUTSIDE: set[str] = set()


def _large(gpus=8) -> JobState:
    spec = JobSpec("j", 0.0, "bert", gpus, batch_size=256, total_iterations=100, params="1.3B")
    return JobState(spec, 100)


def _small() -> JobState:
    return JobState(JobSpec("s", 0.0, "resnet50", 1, batch_size=32, total_iterations=100), 100)


def test_every_comparison_policy_pays_the_rule():
    names = [n for n in policy_names() if n not in OUTSIDE]
    assert {"fcfs", "gavel-admit", "gavel", "gandiva", "crius", "elasticflow-ls", "sia"} <= set(names)
    for n in names:
        assert isinstance(make_policy(n), ChargesReplanning), f"{n} does not pay the one cost rule"


@pytest.mark.parametrize("costs", ["derived", "authors"])
def test_same_change_same_price_for_every_full_search_policy(testbed, costs):
    a8 = Allocation.of(range(8))
    want = ReplanCosts("full", costs).price(testbed, _large(), (int(testbed.gpu_type_idx[0]), 8))
    assert want > 0
    for n in ("fcfs", "fcfs-backfill", "gavel", "gavel-admit", "gandiva", "elasticflow-ls", "sia",
              "dally", "dally-manual", "dally-nowait", "dally-consolidated", "dally-noreoffer", "tiresias",
              "timeslice"):
        p = make_policy(n, costs=costs)
        assert p.overhead(testbed, _large(), None, a8, "start") == pytest.approx(want), n
        # a change back onto a shape the job has a plan for: checkpoint-resume, 0 s, for everyone
        # (Gandiva and its time-slicing add Gandiva's measured suspend-resume, at most 1 s)
        job = _large()
        p.overhead(testbed, job, None, a8, "start")
        assert p.overhead(testbed, job, a8, a8, "resume") == (1.0 if n in ("gandiva", "timeslice") else 0.0), n


def test_crius_pays_its_cheaper_search_by_the_same_rule(testbed):
    a8 = Allocation.of(range(8))
    crius = make_policy("crius", costs="authors")
    fcfs = make_policy("fcfs", costs="authors")
    assert crius.overhead(testbed, _large(), None, a8, "start") == 40.0  # 10 s/GPU, at most 40 s
    assert fcfs.overhead(testbed, _large(), None, a8, "start") == 600.0  # 150 s/GPU, at most 600 s


def test_data_parallel_model_has_no_search(testbed):
    # one plan: nothing to search, so nothing to charge under derived costs
    for n in ("fcfs", "crius", "sia", "dally", "tiresias", "timeslice"):
        assert make_policy(n).overhead(testbed, _small(), None, Allocation.of([0]), "start") == 0.0


def test_preempted_job_resumes_by_the_rule_not_the_engine_default(testbed):
    # Dally's and Tiresias's preemptions resume a checkpoint: 0 s on a shape the job has a plan for,
    # a plan search on a new one (as for every policy), never the engine's restore default
    a8, b8 = Allocation.of(range(8)), Allocation.of(range(8, 16))
    for n in ("dally", "tiresias"):
        p = make_policy(n)
        job = _small()
        assert p.overhead(testbed, job, None, Allocation.of([0]), "start") == 0.0
        assert p.overhead(testbed, job, None, Allocation.of([1]), "resume") == 0.0
        big = _large()
        first = p.overhead(testbed, big, None, a8, "start")
        assert first > 0 and p.overhead(testbed, big, None, b8, "resume") == 0.0
        assert p.overhead(testbed, big, None, Allocation.of(range(4)), "resume") > 0  # a new shape


def test_timeslice_pays_gandivas_measured_mechanisms_above_the_rule(testbed):
    # a small data-parallel job: the rule charges 0 s, Gandiva's measurements more
    p, g = make_policy("timeslice"), make_policy("gandiva")
    job = _small()
    one, other = Allocation.of([0]), Allocation.of([testbed.num_gpus - 1])
    for kind, old in (("resume", None), ("migrate", one)):
        got = p.overhead(testbed, job, old, other, kind)
        assert got > 0 and got == g.overhead(testbed, _small(), old, other, kind), kind


def test_cell_profiling_types_in_parallel(testbed):
    # the job waits for its slowest type's profiling, not the sum over types (Crius 8.2)
    from dlsched.perf.parallel.adaptive import shared_estimator
    from dlsched.workload.models import get_model

    crius = make_policy("crius")
    job = _large(4)
    thr, _, n_cells = crius._estimate_cells(testbed, job)
    est = shared_estimator(testbed)
    model = get_model("bert", "1.3B")
    per_type: dict[int, int] = {}
    for t, n in thr:
        per_type[t] = per_type.get(t, 0) + len(est.cells(model, 256, testbed.gpu_types[t].name, n))
    assert len(per_type) == 2 and n_cells == max(per_type.values()) < sum(per_type.values())


def test_the_cli_runs_baselines_under_either_cost_setting(tmp_path):
    import json

    from dlsched.cli import main

    out = tmp_path / "o"
    assert main(["simulate", "--cluster", "crius-testbed", "--jobs", "10", "--days", "0.05", "--quiet",
                 "--policy", "gavel-admit", "--option", "costs=authors", "--out", str(out)]) == 0
    params = json.loads((out / "summary.json").read_text())["params"]
    assert "authors" in json.dumps(params)  # the rule the run paid is written beside its results
