"""Replay of the Crius authors' simulator (``--throughputs`` with their iteration-time table)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from dlsched.cli import main
from dlsched.cluster import Cluster
from dlsched.errors import InputError
from dlsched.perf.base import SimplePerfModel
from dlsched.perf.measured.arena import read_arena_memory, read_arena_times
from dlsched.perf.measured.arena_replay import ArenaReplayPerfModel, debt_rounds, round_arrivals
from dlsched.perf.measured.replay import with_throughputs
from dlsched.workload.job import JobSpec

HEADER = "model,param,batch_size,gpu_type,nodes,gpus_per_node,gpus,iter_time_s,status\n"
TIMES = HEADER + """bert,1.3B,128,a100,1,4,4,2.0,ok
bert,1.3B,128,a100,1,1,1,7.0,ok
bert,6.7B,128,a100,1,2,2,9.0,ok
bert,2.6B,128,a40,1,1,1,301.0,ok
bert,2.6B,128,a40,1,2,2,,oom
bert,2.6B,128,a40,2,2,4,20.0,ok
"""
MEMORY = """model,param,batch_size,gpus,per_gpu_mem_gb,status
bert,1.3B,128,1,30.0,ok
bert,1.3B,128,2,20.0,ok
bert,1.3B,128,4,0,ok
bert,1.3B,128,8,,oom
"""


@pytest.fixture
def times(tmp_path):
    p = tmp_path / "times.csv"
    p.write_text(TIMES)
    return read_arena_times(p)


@pytest.fixture(scope="module")
def sim():
    return Cluster.load("crius-sim")


def rounded(batch, secs, factor=1.0):
    thr = round(batch / secs, 3) * factor
    return round(batch / thr, 3)


def test_measured_entry_is_used_with_the_authors_rounding(times):
    hit = times.lookup("bert", "1.3B", 128, "a100", 1, 4, 4)
    assert hit.rule == "measured" and hit.iter_s == rounded(128, 2.0)


def test_spread_placement_takes_the_tightest_entry_x09_per_halving(times):
    # 4 A100s over 2 nodes (2 per node) and over 4 nodes (1 per node): the 1x4 entry, thr x0.9 / x0.81
    two = times.lookup("bert", "1.3B", 128, "a100", 2, 2, 4)
    four = times.lookup("bert", "1.3B", 128, "a100", 4, 1, 4)
    assert (two.rule, four.rule) == ("locality x1", "locality x2")
    assert two.iter_s == rounded(128, 2.0, 0.9) and four.iter_s == rounded(128, 2.0, 0.81)


def test_unprofiled_size_takes_the_next_larger_size_x18_per_step(times):
    # 1.3B on 2 A100s: not measured, no tighter entry; 2.6B not measured there; 6.7B is, two steps up
    hit = times.lookup("bert", "1.3B", 128, "a100", 1, 2, 4)
    assert hit.rule == "size x2" and hit.iter_s == rounded(128, 9.0, 1.8 ** 2)


def test_over_a_round_oom_and_missing_are_infeasible(times):
    assert times.lookup("bert", "2.6B", 128, "a40", 1, 1, 2).rule == "over-round"
    oom = times.lookup("bert", "2.6B", 128, "a40", 1, 2, 2)
    assert oom.iter_s is None and oom.rule == "oom"  # an OOM entry is found: no fallback past it
    assert times.lookup("bert", "760M", 128, "v100", 1, 1, 16).rule == "missing"
    assert times.lookup("gpt", "1B", 128, "a100", 1, 1, 4).rule == "missing"


def test_dp_memory_check(tmp_path, times):
    p = tmp_path / "mem.csv"
    p.write_text(MEMORY)
    t = times.with_memory(read_arena_memory(p))
    assert not t.dp_memory_ok("bert", "1.3B", 128, 1, 40.0)  # 30 x 1.2 = 36 > 0.8 x 40
    assert t.dp_memory_ok("bert", "1.3B", 128, 2, 40.0)  # 24 <= 32
    assert t.dp_memory_ok("bert", "1.3B", 128, 4, 40.0)  # 0: passes, as theirs
    assert not t.dp_memory_ok("bert", "1.3B", 128, 8, 40.0)  # OOM
    assert not t.dp_memory_ok("bert", "1.3B", 128, 16, 40.0)  # not measured


@pytest.mark.parametrize("row, field", [
    ("bert,1.3B,128,a100,1,4,4,2.0,maybe\n", "status"),
    ("bert,1.3B,128,a100,1,4,8,2.0,ok\n", "gpus"),
    ("bert,1.3B,128,a100,1,4,4,-1,ok\n", "iter_time_s"),
    ("bert,1.3B,128,a100,1,4,4,2.0,ok\nbert,1.3B,128,a100,1,4,4,2.0,ok\n", "gpu_type"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, row, field):
    p = tmp_path / "bad.csv"
    p.write_text(HEADER + row)
    with pytest.raises(InputError) as e:
        read_arena_times(p)
    assert e.value.field == field and e.value.line >= 2 and "bad.csv" in str(e.value)


def test_tables_are_detected_from_their_header(tmp_path, sim):
    (tmp_path / "t.csv").write_text(TIMES)
    (tmp_path / "m.csv").write_text(MEMORY)
    base = SimplePerfModel(sim)
    m = with_throughputs(base, [str(tmp_path / "t.csv"), str(tmp_path / "m.csv")], policy="gavel-admit")
    assert isinstance(m, ArenaReplayPerfModel) and m.dp_memory and m.search == "full"
    for exempt in ("fcfs", "crius"):  # their simulated FCFS and Crius skip the DP memory check
        assert not with_throughputs(base, [str(tmp_path / "t.csv"), str(tmp_path / "m.csv")], policy=exempt).dp_memory
    assert with_throughputs(base, [str(tmp_path / "t.csv")], policy="crius").search == "cell"
    with pytest.raises(InputError, match="beside the arena"):
        with_throughputs(base, [str(tmp_path / "m.csv")])


def test_rounds_arrivals_and_debt():
    jobs = [JobSpec(f"j{i}", t, "bert", 1, batch_size=128, total_iterations=1)
            for i, t in enumerate([0.0, 10.0, 300.0, 300.5, 601.0])]
    moved = round_arrivals(jobs)
    assert [j.submit_time for j in moved] == [0.0, 0.0, 0.0, 300.0, 600.0]
    assert [j.extra["arena_order"] for j in moved] == [0, 1, 2, 3, 4]  # their order within a round
    assert [debt_rounds(n, "full") for n in (1, 2, 4, 16)] == [0, 0, 1, 1]  # 150 s/GPU, max 600
    assert [debt_rounds(n, "cell") for n in (1, 4, 16)] == [0, 0, 0]  # 10 s/GPU, max 40


def test_a_run_lasts_whole_rounds_plus_its_debt(times, sim):
    m = ArenaReplayPerfModel(SimplePerfModel(sim), times)
    job = JobSpec("j", 0.0, "bert", 4, batch_size=128, params="1.3B", gpu_type="A100-40G", total_iterations=100)
    # 100 x 2 s = 200 s -> one round, plus one round of debt for a 4-GPU restart at 150 s/GPU
    assert 100 / (1 / m.seconds_per_iteration(job, 4, 2.0)) == 600.0  # exactly: the engine's N / rate
    assert 100 / (1 / m.seconds_per_iteration(job, 1, 2.0)) == 300.0


ARENA_TRACE = ("job_id,submit_time_s,submit_rel_s,num_gpus,gpu_type,model,param_num,iterations,"
               "iterations_sim,batch_size,deadline_s\n")


def _trace(tmp_path, rows):
    p = tmp_path / "trace.csv"
    p.write_text(ARENA_TRACE + "".join(
        f"j{i},{1000 + t},{t},{n},{g},bert,{size},{5 * it},{it},128,{10 ** 7}\n"
        for i, (t, n, g, size, it) in enumerate(rows)))
    return p


def test_cli_fcfs_matches_a_round_by_round_simulation(tmp_path, sim):
    """Eight A100 jobs contend for the 80 A100 nodes' 320 GPUs: the engine replay and the
    round-by-round re-statement (tests/perf/arena_reference.py) give the same JCTs."""
    from tests.perf import arena_reference as ref  # noqa: F401  (importable as a package or not)

    table = tmp_path / "t.csv"
    table.write_text(TIMES)
    rows = [(0, 4, "a100", "1.3B", 1000 * (i + 1)) for i in range(100)] + [(650, 1, "a100", "1.3B", 50)]
    trace = _trace(tmp_path, rows)
    out = tmp_path / "run"
    assert main(["simulate", "--trace", str(trace), "--throughputs", str(table), "--policy", "fcfs",
                 "--option", "arena=true", "--option", "plan_s=0", "--restore-base", "0", "--restore-per-gb", "0",
                 "--quiet", "--out", str(out)]) == 0
    got = {r["job_id"]: float(r["jct"]) for r in csv.DictReader(open(out / "jobs.csv"))}
    rows_ref = [(f"j{i}", t, 0, n, it, rounded(128, 2.0 if n == 4 else 7.0))
                for i, (t, n, g, size, it) in enumerate(rows)]
    want = ref.simulate(rows_ref, sim.node_type.tolist(), sim.node_gpus.tolist(), 1000)
    assert set(want) == set(got)
    for k in want:
        assert got[k] == want[k] and got[k] % 300 == 0


def test_cli_infeasible_request_is_refused_or_skipped_with_its_reason(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text(TIMES)
    trace = _trace(tmp_path, [(0, 1, "a100", "1.3B", 10), (0, 2, "a40", "2.6B", 10)])  # the second: OOM
    assert main(["simulate", "--trace", str(trace), "--throughputs", str(table), "--policy", "fcfs",
                 "--quiet", "--out", str(tmp_path / "a")]) == 2
    assert "j1" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(trace), "--throughputs", str(table), "--policy", "fcfs",
                 "--skip-bad-rows", "--quiet", "--out", str(tmp_path / "b")]) == 0
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["summary"]["jobs"] == 1
    assert "skipped" in json.dumps(summary["params"]).lower()


def _arena_paths(shared_dir):
    table = shared_dir / "anchors" / "profiles" / "arena-profiled-iteration-times.csv"
    trace = shared_dir / "anchors" / "traces" / "arena-philly.csv"
    if not (table.is_file() and trace.is_file()):
        pytest.skip("the arena table or trace is missing from ../shared/anchors")
    return table, trace


@pytest.mark.shared
def test_real_table_fcfs_agrees_with_the_round_by_round_simulation(shared_dir, tmp_path, sim):
    from tests.perf import arena_reference as ref

    table, trace = _arena_paths(shared_dir)
    out = tmp_path / "run"
    assert main(["simulate", "--trace", str(trace), "--throughputs", str(table), "--policy", "fcfs",
                 "--option", "arena=true", "--option", "plan_s=0", "--skip-bad-rows", "--max-time", "599850",
                 "--restore-base", "0",
                 "--restore-per-gb", "0", "--quiet", "--out", str(out)]) == 0
    got = {r["job_id"]: float(r["jct"]) for r in csv.DictReader(open(out / "jobs.csv")) if r["status"] == "finished"}
    from dlsched.workload.readers import read_trace

    m = ArenaReplayPerfModel(SimplePerfModel(sim), read_arena_times(table))
    rows = []
    for j in read_trace(trace).jobs:
        t = sim.type_id(j.gpu_type)
        per = min(j.num_gpus, 2 if t >= 2 else (4 if t == 0 else 16))
        hit = m.lookup(j, t, j.num_gpus // per, per)
        if hit.iter_s is not None:
            rows.append((j.job_id, j.submit_time, t, j.num_gpus, j.total_iterations, hit.iter_s))
    want = ref.simulate(rows, sim.node_type.tolist(), sim.node_gpus.tolist(), 2000)
    assert got == pytest.approx(want, abs=1e-6)  # the same jobs finish, each with the same JCT


@pytest.mark.shared
def test_real_table_runs_are_byte_identical(shared_dir, tmp_path):
    table, trace = _arena_paths(shared_dir)
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}"
        assert main(["simulate", "--trace", str(trace), "--throughputs", str(table), "--policy", "crius",
                     "--jobs", "150", "--skip-bad-rows", "--quiet", "--out", str(out)]) == 0
        outs.append(out)
    for name in ("jobs.csv", "series.csv"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()


# ---------------------------------------------------------------- Gavel's co-location table

ISOLATED = """job_type,scale_factor,v100_steps_per_s,p100_steps_per_s,k80_steps_per_s
LM (batch size 10),1,80.0,70.0,20.0
ResNet-50 (batch size 64),1,4.0,3.0,1.0
"""
COLOCATED = """gpu,job_type,scale_factor,other_job_type,other_scale_factor,steps_per_s,other_steps_per_s
v100,LM (batch size 10),1,ResNet-50 (batch size 64),1,60.0,2.0
p100,LM (batch size 10),1,ResNet-50 (batch size 64),1,0.0,0.0
"""


def _gavel(tmp_path, gavel_cluster):
    (tmp_path / "iso.csv").write_text(ISOLATED)
    (tmp_path / "col.csv").write_text(COLOCATED)
    from dlsched.perf.default import default_perf_model

    base = default_perf_model(gavel_cluster, "adaptive")
    return with_throughputs(base, [str(tmp_path / "iso.csv"), str(tmp_path / "col.csv")])


def _gjob(jid, jt, model, batch):
    return JobSpec(jid, 0.0, model, 1, batch_size=batch, total_iterations=10, extra={"job_type": jt})


def test_packed_pairs_run_at_gavels_measured_packed_speeds(tmp_path):
    m = _gavel(tmp_path, Cluster.load("gavel-900"))
    lm = _gjob("a", "LM (batch size 10)", "lstm_lm", 10)
    rn = _gjob("b", "ResNet-50 (batch size 64)", "resnet50", 64)
    base_v100 = m.base.packing([rn, lm], "V100")
    res = m.packing([rn, lm], "V100")  # the row is (LM, ResNet): either order is found
    assert base_v100.feasible and res.feasible  # memory: the wrapped model's check
    assert res.factors == pytest.approx((2.0 / 4.0, 60.0 / 80.0))
    assert m.packing_factors([lm, rn], "V100") == pytest.approx([0.75, 0.5])
    assert not m.packing([lm, rn], "P100").feasible  # Gavel's 0: they do not run packed
    three = _gjob("c", "LM (batch size 10)", "lstm_lm", 10)
    if m.base.packing([lm, rn, three], "V100").feasible:  # three jobs: no such row, the wrapped model's
        assert m.packing([lm, rn, three], "V100").factors == m.base.packing([lm, rn, three], "V100").factors
        pk = m.describe()["replay"]["packing"]
        assert len(pk["pairs_priced_by_model"]) == 1 and pk["pairs_measured"] >= 1


def test_colocated_table_alone_is_refused(tmp_path):
    (tmp_path / "col.csv").write_text(COLOCATED)
    with pytest.raises(InputError, match="isolated"):
        with_throughputs(SimplePerfModel(Cluster.load("gavel-900")), [str(tmp_path / "col.csv")])


def test_truth_is_measured_where_the_arena_table_has_the_shape(tmp_path, sim):
    from dlsched.perf.measured.truth import TruthPerfModel, arena_measured
    from dlsched.workload.models import get_model

    (tmp_path / "t.csv").write_text(TIMES)
    measured = arena_measured(read_arena_times(tmp_path / "t.csv"), sim)
    truth = TruthPerfModel(sim, measured=measured, arena=False)
    bert13 = get_model("bert", "1.3B")
    assert truth.true_time(bert13, 128, "A100-40G", 4) == 2.0  # measured: no deviation
    assert truth.true_time(get_model("bert", "2.6B"), 128, "A40", 2) is None  # measured OOM
    assert truth.true_time(get_model("bert", "2.6B"), 128, "A40", 4) == 20.0  # 2 x 2 is A40's tightest
    assert ("bert-2.6b", "2.6B", 128, "A100-40G", 2) not in measured.times


def test_gavel_weights_read_the_table(times, sim):
    m = ArenaReplayPerfModel(SimplePerfModel(sim), times)
    a100, a40 = sim.type_id("A100-40G"), sim.type_id("A40")
    bert13 = JobSpec("a", 0.0, "bert", 4, batch_size=128, params="1.3B", total_iterations=10)
    bert26 = JobSpec("b", 0.0, "bert", 2, batch_size=128, params="2.6B", total_iterations=10)
    assert m.steps_per_s(bert13, 4, a100) == pytest.approx(4 / rounded(128, 2.0))
    assert m.steps_per_s(bert26, 2, a40) == 0.0  # measured OOM: Gavel's "does not run there"
    assert "out of memory" in m.refusal(bert26.with_(gpu_type="A40"))


def test_compare_reaims_the_replay_at_each_policy(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text(TIMES)
    trace = _trace(tmp_path, [(0, 4, "a100", "1.3B", 1000), (30, 1, "a100", "1.3B", 50)])
    out = tmp_path / "cmp"
    assert main(["compare", "--trace", str(trace), "--throughputs", str(table), "--policies", "fcfs,crius",
                 "--quiet", "--out", str(out)]) == 0
    got = {p: json.loads((out / p / "summary.json").read_text())["params"]["replay"] for p in ("fcfs", "crius")}
    assert got["fcfs"]["replan_search"] == "full" and got["crius"]["replan_search"] == "cell"


def test_dp_memory_check_guards_gavels_weights_not_speeds(tmp_path, sim):
    (tmp_path / "t.csv").write_text(TIMES)
    (tmp_path / "m.csv").write_text(MEMORY)
    m = with_throughputs(SimplePerfModel(sim), [str(tmp_path / "t.csv"), str(tmp_path / "m.csv")],
                         policy="gavel-admit")
    a100 = sim.type_id("A100-40G")
    job = JobSpec("a", 0.0, "bert", 1, batch_size=128, params="1.3B", gpu_type="A100-40G", total_iterations=100)
    assert m.refusal(job) is None  # runnable: their baselines drop a job only where no type runs it
    assert m.steps_per_s(job, 1, a100) == 0.0  # 30 GB x 1.2 > 0.8 x 40 GB: refused for scheduling
    m.forget_counts()
    gpus = [int(g) for g in np.flatnonzero(sim.gpu_type_idx == a100)[:1]]
    assert m.price(job, gpus).total == pytest.approx(300.0 * 3 / 100)  # 100 x 7 s = 700 s: 3 rounds


def test_a_model_the_table_does_not_know_runs_at_the_wrapped_models_speed(times, sim):
    base = SimplePerfModel(sim)
    m = ArenaReplayPerfModel(base, times)
    job = JobSpec("r", 0.0, "resnet50", 1, batch_size=64, total_iterations=10)
    gpus = [0]
    assert m.price(job, gpus) == base.price(job, gpus)  # at load: not refused (not theirs to refuse)
    m.forget_counts()
    assert m.price(job, gpus) == base.price(job, gpus)
    rep = m.describe()["replay"]
    assert rep["jobs_priced_by_model"] == 1 and rep["models_not_in_table"] == ["resnet50"]


def test_replay_table_and_calibration_read_the_same_rows(tmp_path, times):
    """One reader: the replay's look-up table is built from the calibration's rows."""
    from dlsched.perf.measured.arena import gpu_key
    from dlsched.workload.readers.profiles import read_profile

    p = tmp_path / "times.csv"
    p.write_text(TIMES)
    rows = read_profile(p).rows
    assert len(rows) == len(times.times)
    for r in rows:
        assert times.times[(r.model, r.param, r.batch, gpu_key(r.gpu_type), r.nodes, r.gpus_per_node)] == r.iter_time_s
    (tmp_path / "m.csv").write_text(MEMORY)
    mem = read_arena_memory(tmp_path / "m.csv").memory
    assert {(r.model, r.param, r.batch, r.gpus): r.per_gpu_mem_gb for r in read_profile(tmp_path / "m.csv").rows} == mem
