"""Dally (Algorithms 1 and 2, network-sensitive preemption) and its variants on small hand-made scenes."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.perf.default import default_perf_model
from dlsched.policies.base import ClusterView, JobState, JobStatus
from dlsched.policies.dally.priority import priority
from dlsched.policies.dally.tuner import DelayTuner
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec

H = 3600.0


def _cluster():
    return Cluster.load("dally-2racks")  # 2 racks x 8 machines x 8 GPUs


def _run(policy, jobs):
    c = _cluster()
    perf = default_perf_model(c, "placement", tier_profile="dally-table1")
    res = Simulator(c, policy, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    return {r.job_id: r for r in res.records}, res


def _blocked_scene(big_model="resnet50"):
    """16 seven-GPU jobs leave one free GPU on every machine; an 8-GPU job then finds no machine."""
    jobs = [JobSpec(f"b{i}", 0.0, "resnet50", 7, duration_s=48 * H) for i in range(16)]
    jobs.append(JobSpec("big", 10.0, big_model, 8, duration_s=1 * H))
    return jobs


def test_tuner_mean_plus_two_sample_sd_over_the_last_n_waits():
    t = DelayTuner({"machine": 7.0, "rack": 9.0}, history_n=3)
    assert t.timer("machine", 8, 0.0) == 7.0  # no history at all: the manual default
    t.record("machine", 8, 0.0, 10.0)
    assert t.timer("machine", 8, 1.0) == 10.0  # one wait: its value (no sample sd yet)
    t.record("machine", 8, 50.0, 20.0)
    t.record("machine", 8, 60.0, 30.0)
    assert t.timer("machine", 8, 60.0) == pytest.approx(20.0 + 2 * 10.0)
    assert t.timer("rack", 8, 60.0) == 9.0 and t.timer("machine", 4, 60.0) == 7.0  # per (level, demand)
    t.record("machine", 8, 70.0, 40.0)  # the list holds 3: the oldest wait (10) leaves
    assert t.timer("machine", 8, 70.0) == pytest.approx(30.0 + 2 * 10.0)
    t.record("network", 8, 60.0, 1.0)  # network acceptances are not tracked (Algorithm 1)
    assert t.samples("network", 8) == 0


def test_tuner_history_never_empties_with_time():
    # Algorithm 2's history limit is the list's size: a quiet spell must not send the tuner back to the
    # fixed default (a time window did, in 22-41% of evaluations)
    t = DelayTuner({"machine": 7.0, "rack": 9.0}, history_n=20)
    t.record("machine", 8, 0.0, 10.0)
    t.record("machine", 8, 0.0, 30.0)
    assert t.timer("machine", 8, 1e9) == pytest.approx(20.0 + 2 * 200 ** 0.5)
    assert t.counts["machine"].fallbacks == 0 and t.counts["machine"].evaluations == 1
    old = DelayTuner({"machine": 7.0, "rack": 9.0}, history_n=None, history_s=100.0)  # the time reading
    old.record("machine", 8, 0.0, 10.0)
    old.record("machine", 8, 0.0, 30.0)
    assert old.timer("machine", 8, 1e9) == 7.0 and old.counts["machine"].fallback_share == 1.0


def test_the_rack_timer_is_only_asked_for_once_the_machine_timer_ran_out():
    p = make_policy("dally", preempt=False)
    _run(p, _blocked_scene())
    counts = p.tuner_counts()
    assert counts["machine"]["evaluations"] > 0
    assert counts["rack"]["evaluations"] < counts["machine"]["evaluations"]


@pytest.mark.parametrize("rack_wait,recorded", [("stage", 0.0), ("whole", 12 * H)])
def test_a_rack_acceptance_records_the_wait_since_the_machine_timer_ran_out(rack_wait, recorded):
    # the big job waits out its 12 h machine timer (no history yet) and takes a rack at once: the rack
    # timer runs after the machine timer, so the rack list learns the rack stage's wait (0 s), not 12 h
    p = make_policy("dally", preempt=False, rack_wait=rack_wait)
    recs, _ = _run(p, _blocked_scene())
    assert recs["big"].first_start == pytest.approx(10.0 + 12 * H, abs=1.0)
    assert [w for _, w in p._tuner._waits[("rack", 8)]] == [pytest.approx(recorded, abs=1.0)]


def test_manual_timers_take_their_length_from_the_option():
    recs, _ = _run(make_policy("dally-manual", preempt=False, manual_h=1.0), _blocked_scene())
    assert recs["big"].first_start == pytest.approx(10.0 + 1 * H, abs=1.0)


def test_bad_rack_wait_is_a_clear_error():
    with pytest.raises(InputError, match="rack_wait"):
        make_policy("dally", rack_wait="half")


@pytest.mark.parametrize("name,start", [("dally-nowait", 10.0), ("dally-manual", 10.0 + 12 * H),
                                        ("dally", 10.0 + 12 * H), ("dally-consolidated", 48 * H)])
def test_delay_timers_decide_when_a_rack_offer_is_taken(name, start):
    recs, _ = _run(make_policy(name, preempt=False), _blocked_scene())
    big = recs["big"]
    assert big.status == "finished"
    assert big.first_start == pytest.approx(start, abs=1.0)


def test_priority_inferred_and_alternatives():
    c = _cluster()
    perf = default_perf_model(c, "placement", tier_profile="dally-table1")
    view = ClusterView(c, None, {}, perf, now=0.0)
    job = JobState(JobSpec("j", 0.0, "resnet50", 8, total_iterations=100), 100)
    assert priority(view, job, 0.0) == 0.0  # never ran: no work completed
    job.policy_data["dally_ideal_iter_s"] = 1.0  # ideal run: 100 s
    job.status, job.done_iterations, job.run_time, job.gpu_seconds = JobStatus.SUSPENDED, 50.0, 200.0, 1600.0
    assert priority(view, job, 0.0) == pytest.approx(0.5 / 2.0)  # work 0.5 / normalised run 2.0
    assert priority(view, job, 0.0, "inverted") == pytest.approx(4.0)
    assert priority(view, job, 0.0, "attained") == pytest.approx(1600.0 / (8 * 100.0))


def test_network_sensitive_preemption_takes_gpus_from_a_worse_priority_job():
    jobs = [JobSpec(f"r{i}", 0.0, "resnet50", 8, duration_s=48 * H) for i in range(16)]
    jobs.append(JobSpec("new", 100.0, "resnet50", 8, duration_s=1 * H))
    recs, _ = _run(make_policy("dally", round_s=600.0), jobs)
    assert recs["new"].first_start == pytest.approx(600.0, abs=1.0)  # first round after the others ran 600 s
    assert sum(recs[f"r{i}"].restarts for i in range(16)) == 1
    assert all(r.status == "finished" for r in recs.values())
    recs, _ = _run(make_policy("dally", preempt=False), jobs)
    assert recs["new"].first_start > 47 * H


def test_bad_reading_is_a_clear_error():
    with pytest.raises(InputError, match="reading"):
        make_policy("dally", reading="bogus")


def test_a_running_job_across_machines_is_offered_a_machine_when_one_frees():
    jobs = _blocked_scene()
    jobs[0] = jobs[0].with_(duration_s=2 * H)  # b0 leaves a whole machine free after 2 h
    jobs[-1] = jobs[-1].with_(duration_s=10 * H)
    recs, res = _run(make_policy("dally-nowait", round_s=600.0, reoffer=True), jobs)
    big = recs["big"]
    assert big.first_start == pytest.approx(10.0, abs=1.0)  # took the rack at once (no wait)
    assert big.migrations == 1  # then moved onto the freed machine at the next round
    recs, _ = _run(make_policy("dally-nowait", round_s=600.0, reoffer=False), jobs)
    assert recs["big"].migrations == 0


def test_paper_variants_reoffer_running_jobs_the_ablation_does_not():
    # the paper's preemption gives better-consolidated placements to jobs suffering from sub-optimal
    # ones (section VI-3), every variant keeps it; dally-noreoffer (ours) is the ablation without it
    jobs = _blocked_scene()
    jobs[0] = jobs[0].with_(duration_s=2 * H)
    jobs[-1] = jobs[-1].with_(duration_s=10 * H)
    for name in ("dally", "dally-manual", "dally-nowait", "dally-consolidated"):
        assert make_policy(name).reoffer is True
    recs, _ = _run(make_policy("dally-nowait", round_s=600.0), jobs)
    assert recs["big"].migrations == 1
    ablation = make_policy("dally-noreoffer")
    assert ablation.reoffer is False and ablation.timers == "auto"
    assert {o.name: o.default for o in ablation.options}["reoffer"] is False
    recs, _ = _run(ablation, jobs)
    assert recs["big"].migrations == 0


def test_tuner_evaluations_count_only_jobs_whose_timers_can_decide():
    # a 1-GPU job sits on one machine whatever level it accepts: its timers decide nothing and are not
    # counted in the fallback share; the 2-GPU jobs queued behind the same full cluster are
    workers = [JobSpec(f"w{i}", 0.0, "resnet50", 8, duration_s=2 * H) for i in range(16)]
    ones = [JobSpec(f"one{i}", 10.0, "resnet50", 1, duration_s=H) for i in range(4)]

    def evaluations(jobs):
        p = make_policy("dally", preempt=False)  # no preemption: the workers are asked once, at t = 0
        _run(p, jobs)
        return p.tuner_counts()["machine"]["evaluations"]

    alone = evaluations(workers)
    assert evaluations(workers + ones) == alone
    assert evaluations(workers + ones + [JobSpec("two", 10.0, "resnet50", 2, duration_s=H)]) > alone
