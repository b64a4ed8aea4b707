"""Issue 22: truth separate from estimate, derived costs, deadline-aware ElasticFlow and Sia."""

from __future__ import annotations

import numpy as np
import pytest
from crius_helpers import small_trace

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.perf.measured.truth import ERROR_HI, ERROR_LO, MeasuredTimes, TruthPerfModel, estimation_accuracy, job_shapes, plan_deviation
from dlsched.policies.base import Allocation, JobState
from dlsched.policies.crius.common import CRIUS_REPLAN, FULL_REPLAN, fit_requests
from dlsched.policies.registry import make_policy, policy_class
from dlsched.policies.common.replan_costs import JOB_PROFILE_CAP_S, ReplanCosts
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model


def _jobs(testbed, **kw):
    jobs, removed = fit_requests(small_trace(**kw), testbed, shared_estimator(testbed))
    assert not removed
    return jobs


# ---------------------------------------------------------------- truth


def test_deviation_seeded_and_within_calibrated_bounds():
    devs = [plan_deviation(("bert", "1.3B", 256, "A40", n, f"p{n}"), seed=0) for n in range(400)]
    assert devs == [plan_deviation(("bert", "1.3B", 256, "A40", n, f"p{n}"), seed=0) for n in range(400)]
    mags = np.abs(devs)
    assert mags.min() >= ERROR_LO - 1e-12 and mags.max() <= ERROR_HI + 1e-12
    assert abs(mags.mean() - 0.066) < 0.005  # paper: 93.4% average accuracy
    assert any(d > 0 for d in devs) and any(d < 0 for d in devs)
    assert devs != [plan_deviation(("bert", "1.3B", 256, "A40", n, f"p{n}"), seed=1) for n in range(400)]


def test_truth_differs_from_the_estimate_the_policies_see(testbed, perf):
    # where nothing is measured (arena=False: the authors' table left out), truth is the optimum
    # off by the seeded deviation
    truth = TruthPerfModel(testbed, seed=0, estimator=shared_estimator(testbed), arena=False)
    spec = JobSpec("j", 0.0, "bert", 4, batch_size=256, total_iterations=10, gpu_type="A40", params="1.3B")
    gpus = truth.reference_gpus(spec)
    t, a = truth.iteration_time(spec, gpus), perf.iteration_time(spec, gpus)
    assert t != a and ERROR_LO - 1e-9 <= abs(t / a - 1) <= ERROR_HI + 1e-9


@pytest.mark.shared
def test_truth_is_the_authors_measurement_where_the_arena_table_has_it(testbed, shared_dir):
    if not (shared_dir / "anchors" / "profiles" / "arena-profiled-iteration-times.csv").is_file():
        pytest.skip("the arena iteration-time table is missing from ../shared/anchors/profiles")
    truth = TruthPerfModel(testbed, seed=0, estimator=shared_estimator(testbed))
    spec = JobSpec("j", 0.0, "bert", 4, batch_size=256, total_iterations=10, gpu_type="A40", params="1.3B")
    # bert 1.3B, batch 256, 2 nodes x 2 A40 (the tightest 4 A40s): 13.954123 s measured, no deviation
    assert truth.iteration_time(spec, truth.reference_gpus(spec)) == pytest.approx(13.954123)


def test_measured_time_replaces_the_model(testbed):
    m = get_model("bert", "1.3B")
    measured = MeasuredTimes.of([("bert", "1.3B", 256, "A40", 4, 1.234)])
    truth = TruthPerfModel(testbed, measured=measured, estimator=shared_estimator(testbed))
    spec = JobSpec("j", 0.0, "bert", 4, batch_size=256, total_iterations=10, gpu_type="A40", params="1.3B")
    assert truth.iteration_time(spec, truth.reference_gpus(spec)) == pytest.approx(1.234)
    acc = estimation_accuracy(truth, [(m, 256, "A40", 4)])
    assert acc.measured == 1 and acc.cells == 1


def test_accuracy_is_near_the_paper_calibration(testbed):
    # the deviation alone (no measured shapes) is what is calibrated to the paper's figures
    truth = TruthPerfModel(testbed, seed=0, estimator=shared_estimator(testbed), arena=False)
    acc = estimation_accuracy(truth, job_shapes(testbed, small_trace(n=20)))
    assert acc.cells > 20
    assert 0.90 < acc.mean < 0.97 and acc.worst < acc.mean


# ---------------------------------------------------------------- costs


def _job(testbed, n=8):
    spec = JobSpec("j", 0.0, "bert", n, batch_size=256, total_iterations=10, gpu_type="A40", params="1.3B")
    return JobState(spec, 10)


def test_authors_constants(testbed):
    a8 = Allocation.of(range(8))
    crius, full = ReplanCosts("cell", "authors"), ReplanCosts("full", "authors")
    assert crius.seconds(testbed, _job(testbed), a8, "start") == min(CRIUS_REPLAN[0] * 8, CRIUS_REPLAN[1])
    assert full.seconds(testbed, _job(testbed), a8, "start") == min(FULL_REPLAN[0] * 8, FULL_REPLAN[1])


def test_derived_costs_are_plans_times_plan_time(testbed):
    a16 = Allocation.of(range(16))
    full, cell = ReplanCosts("full", plan_s=30.0), ReplanCosts("cell", plan_s=30.0)
    job = _job(testbed, 16)
    shape = (int(testbed.gpu_type_idx[0]), 16)
    assert full.seconds(testbed, job, a16, "start") == full.plans(testbed, job, shape) * 30.0
    assert full.seconds(testbed, job, a16, "resume") == 0.0  # same shape: the plan is reused
    assert cell.plans(testbed, job, shape) < full.plans(testbed, job, shape)  # Cell-guided tuning prunes
    assert ReplanCosts("full", plan_s=15.0).price(testbed, job, shape) == full.price(testbed, job, shape) / 2


def test_cell_profiling_charged_once_and_capped(testbed):
    a8 = Allocation.of(range(8))
    on, off = ReplanCosts("cell", profile_cells=True), ReplanCosts("cell", profile_cells=False)
    job = _job(testbed)
    job.policy_data["_cells"] = 1000  # far beyond the cap
    first = on.seconds(testbed, job, a8, "start")
    assert first - off.seconds(testbed, _job(testbed), a8, "start") == JOB_PROFILE_CAP_S
    assert on.seconds(testbed, job, Allocation.of(range(4)), "resize") == on.price(testbed, job, (0, 4))


def test_crius_options_switch_costs(testbed, perf):
    jobs = _jobs(testbed, n=20, gap_s=60)
    res = {}
    for costs in ("derived", "authors"):
        p = make_policy("crius", costs=costs)
        res[costs] = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0)).run().summary
        assert p.describe()["costs"] == costs
    assert res["derived"]["avg_jct"] != res["authors"]["avg_jct"]


def test_bad_cost_mode_is_a_clear_error():
    from dlsched.errors import InputError

    with pytest.raises(InputError, match="costs must be one of"):
        make_policy("crius", costs="free")


# ---------------------------------------------------------------- baselines


@pytest.mark.parametrize("name,paper", [("elasticflow", "ElasticFlow"), ("sia", "Sia")])
def test_registered_with_their_paper(name, paper):
    assert paper in policy_class(name).paper


def test_elasticflow_admission_control(testbed, perf):
    jobs = _jobs(testbed, n=24, gap_s=60, deadline_slack=6.0)
    p = make_policy("elasticflow")
    res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    by = {r.job_id: r for r in res.records}
    impossible = [j.job_id for j in jobs if j.deadline - j.submit_time < 10]
    assert impossible and all(by[j].status == "dropped" and by[j].first_start is None for j in impossible)
    s = res.summary
    assert s["finished"] > 0 and s["finished"] + s["dropped"] == len(jobs) and s["unfinished"] == 0


def test_elasticflow_waits_instead_of_dropping_when_told(testbed, perf):
    # crowded: many jobs arrive at once, so some shares do not fit beside the admitted ones
    jobs = _jobs(testbed, n=40, gap_s=5, deadline_slack=40.0)
    runs = {}
    for reject in ("drop", "wait"):
        p = make_policy("elasticflow", reject=reject)
        runs[reject] = {r.job_id: r for r in Simulator(testbed, p, jobs, perf=perf,
                                                       config=SimConfig(seed=0, debug=True)).run().records}
    no_room = [j for j, r in runs["drop"].items() if "does not fit" in r.reason]
    assert no_room, "the workload must crowd the cluster for this test to mean anything"
    # waiting: nobody is dropped for want of room; jobs the drop rule refused run later
    assert not any("does not fit" in r.reason for r in runs["wait"].values())
    assert any(runs["wait"][j].status == "finished" for j in no_room)
    assert all(r.status in ("finished", "dropped") for r in runs["wait"].values())
    from dlsched.errors import InputError

    with pytest.raises(InputError, match="reject must be"):
        make_policy("elasticflow", reject="later")


def test_sia_runs_and_is_deterministic(testbed, perf):
    jobs = _jobs(testbed, n=24, gap_s=60)
    p = make_policy("sia")
    res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    assert res.summary["finished"] == len(jobs) and p.solves > 0  # debug: capacity checked every step
    again = Simulator(testbed, make_policy("sia"), jobs, perf=perf, config=SimConfig(seed=0)).run()
    assert again.summary == res.summary


def test_sia_skips_only_solves_whose_answer_is_the_present(testbed, perf, monkeypatch):
    # jobs spaced far apart: each runs alone at its best configuration, where re-solving every
    # resolve_s (and calling Sia every round) only repeated "everyone stays"
    jobs = _jobs(testbed, n=6, gap_s=4 * 3600)
    fast = make_policy("sia")
    res = Simulator(testbed, fast, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    import dlsched.policies.sia as sia
    monkeypatch.setattr(sia, "_at_best", lambda c, s: False)  # the solve-everything path
    full = make_policy("sia")
    ref = Simulator(testbed, full, jobs, perf=perf, config=SimConfig(seed=0)).run()
    assert [r.row() for r in res.records] == [r.row() for r in ref.records]
    assert 0 < fast.solves < full.solves, (fast.solves, full.solves)
    assert res.stats["schedule_calls"] < ref.stats["schedule_calls"]


def _sia_problem(cap: list[int], n_jobs: int, seed: int):
    """A random Sia ILP: every job may take 4, 8, 16 or 32 GPUs of any type, at random values."""
    rng = np.random.default_rng(seed)
    shapes = [(t, n) for t in range(len(cap)) for n in (4, 8, 16, 32)]
    keys = [(j, s) for j in range(n_jobs) for s in shapes]
    value = rng.uniform(1, 10, len(keys))
    args = (np.asarray(cap, dtype=float), n_jobs, np.array([j for j, _ in keys]), np.array([s[0] for _, s in keys]),
            np.array([s[1] for _, s in keys]), value)
    return args, shapes, keys


def _sia_brute_force(cap, n_jobs, shapes, keys, value) -> float:
    import itertools

    best = 0.0
    for pick in itertools.product([None] + shapes, repeat=n_jobs):
        used = [0] * len(cap)
        for s in pick:
            if s is not None:
                used[s[0]] += s[1]
        if all(u <= c for u, c in zip(used, cap)):
            best = max(best, sum(value[keys.index((j, s))] for j, s in enumerate(pick) if s is not None))
    return best


def _check_assignment(got, cap, keys, value) -> float:
    ours = sum(value[keys.index((j, s))] for j, s in got.chosen.items())
    assert ours == pytest.approx(got.value)
    assert got.gap == pytest.approx(max(0.0, 1 - ours / got.bound))
    for t in range(len(cap)):
        assert sum(s[1] for s in got.chosen.values() if s[0] == t) <= cap[t]
    return ours


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_sia_rounded_lp_against_brute_force(testbed, seed):
    """The LP relaxation's bound is at least the ILP's optimum, the rounded answer is feasible, and
    it loses at most the fractional jobs' values (one job per GPU type at most)."""
    from dlsched.policies.sia import rounded_lp

    cap = [int(c) for c in testbed.type_gpus]
    args, shapes, keys = _sia_problem(cap, 4, seed)
    got = rounded_lp(*args)
    best = _sia_brute_force(cap, 4, shapes, keys, args[-1])
    ours = _check_assignment(got, cap, keys, args[-1])
    assert got.bound >= best - 1e-9 >= ours - 2e-9
    assert best - len(cap) * args[-1].max() <= ours


def test_sia_solve_is_exact_against_brute_force(testbed):
    """Where the relaxation is fractional, the MIP (seeded with the rounded LP) finds the ILP's optimum
    on these small problems and proves it (gap 0); where it is integral, the LP's answer is kept."""
    from dlsched.policies.sia import rounded_lp, solve

    cap = [int(c) for c in testbed.type_gpus]
    fractional = 0
    for seed in range(3, 15):
        args, shapes, keys = _sia_problem(cap, 4, seed)
        got = solve(*args)
        best = _sia_brute_force(cap, 4, shapes, keys, args[-1])
        assert _check_assignment(got, cap, keys, args[-1]) == pytest.approx(best, rel=1e-9)
        assert got.gap == pytest.approx(0.0, abs=1e-9)
        lp = rounded_lp(*args)
        fractional += lp.gap > 0
        assert got.mip == (lp.gap > 0) and got.value >= lp.value
    assert fractional >= 3, "the seeds should give the MIP something to do"


def test_sia_mip_limits_and_determinism(testbed):
    """No nodes, or a problem over the column threshold: the rounded LP stands.  The node limit is a
    count, so the same problem gives the same answer every time, even when the limit stops it."""
    from dlsched.policies.sia import rounded_lp, solve

    cap = [int(c) for c in testbed.type_gpus]
    args, _, _ = _sia_problem(cap, 12, 7)
    lp = rounded_lp(*args)
    assert lp.gap > 0
    for off in (solve(*args, mip_nodes=0), solve(*args, mip_cols=len(args[-1]) - 1)):
        assert (off.chosen, off.value, off.bound, off.mip) == (lp.chosen, lp.value, lp.bound, False)
    for nodes in (1, 200):
        runs = [solve(*args, mip_nodes=nodes) for _ in range(3)]
        assert all((r.chosen, r.value, r.bound) == (runs[0].chosen, runs[0].value, runs[0].bound) for r in runs)
        assert runs[0].mip and runs[0].value >= lp.value and runs[0].bound <= lp.bound


def test_sia_solve_is_exact_when_the_relaxation_is_integral():
    """Ample capacity: every job gets its best configuration, and the gap is 0."""
    from dlsched.policies.sia import solve

    value = np.array([1.0, 1.8, 3.0, 1.0, 1.2, 1.1])  # two jobs, three configurations each
    got = solve(np.array([64.0]), 2, np.array([0, 0, 0, 1, 1, 1]), np.zeros(6, dtype=int),
                np.array([1, 2, 4, 1, 2, 4]), value)
    assert got.chosen == {0: (0, 4), 1: (0, 2)} and got.gap == 0.0 and got.value == pytest.approx(4.2)


def test_sia_prints_nothing(testbed, perf, capfd):
    """HiGHS is silenced by its own options (the MIP's included): nothing reaches file descriptor 1 or 2."""
    jobs = _jobs(testbed, n=12, gap_s=30)
    p = make_policy("sia")
    Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0)).run()
    out, err = capfd.readouterr()
    assert p.solves > 0 and p.mip_solves > 0 and out == "" and err == ""
    stats = p.solve_stats()
    assert stats["solves"] == p.solves and 0 <= stats["gap_mean_pct"] <= stats["gap_worst_pct"] < 100


# ---------------------------------------------------------------- the experiment's two settings


@pytest.mark.parametrize("name", ["crius", "fcfs", "gavel-admit", "elasticflow-ls", "sia", "elasticflow"])
def test_settings_price_every_policy(testbed, name):
    from dlsched.experiments.crius import _policy, engine_perf

    a8 = Allocation.of(range(8))
    authors = _policy(name, "authors").overhead(testbed, _job(testbed), None, a8, "start")
    derived = _policy(name, "derived").overhead(testbed, _job(testbed), None, a8, "start")
    assert authors == (40.0 if name == "crius" else 600.0)
    assert derived != authors
    assert isinstance(engine_perf(testbed, "derived"), TruthPerfModel)
    assert not isinstance(engine_perf(testbed, "authors"), TruthPerfModel)


def test_settings_table_reports_both_beside_the_paper():
    from dlsched.experiments.crius import settings_table

    row = {"avg_jct_h": 2.0, "ddl_ratio": 0.5}
    rows = {"crius": {"avg_jct_h": 1.0, "ddl_ratio": 0.4}, "fcfs": row, "crius-ddl": {"avg_jct_h": 1.0, "ddl_ratio": 0.6},
            "elasticflow": {"avg_jct_h": 1.0, "ddl_ratio": 0.3}}
    text = settings_table("sim", {"derived": rows, "authors": {**rows, "fcfs": {"avg_jct_h": 4.0}}})
    assert "| fcfs | +50.0% lower | +75.0% lower | 81.3% lower |" in text
    assert "DDL (derived): Crius-DDL meets 0.60 of all deadlines, deadline-aware ElasticFlow 0.30 (2.00x" in text


def test_sia_keeps_the_incumbent_on_a_tie(testbed):
    """Three identical jobs with one configuration each (GPT-6.7B fits no data-parallel plan, so
    16 A40s) and room for two: the running two keep their GPUs (no swap for no gain), and a round
    that finds the candidates where the last solve left them does not re-solve."""
    from dlsched.cluster.freemap import FreeMap
    from dlsched.policies.base import ClusterView, JobStatus

    p = make_policy("sia")
    spec = dict(model="gpt-6.7b", num_gpus=16, batch_size=16, total_iterations=10**6, gpu_type="A40")
    jobs = {k: JobState(JobSpec(k, float(i), **spec), 10**6) for i, k in enumerate("abc")}
    free = FreeMap(testbed)
    a40 = [g for g in range(testbed.num_gpus) if testbed.gpu_types[testbed.gpu_type_idx[g]].name == "A40"]
    for k, gpus in (("a", a40[:16]), ("b", a40[16:])):
        free.allocate(gpus)
        jobs[k].status, jobs[k].allocation = JobStatus.RUNNING, Allocation.of(gpus)
    running = {k: jobs[k] for k in "ab"}
    view = ClusterView(testbed, free, jobs, None, queue_fn=lambda: [jobs["c"]], running=running)
    assert not p.schedule(view, 10_000.0) and p.solves == 1  # a and b keep their GPUs; c waits
    assert not p.schedule(view, 10_060.0) and p.solves == 1  # unchanged: no second solve
    assert not p.schedule(view, 10_600.0) and p.solves == 2  # re-solved after resolve_s, same answer


def test_run_script_merges_partial_results(tmp_path):
    """``run.py --render a.json b.json``: runs of policy subsets make one table, later files winning."""
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "experiments" / "crius" / "run.py"
    spec = importlib.util.spec_from_file_location("crius_run", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"sim": {"derived": {"crius": {"avg_jct_h": 1.0}, "fcfs": {"avg_jct_h": 9.0}}}}))
    b.write_text(json.dumps({"sim": {"derived": {"fcfs": {"avg_jct_h": 2.0}, "sia": {"avg_jct_h": 4.0}},
                                     "authors": {"crius": {"avg_jct_h": 3.0}}}}))
    merged = mod._merge([a, b])
    assert merged == {"sim": {"derived": {"crius": {"avg_jct_h": 1.0}, "fcfs": {"avg_jct_h": 2.0},
                                          "sia": {"avg_jct_h": 4.0}},
                              "authors": {"crius": {"avg_jct_h": 3.0}}}}
