"""Feasibility checks against a cluster."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.errors import InfeasibleJobError, UnknownNameError
from dlsched.workload.job import JobSpec
from dlsched.workload.readers import read_trace
from dlsched.workload.validate import check_jobs


@pytest.fixture(scope="module")
def testbed():
    return Cluster.load("crius-testbed")  # 32 A40 + 32 A10


def job(jid, n, gpu=None, model="resnet50", line=None):
    extra = {"line": line, "source": "t.csv"} if line else {}
    return JobSpec(jid, 0.0, model, n, total_iterations=10, gpu_type=gpu, extra=extra)


def test_feasible_jobs_pass(testbed):
    jobs = [job("a", 1), job("b", 64), job("c", 32, "A40"), job("d", 2, "a10")]
    ok, skipped = check_jobs(jobs, testbed)
    assert ok == jobs and skipped == []


@pytest.mark.parametrize("bad,err,field", [
    (job("x", 65, line=7), InfeasibleJobError, "num_gpus"),
    (job("x", 33, "A40", line=7), InfeasibleJobError, "num_gpus"),
    (job("x", 1, "V100", line=7), UnknownNameError, "gpu_type"),
    (job("x", 1, model="nonet", line=7), UnknownNameError, "model"),
])
def test_infeasible_jobs_name_file_line_field(testbed, bad, err, field):
    with pytest.raises(err) as e:
        check_jobs([job("a", 1), bad], testbed)
    assert (e.value.file, e.value.line, e.value.field) == ("t.csv", 7, field)
    assert "t.csv" in str(e.value) and "line 7" in str(e.value)
    ok, skipped = check_jobs([job("a", 1), bad], testbed, skip_bad_rows=True)
    assert [j.job_id for j in ok] == ["a"]
    assert [(s.line, s.field) for s in skipped] == [(7, field)]


def test_skipped_reasons_group_across_jobs(testbed):
    _, skipped = check_jobs([job("x", 99), job("y", 99)], testbed, skip_bad_rows=True)
    assert skipped[0].reason == skipped[1].reason


def test_trace_lines_flow_into_feasibility_errors(tmp_path, testbed):
    p = tmp_path / "t.csv"
    p.write_text("job_id,submit_time,model,num_gpus,iterations\na,0,resnet50,2,10\nb,5,resnet50,999,10\n")
    with pytest.raises(InfeasibleJobError) as e:
        check_jobs(read_trace(p).jobs, testbed)
    assert (e.value.file, e.value.line, e.value.field) == (str(p), 3, "num_gpus")
