"""Bad rows: errors name file, line and field; skip_bad_rows records them and goes on."""

from __future__ import annotations

import pytest

from dlsched.errors import InputError, UnknownNameError
from dlsched.workload.readers import read_trace

HEADER = "job_id,submit_time,model,num_gpus,batch_size,iterations,duration,gpu_type\n"
GOOD = "ok,0,resnet50,1,32,100,,\n"

# (bad row, field named in the error, a word of the reason)
BAD_ROWS = [
    ("b,,resnet50,1,32,100,,", "submit_time", "missing"),
    ("b,abc,resnet50,1,32,100,,", "submit_time", "not a number"),
    ("b,-5,resnet50,1,32,100,,", "submit_time", ">= 0"),
    ("b,5,nosuchnet,1,32,100,,", "model", "unknown model"),
    ("b,5,resnet50,x,32,100,,", "num_gpus", "not a number"),
    ("b,5,resnet50,0,32,100,,", "num_gpus", ">= 1"),
    ("b,5,resnet50,1.5,32,100,,", "num_gpus", "not an integer"),
    ("b,5,resnet50,1,32,,,", "iterations", "missing"),
    ("b,5,resnet50,1,32,100,60,", "iterations", "only one"),
    ("b,5,resnet50,1,32,,-60,", "duration", ">= 0"),
    ("b,5,resnet50,1,32,100,,Z900", "gpu_type", "unknown GPU type"),
    ("b,5,resnet50,1,32,nan,,", "iterations", "finite"),
]


def write(tmp_path, *rows, header=HEADER, name="t.csv"):
    p = tmp_path / name
    p.write_text(header + "".join(r if r.endswith("\n") else r + "\n" for r in rows))
    return p


@pytest.mark.parametrize("row,field,reason", BAD_ROWS)
def test_bad_row_raises_with_location(tmp_path, row, field, reason):
    p = write(tmp_path, GOOD, row)
    with pytest.raises(InputError) as err:
        read_trace(p)
    e = err.value
    assert (e.file, e.line, e.field) == (str(p), 3, field)
    msg = str(e)
    assert str(p) in msg and "line 3" in msg and f"field '{field}'" in msg and reason in msg


@pytest.mark.parametrize("row,field,reason", BAD_ROWS)
def test_skip_bad_rows_records_and_goes_on(tmp_path, row, field, reason):
    p = write(tmp_path, GOOD, row, "last,9,vgg16,2,64,10,,")
    load = read_trace(p, skip_bad_rows=True)
    assert [j.job_id for j in load.jobs] == ["ok", "last"]
    assert len(load.skipped) == 1
    s = load.skipped[0]
    assert (s.line, s.field) == (3, field) and reason in s.reason


def test_unknown_model_lists_known_names(tmp_path):
    p = write(tmp_path, "b,5,resnet51,1,32,100,,")
    with pytest.raises(UnknownNameError, match="resnet50"):
        read_trace(p)


def test_lines_count_blank_lines(tmp_path):
    p = write(tmp_path, GOOD, "", "b,-1,resnet50,1,32,100,,")
    with pytest.raises(InputError) as err:
        read_trace(p)
    assert err.value.line == 4


def test_too_many_fields(tmp_path):
    p = write(tmp_path, GOOD + "b,5,resnet50,1,32,100,,,extra\n")
    with pytest.raises(InputError) as err:
        read_trace(p)
    assert err.value.line == 3


def test_bad_rows_in_other_formats(tmp_path):
    gavel = write(tmp_path, "0,0,1,100,ResNet-50 (batch size 64)", "1,5,1,100,Quantum (batch size 2)",
                  header="job_id,submit_time_s,num_gpus,total_steps,job_type\n", name="g.csv")
    with pytest.raises(InputError) as err:
        read_trace(gavel)
    assert (err.value.line, err.value.field) == (3, "job_type")
    arena = write(tmp_path, "j,10,0,4,a40,bert,3.3B,10,5,256,",
                  header="job_id,submit_time_s,submit_rel_s,num_gpus,gpu_type,model,param_num,iterations,"
                         "iterations_sim,batch_size,deadline_s\n", name="a.csv")
    with pytest.raises(InputError) as err:
        read_trace(arena)
    assert (err.value.line, err.value.field) == (2, "model")
    helios = write(tmp_path, "1,u,vc,n,2,4,1,COMPLETED,yesterday,,,60,0",
                   header="job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,"
                          "end_time,duration,queue\n", name="h.csv")
    with pytest.raises(InputError) as err:
        read_trace(helios)
    assert (err.value.line, err.value.field) == (2, "submit_time")


def test_bad_json_attempts(tmp_path):
    p = tmp_path / "p.json"
    p.write_text('[\n {"jobid": "a", "submitted_time": "2017-10-03 01:00:00", "status": "Pass",\n'
                 '  "attempts": [{"start_time": "2017-10-03 01:00:00", "end_time": null, "detail": []}]}\n]\n')
    with pytest.raises(InputError) as err:
        read_trace(p)
    assert (err.value.line, err.value.field) == (2, "attempts")
    assert read_trace(p, skip_bad_rows=True).skipped[0].field == "attempts"


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_trace(tmp_path / "nope.csv")
