"""Profile table readers: each kind detected from its header, typed rows, errors naming file, line, field."""

from __future__ import annotations

import math

import pytest

from dlsched.errors import InputError
from dlsched.workload.readers.profiles import (ColocatedRow, IterationRow, MemoryRow, PlanRow, UnconsolidatedRow,
                                               detect_profile, read_profile, write_iterations)

ITER = ("model,param,batch_size,gpu_type,nodes,gpus_per_node,gpus,iter_time_s,status\n"
        "bert,1.3B,128,a100,1,2,2,5.5,ok\n"
        "bert,6.7B,128,a100,2,2,4,,oom\n")
PLANS = ("model,param,batch_size,gpu_type,nodes,gpus_per_node,plan_pp_dp_mp,compute_s,intra_stage_comm_s,"
         "inter_stage_comm_s,iter_time_s\n"
         "bert,1.3B,128,a100,1,2,1x2x1,5.2,0.09,0,5.3\n"
         "bert,1.3B,128,a40,1,1,1x1x1,inf,nan,nan,inf\n")
MEM = "model,param,batch_size,gpus,per_gpu_mem_gb,status\nwide_resnet,500M,256,1,24.5,ok\nmoe,10B,256,1,,oom\n"
COLOC = ("gpu,job_type,scale_factor,other_job_type,other_scale_factor,steps_per_s,other_steps_per_s\n"
         "k80,ResNet-18 (batch size 16),1,A3C,1,2.5,3.1\nv100,A3C,1,A3C,1,0,0\n")
UNCONS = "gpu,job_type,scale_factor,steps_per_s_unconsolidated\nv100,ResNet-18 (batch size 16),2,32.3\n"


def _write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text,kind,cls", [(ITER, "iterations", IterationRow), (PLANS, "plans", PlanRow),
                                          (MEM, "dp-memory", MemoryRow), (COLOC, "colocated", ColocatedRow),
                                          (UNCONS, "unconsolidated", UnconsolidatedRow)])
def test_each_kind_is_detected_and_typed(tmp_path, text, kind, cls):
    p = _write(tmp_path, text)
    assert detect_profile(p) == kind
    t = read_profile(p)
    assert t.kind == kind and all(isinstance(r, cls) for r in t.rows)
    assert len(t.sha256) == 64 and t.rows[0].line == 2


def test_row_contents(tmp_path):
    it = read_profile(_write(tmp_path, ITER)).rows
    assert it[0].gpu_type == "A100-40G" and it[0].gpus == 2 and it[0].iter_time_s == 5.5 and not it[0].oom
    assert it[1].oom and it[1].iter_time_s is None
    plans = read_profile(_write(tmp_path, PLANS)).rows
    assert (plans[0].pp, plans[0].dp, plans[0].tp, plans[0].dp_only) == (1, 2, 1, True)
    assert math.isinf(plans[1].iter_time_s) and math.isinf(plans[1].compute_s)
    mem = read_profile(_write(tmp_path, MEM)).rows
    assert mem[0].bytes_per_gpu == pytest.approx(24.5e9) and mem[1].bytes_per_gpu is None
    co = read_profile(_write(tmp_path, COLOC)).rows
    assert co[0].gpu_type == "K80" and co[1].steps_per_s == 0.0  # Gavel's "does not run together"


@pytest.mark.parametrize("text,line,field,words", [
    (ITER.replace("5.5,ok", "abc,ok"), 2, "iter_time_s", "not a number"),
    (ITER.replace("5.5,ok", "5.5,maybe"), 2, "status", "ok or oom"),
    (ITER.replace("5.5,ok", ",ok"), 2, "iter_time_s", "missing"),
    (ITER.replace(",,oom", ",3.0,oom"), 3, "iter_time_s", "no iteration time"),
    (ITER.replace("a100,1,2,2,", "a100,1,2,3,"), 2, "gpus", "nodes x gpus_per_node"),
    (ITER.replace("a100,1,2,2,", "tpu9,1,2,2,"), 2, "gpu_type", "unknown GPU type"),
    (ITER.replace("a100,1,2,2,", "a100,0,2,0,"), 2, "nodes", ">= 1"),
    (PLANS.replace("1x2x1", "1x2"), 2, "plan_pp_dp_mp", "PPxDPxMP"),
    (PLANS.replace("5.2,0.09", "nan,0.09"), 2, "compute_s", "finite"),
    (MEM.replace("24.5,ok", "-1,ok"), 2, "per_gpu_mem_gb", ">= 0"),
    (COLOC.replace("2.5,3.1", "-2.5,3.1"), 2, "steps_per_s", ">= 0"),
])
def test_bad_rows_name_file_line_field(tmp_path, text, line, field, words):
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_profile(p)
    assert e.value.file == str(p) and e.value.line == line and e.value.field == field
    assert words.lower() in str(e.value).lower()


def test_bad_files(tmp_path):
    with pytest.raises(InputError, match="matches none"):
        read_profile(_write(tmp_path, "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError, match="no such file"):
        read_profile(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="no rows"):
        read_profile(_write(tmp_path, ITER.splitlines()[0] + "\n"))
    with pytest.raises(InputError, match="empty"):
        read_profile(_write(tmp_path, ""))
    with pytest.raises(InputError) as e:
        read_profile(_write(tmp_path, ITER + "bert,1.3B,128,a100,1,2,2,5.5,ok,extra\n"))
    assert e.value.line == 4


def test_write_iterations_round_trips(tmp_path):
    rows = read_profile(_write(tmp_path, ITER)).rows
    out = tmp_path / "out.csv"
    assert write_iterations(out, rows) == 2
    again = read_profile(out)
    assert again.kind == "iterations"
    assert [(r.model, r.param, r.batch, r.gpu_type, r.gpus, r.iter_time_s) for r in again.rows] == \
           [(r.model, r.param, r.batch, r.gpu_type, r.gpus, r.iter_time_s) for r in rows]
