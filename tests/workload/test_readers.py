"""Every reader on its (synthetic) fixture, and format detection."""

from __future__ import annotations

import pytest

from dlsched.workload.models import get_model
from dlsched.workload.readers import detect_format, read_arena, read_pai, read_trace

FORMATS = {
    "dlsched.csv": "dlsched", "arena.csv": "arena", "gavel.csv": "gavel", "blox.csv": "blox",
    "philly_cluster_job_log.json": "philly", "philly_subset.json": "philly-subset",
    "helios_cluster_log.csv": "helios", "pai_task_table.csv": "pai", "lingjun_job.csv": "lingjun",
}


@pytest.mark.parametrize("name,fmt", FORMATS.items())
def test_detect_and_read_every_fixture(fixtures, name, fmt):
    path = fixtures / name
    assert detect_format(path) == fmt
    load = read_trace(path)
    assert load.jobs and load.source == str(path)
    times = [j.submit_time for j in load.jobs]
    assert times[0] == 0.0 and times == sorted(times)
    for j in load.jobs:
        get_model(j.model, j.params)  # every job names a zoo model
        assert j.extra["source"] == str(path) and j.extra["line"] >= (1 if fmt == "pai" else 2)  # PAI: no header
    assert read_trace(path, fmt=fmt).jobs == load.jobs


def by_id(load):
    return {j.job_id: j for j in load.jobs}


def test_dlsched_csv(fixtures):
    jobs = by_id(read_trace(fixtures / "dlsched.csv"))
    a, b, c = jobs["a"], jobs["b"], jobs["c"]
    assert (a.model, a.num_gpus, a.total_iterations, a.extra["user"], a.extra["line"]) == ("resnet50", 1, 1000, "alice", 2)
    assert b.duration_s == 3600 and b.total_iterations is None and b.elastic and b.gpu_type == "V100"
    assert b.batch_size == get_model("bert-large").default_batch * 8  # default: per-GPU x GPUs
    assert b.deadline == 20000 - 100 and b.priority == 2
    assert c.gpu_type == "A100-40G" and c.submit_time == 30


def test_arena_sizes_and_deadlines(fixtures):
    jobs = by_id(read_trace(fixtures / "arena.csv"))
    j1, j2 = jobs["j1"], jobs["j2"]
    assert (j1.model, j1.params, j1.total_iterations, j1.gpu_type) == ("bert", "1.3B", 2000, "A40")
    assert get_model(j1.model, j1.params).name == "bert-1.3b"
    # deadline_s - (submit_time_s - submit_rel_s)
    assert j1.deadline == 9000 - 5000 and j2.deadline == 20000 - 5000
    assert jobs["j3"].deadline is None
    full = by_id(read_arena(fixtures / "arena.csv", iterations="full"))
    assert full["j1"].total_iterations == 10000


def test_gavel_job_types(fixtures):
    jobs = by_id(read_trace(fixtures / "gavel.csv"))
    assert (jobs["0"].model, jobs["0"].batch_size, jobs["0"].total_iterations) == ("resnet50", 64, 100000)
    assert (jobs["1"].model, jobs["1"].batch_size) == ("transformer", 256)  # per worker x 2
    assert jobs["2"].model == "a3c" and jobs["5"].model == "cyclegan"
    assert jobs["3"].model == "lstm_lm" and jobs["4"].model == "recommendation"
    assert jobs["6"].model == "resnet18" and jobs["1"].submit_time == 120.5


def test_gavel_steps_are_worker_steps(fixtures):
    # Gavel counts the steps of every worker: an n-GPU job does total_steps / n whole-job iterations
    jobs = by_id(read_trace(fixtures / "gavel.csv"))
    assert jobs["1"].total_iterations == 50000 // 2
    assert jobs["3"].total_iterations == 8000 // 4
    assert jobs["6"].total_iterations == 9000 // 8
    assert jobs["0"].total_iterations == 100000  # one worker: steps are iterations
    assert jobs["6"].extra["total_steps"] == 9000 and jobs["6"].extra["scale_factor"] == 8


def test_blox(fixtures):
    load = read_trace(fixtures / "blox.csv")
    assert [j.model for j in load.jobs] == ["resnet50"] * 3
    assert [j.duration_s for j in load.jobs] == [3600.5, 7200, 120.25]
    assert [j.submit_time for j in load.jobs] == [0, 26, 86]
    other = read_trace(fixtures / "blox.csv", default_model="vgg16")
    assert {j.model for j in other.jobs} == {"vgg16"}


def test_philly_native(fixtures):
    jobs = by_id(read_trace(fixtures / "philly_cluster_job_log.json"))
    first = jobs["application_0000000000000_0001"]
    assert first.num_gpus == 8  # first attempt: 4 + 4
    assert first.duration_s == 3600 + 1800  # attempts summed, the gap excluded
    assert first.submit_time == 455  # 01:47:35 vs the other job's 01:40:00
    assert first.extra["status"] == "Pass" and first.extra["line"] == 2
    assert jobs["application_0000000000000_0002"].extra["line"] == 26  # the line of its "{"
    assert first.extra["user"] == "user-synthetic-a" and first.model == "bert-base"  # GPU-count rule
    assert {j.model for j in read_trace(fixtures / "philly_cluster_job_log.json",
                                        default_model="resnet18").jobs} == {"resnet18"}


def test_philly_subset(fixtures):
    jobs = by_id(read_trace(fixtures / "philly_subset.json"))
    j = jobs["application_0000000000000_0101"]
    assert j.duration_s == pytest.approx(90.5 * 60) and j.num_gpus == 8 and j.extra["attempts"] == 2
    assert jobs["application_0000000000000_0102"].model == "gpt2-medium"  # 16 GPUs: multi-node rule


def test_helios_reports_cpu_jobs(fixtures):
    load = read_trace(fixtures / "helios_cluster_log.csv")
    assert [j.job_id for j in load.jobs] == ["1001", "1003", "1004"]
    assert [(s.line, s.field) for s in load.skipped] == [(3, "gpu_num")]
    j = by_id(load)["1004"]
    assert (j.num_gpus, j.duration_s, j.submit_time, j.extra["vc"]) == (16, 7200, 590, "vcHvQ")


def test_pai_groups_tasks_into_jobs(fixtures):
    load = read_trace(fixtures / "pai_task_table.csv")
    jobs = by_id(load)
    assert jobs["job_a"].num_gpus == 2 and jobs["job_a"].gpu_type == "V100"
    assert jobs["job_a"].duration_s == 4700 - 1000 and jobs["job_a"].extra["user"] == "user-1"
    assert jobs["job_b"].num_gpus == 1  # 50 % of a GPU rounds up
    assert jobs["job_d"].gpu_type is None  # MISC = any type
    assert [(s.line, s.field) for s in load.skipped] == [(4, "plan_gpu")]  # job_c: CPU only
    alone = by_id(read_pai(fixtures / "pai_task_table.csv", job_table=None))
    assert alone["job_b"].submit_time - alone["job_a"].submit_time == 500


def test_lingjun_sums_worker_gpus(fixtures):
    jobs = by_id(read_trace(fixtures / "lingjun_job.csv"))
    assert jobs["dlc-0001"].num_gpus == 16 and jobs["dlc-0001"].duration_s == 6 * 3600
    assert jobs["dlc-0002"].submit_time == 600 and jobs["dlc-0003"].submit_time == 3600  # no submit: start
    assert jobs["dlc-0003"].extra["job_type"] == "TFJob"


def test_unknown_format_is_named(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(Exception, match="cannot tell the trace format"):
        read_trace(p)
    with pytest.raises(Exception, match="unknown trace format 'nope'"):
        read_trace(p, fmt="nope")
