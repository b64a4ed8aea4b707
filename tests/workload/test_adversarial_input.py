"""Adversarial trace input: every format either reads it correctly or names file, line and field.

Each case here was found failing (a traceback, a silent drop or a corrupted job) before the
reader fixes it tests.
"""

from __future__ import annotations

import gzip
import json

import pytest

from dlsched.errors import InputError
from dlsched.workload.readers import read_trace

# One good two-row file per CSV format: (header, first row, second row).
CSV = {
    "dlsched": ("job_id,submit_time,model,num_gpus,batch_size,iterations,duration,gpu_type,deadline",
                "a,100,resnet50,1,32,1000,,,", "b,160,bert-large,8,,,3600,V100,20000"),
    "arena": ("job_id,submit_time_s,submit_rel_s,num_gpus,gpu_type,model,param_num,iterations,iterations_sim,"
              "batch_size,deadline_s",
              "j1,5000,0,4,a40,bert,1.3B,10000,2000,256,9000", "j2,5600,600,8,v100,moe,690M,5000,1000,256,20000"),
    "gavel": ("job_id,submit_time_s,num_gpus,total_steps,job_type",
              "0,0.0,1,100000,ResNet-50 (batch size 64)", "1,120.5,2,50000,Transformer (batch size 128)"),
    "blox": ("job_id,submit_time_s,num_gpus,duration_s,job_type", "0,174,1,3600.5,IMAGE", "1,200,2,7200,IMAGE"),
    "helios": ("job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue",
               "1001,u,vc,t,8,32,1,COMPLETED,2020-04-01 00:00:10,,,3600,50",
               "1003,u,vc,t,1,4,1,FAILED,2020-04-01 00:05:00,,,60,30"),
    "lingjun": ("job_name,job_id,job_type,status,submit_time,start_time,end_time,gpu_num",
                "n,dlc-1,PyTorchJob,Succeeded,2023-08-01 00:00:00,2023-08-01 00:05:00,2023-08-01 06:05:00,8",
                "n,dlc-2,PyTorchJob,Failed,2023-08-01 00:10:00,2023-08-01 00:10:30,2023-08-01 00:40:30,1"),
}
# A required column per format, and a numeric field to push out of range.
REQUIRED = {"dlsched": "num_gpus", "arena": "iterations_sim", "gavel": "total_steps", "blox": "duration_s",
            "helios": "duration", "lingjun": "end_time"}
NUMERIC = {"dlsched": "submit_time", "arena": "num_gpus", "gavel": "total_steps", "blox": "duration_s",
           "helios": "duration", "lingjun": "gpu_num"}
FORMATS = list(CSV)


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return p


def good(fmt, sep="\n"):
    return sep.join(CSV[fmt]) + sep


def with_cell(fmt, column, value):
    header, first, second = CSV[fmt]
    cells = second.split(",")
    cells[header.split(",").index(column)] = value
    return "\n".join([header, first, ",".join(cells)]) + "\n"


def located(fn, *args, **kw) -> InputError:
    with pytest.raises(InputError) as err:
        fn(*args, **kw)
    e = err.value
    assert e.file is not None and e.file in str(e)
    return e


@pytest.mark.parametrize("fmt", FORMATS)
def test_bom_is_dropped(tmp_path, fmt):
    p = write(tmp_path, b"\xef\xbb\xbf" + good(fmt).encode())
    assert len(read_trace(p).jobs) == 2  # detected, and the first column keeps its name


@pytest.mark.parametrize("fmt", FORMATS)
def test_crlf_blank_lines_and_quotes(tmp_path, fmt):
    header, first, second = CSV[fmt]
    quoted = ",".join(f'"{c}"' for c in first.split(","))
    text = "\r\n".join([header, "", quoted, "", second, ""])
    load = read_trace(write(tmp_path, text), fmt=fmt)
    assert len(load.jobs) == 2 and load.skipped == []
    assert sorted(j.extra["line"] for j in load.jobs) == [3, 5]


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicate_job_id_names_both_lines(tmp_path, fmt):
    header, first, _ = CSV[fmt]
    p = write(tmp_path, "\n".join([header, first, first]) + "\n")
    e = located(read_trace, p, fmt=fmt)
    assert (e.line, e.field) == (3, "job_id") and "first on line 2" in e.reason
    load = read_trace(p, fmt=fmt, skip_bad_rows=True)
    assert len(load.jobs) == 1 and [(s.line, s.field) for s in load.skipped] == [(3, "job_id")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_many_fields_is_skippable(tmp_path, fmt):
    header, first, second = CSV[fmt]
    p = write(tmp_path, "\n".join([header, first + ",extra", second]) + "\n")
    assert located(read_trace, p, fmt=fmt).line == 2
    load = read_trace(p, fmt=fmt, skip_bad_rows=True)
    assert len(load.jobs) == 1 and load.skipped[0].line == 2 and "fields" in load.skipped[0].reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_column_is_a_header_error(tmp_path, fmt):
    header, first, second = CSV[fmt]
    drop = header.split(",").index(REQUIRED[fmt])
    cut = ["," .join(c for i, c in enumerate(r.split(",")) if i != drop) for r in (header, first, second)]
    p = write(tmp_path, "\n".join(cut) + "\n")
    for skip in (False, True):  # not one "missing value" per row: the file is wrong
        e = located(read_trace, p, fmt=fmt, skip_bad_rows=skip)
        assert e.line == 1 and REQUIRED[fmt] in str(e)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sep", [";", "\t"])
def test_wrong_delimiter(tmp_path, fmt, sep):
    p = write(tmp_path, good(fmt).replace(",", sep))
    assert "comma-separated" in str(located(read_trace, p))
    assert located(read_trace, p, fmt=fmt).line == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_utf8_bytes_name_line_and_field(tmp_path, fmt):
    header, first, second = CSV[fmt]
    raw = "\n".join([header, first, second]).encode().replace(b"n,dlc-2", b"n\xe9,dlc-2")
    if raw.count(b"\xe9") == 0:  # not Lingjun: spoil the job id
        raw = raw[:raw.rindex(b"\n") + 1] + b"\xe9" + raw[raw.rindex(b"\n") + 1:]
    p = write(tmp_path, raw + b"\n")
    e = located(read_trace, p, fmt=fmt)
    assert e.line == 3 and e.field == header.split(",")[0] and "UTF-8" in e.reason
    load = read_trace(p, fmt=fmt, skip_bad_rows=True)
    assert len(load.jobs) == 1 and load.skipped[0].line == 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_implausibly_large_number(tmp_path, fmt):
    p = write(tmp_path, with_cell(fmt, NUMERIC[fmt], "1e20"))
    e = located(read_trace, p, fmt=fmt)
    assert (e.line, e.field) == (3, NUMERIC[fmt]) and "large" in e.reason


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["gzip", "binary", "utf16", "empty", "directory"])
def test_not_a_text_trace(tmp_path, fmt, kind):
    if kind == "directory":
        p = tmp_path / "d.csv"
        p.mkdir()
    else:
        data = {"gzip": gzip.compress(good(fmt).encode()), "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
                "utf16": good(fmt).encode("utf-16"), "empty": b""}[kind]
        p = write(tmp_path, data)
    word = {"gzip": "gzip", "binary": "binary", "utf16": "UTF-16", "empty": "empty", "directory": "directory"}[kind]
    for f in ("auto", fmt):
        assert word in str(located(read_trace, p, fmt=f))


def test_missing_file(tmp_path):
    assert "no such file" in str(located(read_trace, tmp_path / "nope.csv", fmt="gavel"))


# ---------------------------------------------------------------- JSON (Philly)

PHILLY = [{"status": "Pass", "vc": "v", "jobid": "app1", "submitted_time": "2017-10-03 01:47:35",
           "attempts": [{"start_time": "2017-10-03 01:47:40", "end_time": "2017-10-03 02:47:40",
                         "detail": [{"ip": "m", "gpus": ["g0", "g1"]}]}]},
          {"status": "Pass", "vc": "v", "jobid": "app2", "submitted_time": "2017-10-03 01:50:00",
           "attempts": [{"start_time": "2017-10-03 01:50:00", "end_time": "2017-10-03 01:55:00",
                         "detail": [{"ip": "m", "gpus": ["g0"]}]}]}]


def test_json_bom(tmp_path):
    p = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(PHILLY).encode(), "p.json")
    assert len(read_trace(p).jobs) == 2


@pytest.mark.parametrize("text,word", [
    (json.dumps(PHILLY) + " trailing", "after the JSON list"),
    (json.dumps(PHILLY)[:-1], "not closed"),  # truncated right after a complete job
    (json.dumps(PHILLY).replace("}]}]}, {", "}]}]} {"), "expected ','"),
    ("[]", "no jobs"),
    (json.dumps(PHILLY[0]), "single object"),
])
def test_json_structure(tmp_path, text, word):
    p = write(tmp_path, text, "p.json")
    assert word in str(located(read_trace, p))


@pytest.mark.parametrize("change,field", [
    ({"jobid": ["x"]}, "jobid"),
    ({"jobid": "app1"}, "job_id"),
    ({"attempts": [{"start_time": "2017-10-03 01:50:00", "end_time": "2017-10-03 01:55:00",
                    "detail": [{"ip": "m", "gpus": "g0g1g2"}]}]}, "attempts"),  # len("g0g1g2") GPUs before
    ({"submitted_time": 1e20}, "submitted_time"),
])
def test_json_bad_values(tmp_path, change, field):
    p = write(tmp_path, json.dumps([PHILLY[0], {**PHILLY[1], **change}], indent=1), "p.json")
    e = located(read_trace, p)
    assert e.field == field and e.line > 1
    load = read_trace(p, skip_bad_rows=True)
    assert [j.job_id for j in load.jobs] == ["app1"] and load.skipped[0].field == field


# ---------------------------------------------------------------- side tables

PAI_TASKS = "job_a,worker,2,Terminated,1000,4600,600,29.3,100,V100\njob_b,worker,1,Terminated,1500,1800,600,29.3,50,T4\n"
PAI_JOBS = "job_a,inst-a,user-1,Terminated,990,4700\njob_b,inst-b,user-2,Terminated,abc,1800\n"


def test_pai_bom_does_not_split_a_job(tmp_path):
    p = write(tmp_path, b"\xef\xbb\xbf" + PAI_TASKS.encode() + b"job_a,ps,1,Terminated,1000,4700,400,10.0,,\n",
              "pai_task_table.csv")
    load = read_trace(p)
    assert sorted(j.job_id for j in load.jobs) == ["job_a", "job_b"]
    assert next(j for j in load.jobs if j.job_id == "job_a").extra["tasks"] == 2


def test_pai_job_table_errors_name_the_job_table(tmp_path):
    p = write(tmp_path, PAI_TASKS, "pai_task_table.csv")
    jt = write(tmp_path, PAI_JOBS, "pai_job_table.csv")
    e = located(read_trace, p)
    assert (e.file, e.line, e.field) == (str(jt), 2, "start_time")
    load = read_trace(p, skip_bad_rows=True)
    assert [j.job_id for j in load.jobs] == ["job_a"]
    assert str(jt) in load.skipped[0].reason  # the skipped line is the job table's, not the task table's


def test_lingjun_bad_worker_row_is_skippable(tmp_path):
    job = write(tmp_path, "job_id,job_type,start_time,end_time\nd1,PyTorchJob,0,100\nd2,PyTorchJob,0,50\n", "job.csv")
    write(tmp_path, "job_id,worker_name,gpu_num\nd1,w0,8\nd2,w0,2.5\n", "worker.csv")
    e = located(read_trace, job, fmt="lingjun")
    assert (e.line, e.field) == (3, "gpu_num") and e.file.endswith("worker.csv")
    load = read_trace(job, fmt="lingjun", skip_bad_rows=True)
    # d2's GPU count is unknown: the job is skipped too, not run with the GPUs of its good workers
    assert [j.job_id for j in load.jobs] == ["d1"]
    assert {s.field for s in load.skipped} == {"gpu_num", "job_id"}


def test_lingjun_missing_time_column(tmp_path):
    p = write(tmp_path, "job_id,job_type,start_time,gpu_num\nd1,PyTorchJob,0,8\n", "job.csv")
    e = located(read_trace, p, fmt="lingjun", skip_bad_rows=True)
    assert (e.line, e.field) == (1, "end_time")
