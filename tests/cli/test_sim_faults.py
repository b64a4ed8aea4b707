"""Simulator faults and bad input, each refused before the run with a clear message (issue 15
items 6, 8, 9; issue 14 items 3-5).  Every case names the behaviour before the fix."""

from __future__ import annotations

import inspect
import io
import json
import math

import pytest

from dlsched.cli import main
from dlsched import memory
from dlsched.errors import InputError, InvariantError
from dlsched.policies import registry
from dlsched.report.io import strict_json, write_results
from dlsched.report.records import TimeSeries
from dlsched.report.tables import print_summaries

SMALL = ["--cluster", "crius-testbed", "--jobs", "20", "--days", "0.05", "--quiet"]


def write_trace(path, rows, header="job_id,submit_time,model,num_gpus,batch_size,iterations"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def usage_error(argv, capsys) -> str:
    """argparse refuses the value: exit status 2 and a message, never a traceback."""
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
    return capsys.readouterr().err


def strict_load(path):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(path.read_text(), parse_constant=refuse)


# ------------------------------------------------------------ flags checked before the run


def test_out_naming_a_file_fails_before_the_run(tmp_path, capsys):
    # before: the whole simulation ran, then FileExistsError and the results were lost
    target = tmp_path / "results.txt"
    target.write_text("keep me")
    assert main(["simulate", *SMALL, "--out", str(target)]) == 2
    cap = capsys.readouterr()
    assert "names an existing file" in cap.err and "--out" in cap.err
    assert "avg JCT" not in cap.out  # nothing was simulated
    assert target.read_text() == "keep me"
    assert main(["simulate", *SMALL, "--out", str(target / "sub")]) == 2
    assert "which is a file" in capsys.readouterr().err


def test_compare_out_checked_for_every_policy(tmp_path, capsys):
    (tmp_path / "cmp").mkdir()
    (tmp_path / "cmp" / "fcfs-backfill").write_text("")
    assert main(["compare", *SMALL, "--policies", "fcfs,fcfs-backfill", "--out", str(tmp_path / "cmp")]) == 2
    assert "fcfs-backfill names an existing file" in capsys.readouterr().err
    assert not (tmp_path / "cmp" / "fcfs").exists()


@pytest.mark.parametrize("policies", ["", " , ", ","])
def test_compare_without_policies_is_a_clear_error(policies, tmp_path, capsys):
    # before: FileNotFoundError traceback
    assert main(["compare", *SMALL, "--policies", policies, "--out", str(tmp_path / "c")]) == 2
    assert "no policy names" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed: must be 0 or more"),  # before: a traceback from numpy
    (["--max-time", "-5"], "--max-time: must be positive"),  # before: accepted
    (["--max-time", "nan"], "--max-time: must be a finite number"),
    (["--checkpoint-interval", "0"], "--checkpoint-interval: must be positive"),  # before: accepted
    (["--checkpoint-interval", "inf"], "--checkpoint-interval: must be a finite number"),
    (["--days", "nan"], "--days: must be a finite number"),  # before: NaN in summary.json
    (["--start-overhead", "-1"], "--start-overhead: must be 0 or more"),
    (["--restore-base", "nan"], "--restore-base: must be a finite number"),
    (["--restore-per-gb", "x"], "--restore-per-gb: not a number"),
])
def test_bad_values_are_refused_up_front(argv, message, capsys):
    assert message in usage_error(["simulate", "--quiet", *argv], capsys)


@pytest.mark.parametrize("value", ["-5", "nan"])
def test_perf_bucket_must_be_a_size(value, capsys):
    # before: accepted
    assert "--bucket-mb" in usage_error(["perf", "resnet50", "8", "--bucket-mb", value], capsys)


def test_billion_jobs_refused_with_the_figure_million_allowed(monkeypatch, tmp_path, capsys):
    # before: killed by the kernel at 24 GB
    monkeypatch.setattr(memory, "available_bytes", lambda: 16 * 2**30)
    assert main(["simulate", "--quiet", "--jobs", "1000000000", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "1,000,000,000 jobs would need about" in err and "GiB" in err and "16.0 GiB available" in err
    memory.check_memory(1_000_000)  # the 1M-job scale benchmark must still run on 16 GiB


def test_engine_costs_reach_the_run_and_summary(tmp_path):
    out = tmp_path / "o"
    assert main(["simulate", *SMALL, "--start-overhead", "7", "--restore-base", "3", "--restore-per-gb", "0.5",
                 "--checkpoint-interval", "600", "--out", str(out)]) == 0
    sim = strict_load(out / "summary.json")["params"]["sim"]
    assert (sim["start_overhead_s"], sim["restore_base_s"], sim["restore_s_per_gb"],
            sim["checkpoint_interval_s"]) == (7.0, 3.0, 0.5, 600.0)


# ------------------------------------------------------------ strict JSON


def test_no_nan_can_reach_summary_json(tmp_path):
    with pytest.raises(InvariantError, match=r"summary.avg_jct"):
        write_results(tmp_path / "o", [], TimeSeries(), {"avg_jct": math.nan}, {})
    with pytest.raises(InvariantError, match=r"params.x.1"):
        strict_json({"params": {"x": [1.0, math.inf]}})
    assert json.loads(strict_json({"a": None, "b": 1.5})) == {"a": None, "b": 1.5}


def test_summary_json_is_standard_json(tmp_path):
    out = tmp_path / "o"
    assert main(["simulate", *SMALL, "--out", str(out)]) == 0
    strict_load(out / "summary.json")
    strict_load(out / "timing.json")


# ------------------------------------------------------------ policy options


def test_option_reaches_the_policy_and_summary(tmp_path):
    out = tmp_path / "o"
    assert main(["simulate", *SMALL, "--policy", "timeslice", "--option", "quantum_s=120",
                 "--option", "consolidate=false", "--out", str(out)]) == 0
    params = strict_load(out / "summary.json")["params"]
    assert params["policy_options"] == {"quantum_s": 120.0, "consolidate": False, "costs": "derived", "plan_s": 30.0}
    assert params["quantum_s"] == 120.0 and params["consolidate"] is False  # the policy's own describe()


@pytest.mark.parametrize("option, message", [
    ("nope=1", "policy 'timeslice' has no option 'nope'; its options: consolidate, costs, plan_s, quantum_s"),
    ("quantum_s=0", "bad option for policy 'timeslice': quantum_s: must be positive"),
    ("quantum_s=nan", "quantum_s: must be a finite number"),
    ("quantum_s=fast", "quantum_s: not a number: 'fast'"),
    ("consolidate=maybe", "consolidate: not a boolean"),
    ("quantum_s", "expected KEY=VALUE"),
])
def test_bad_options_are_refused(option, message, tmp_path, capsys):
    assert main(["simulate", *SMALL, "--policy", "timeslice", "--option", option, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_compare_options_go_to_the_policies_that_have_them(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["compare", *SMALL, "--policies", "fcfs-backfill,gavel", "--option", "round_s=600",
                 "--option", "fcfs-backfill.window=5", "--out", str(out)]) == 0
    doc = strict_load(out / "compare.json")["params"]["policy_options"]
    assert doc["fcfs-backfill"] == {"window": 5, "costs": "derived", "plan_s": 30.0}  # FCFS pays re-planning too
    assert doc["gavel"]["round_s"] == 600.0 and doc["gavel"]["lp"] == "flow"
    assert main(["compare", *SMALL, "--policies", "fcfs,gavel", "--option", "depth=2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no policy in this run has option 'depth'; their options: fcfs.arena, fcfs.costs, fcfs.plan_s, " \
        "fcfs.window, gavel." in err


def test_policies_command_lists_summary_paper_and_options(capsys):
    assert main(["policies"]) == 0
    text = capsys.readouterr().out
    for name in registry.policy_names():
        assert f"\n{name}: " in text
    assert "Gandiva" in text and "OSDI 2018" in text
    assert "--option quantum_s=<float>  default 600: time slice in seconds" in text


@pytest.mark.parametrize("name", registry.policy_names())
def test_declared_options_match_the_constructor(name):
    """One source of truth: each declared option is a constructor keyword with the same default."""
    cls = registry.policy_class(name)
    assert cls.summary and cls.paper, name
    params = inspect.signature(cls.__init__).parameters
    for opt in cls.options:
        assert opt.name in params, (name, opt.name)
        assert params[opt.name].default == opt.default, (name, opt.name)
    registry.make_policy(name, **{o.name: o.default for o in cls.options})


def test_registry_names_only_modules_that_exist_and_fails_loudly(monkeypatch):
    # before: gandiva, tiresias and dally were listed and silently missing
    import importlib.util

    for mod in registry.MODULES:
        assert importlib.util.find_spec(f"dlsched.policies.{mod}") is not None, mod
    monkeypatch.setattr(registry, "MODULES", (*registry.MODULES, "no_such_policy_module"))
    monkeypatch.setattr(registry, "_loaded", False)
    with pytest.raises(ModuleNotFoundError, match="no_such_policy_module"):
        registry.policy_names()


def test_make_policy_checks_values_given_in_code():
    with pytest.raises(InputError, match="quantum_s: must be positive"):
        registry.make_policy("timeslice", quantum_s=-1.0)
    with pytest.raises(InputError, match="has no option 'bogus'"):
        registry.make_policy("fcfs", bogus=1)


# ------------------------------------------------------------ trace rows


def test_unterminated_quote_is_reported_as_such(tmp_path, capsys):
    # before: reported as a field-count error (or, here, an unknown model)
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,batch_size,iterations\n"
                     "a,0,resnet50,1,32,100\n"
                     'b,5,"resnet50,1,32,100\n'
                     "c,6,resnet50,1,32,100\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "t.csv, line 3, field 'model': unterminated quote" in err and "runs over line 4" in err
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--skip-bad-rows",
                 "--out", str(tmp_path / "o")]) == 0
    assert "line 3, field 'model': unterminated quote" in capsys.readouterr().err
    assert strict_load(tmp_path / "o" / "summary.json")["params"]["skipped_rows"] == 1


@pytest.mark.parametrize("size_field, value, message", [
    ("duration_s", 0, "duration must be positive"),  # before: accepted silently
    ("iterations", 0, "must be >= 1"),
])
def test_job_of_no_length_is_rejected_or_skipped(size_field, value, message, tmp_path, capsys):
    trace = write_trace(tmp_path / "t.csv", [("a", 0, "resnet50", 1, 32, 100), ("b", 5, "resnet50", 1, 32, value)],
                        header=f"job_id,submit_time,model,num_gpus,batch_size,{size_field}")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    assert f"line 3, field '{size_field}': {message}" in capsys.readouterr().err
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--skip-bad-rows",
                 "--out", str(tmp_path / "o")]) == 0
    params = strict_load(tmp_path / "o" / "summary.json")["params"]
    assert params["skipped"] == [{"line": 3, "field": size_field, "reason": pytest.approx(params["skipped"][0]["reason"])}]
    assert message in params["skipped"][0]["reason"] and params["jobs"] == 1


# ------------------------------------------------------------ requests a model cannot run on


MOE_ON_ONE_A10 = [("ok", 0, "resnet50", 1, 32, 50), ("big", 10, "moe-2.4b", 1, 64, 50)]


def moe_trace(tmp_path):
    return write_trace(tmp_path / "t.csv", [r + ("A10",) for r in MOE_ON_ONE_A10],
                       header="job_id,submit_time,model,num_gpus,batch_size,iterations,gpu_type")


def test_request_that_cannot_hold_its_model_is_found_at_load(tmp_path, capsys):
    # before: "cannot run on GPUs [988]: iteration time inf s" a second into the run (every policy but crius)
    trace = moe_trace(tmp_path)
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "t.csv, line 3, field 'num_gpus'" in err and "cannot run on 1 A10 GPU" in err
    assert "--fit-requests" in err and not (tmp_path / "o").exists()


def test_fit_requests_grows_and_lists_each_change(tmp_path, capsys):
    trace = moe_trace(tmp_path)
    out = tmp_path / "o"
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--fit-requests",
                 "--policy", "fcfs", "--out", str(out)]) == 0
    assert "line 3, field 'num_gpus': moe-2.4b 1 -> 2 GPUs" in capsys.readouterr().err
    params = strict_load(out / "summary.json")["params"]
    (change,) = params["fitted_requests"]
    assert change["job_id"] == "big" and change["line"] == 3 and change["old"] == 1 and change["new"] in (2, 4, 8, 16)
    jobs = (out / "jobs.csv").read_text()
    assert jobs.count("finished") == 2


def test_skip_bad_rows_leaves_out_a_request_that_cannot_hold_its_model(tmp_path, capsys):
    trace = moe_trace(tmp_path)
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--skip-bad-rows",
                 "--out", str(tmp_path / "o")]) == 0
    assert "skipped 1 row" in capsys.readouterr().err
    params = strict_load(tmp_path / "o" / "summary.json")["params"]
    assert params["skipped"][0]["field"] == "num_gpus" and params["jobs"] == 1


def test_jobs_takes_the_first_n_of_a_trace(tmp_path):
    trace = write_trace(tmp_path / "t.csv", [(f"j{i}", i, "resnet50", 1, 32, 10) for i in range(6)])
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--jobs", "4",
                 "--out", str(tmp_path / "o")]) == 0
    params = strict_load(tmp_path / "o" / "summary.json")["params"]
    assert params["jobs"] == 4 and params["trace_jobs"] == 6


# ------------------------------------------------------------ tables and report


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_tables_never_truncate_at_80_columns(monkeypatch):
    # before: rich cut figures to fit the terminal ("1027…")
    monkeypatch.setenv("COLUMNS", "80")
    f = _Tty()
    print_summaries({"a-long-policy-name": {"finished": 102734, "unfinished": 5, "dropped": 3,
                                            "avg_jct": 3.7e9, "makespan": 9.9e9, "utilization": 0.5,
                                            "avg_throughput": 1234567.0, "restarts_per_job": 0.25}}, file=f)
    text = f.getvalue()
    assert "…" not in text and "102734" in text and "1027777.78" in text and "1234567" in text


def test_dropped_job_is_visible_in_the_table(tmp_path, capsys):
    # before: the table showed finished jobs only; a job Crius dropped disappeared from view
    trace = write_trace(tmp_path / "t.csv", [("a", 0, "resnet50", 1, 32, 100, ""),
                                             ("late", 0, "gpt-1.3b", 8, 64, 10**7, 10)],
                        header="job_id,submit_time,model,num_gpus,batch_size,iterations,deadline")
    out = tmp_path / "o"
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--fit-requests",
                 "--policy", "crius-ddl", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header, row = [line.split() for line in text.splitlines() if line.startswith(("policy", "crius-ddl"))][:2]
    assert header[1:4] == ["finished", "unfinished", "dropped"] and row[1:4] == ["1", "0", "1"]
    assert main(["report", str(out)]) == 0
    assert "dropped" in capsys.readouterr().out


def test_report_reads_the_directory_compare_writes(tmp_path, capsys):
    # before: "not a results directory (no jobs.csv)" for runs/compare
    out = tmp_path / "cmp"
    assert main(["compare", *SMALL, "--policies", "fcfs-backfill,fcfs", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    lines = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert lines == ["fcfs-backfill", "fcfs"]  # the order compare ran them
    assert main(["report", str(tmp_path)]) == 2
    assert "no sub-directory with one" in capsys.readouterr().err


# ------------------------------------------------------------ jobs the run never reached


def test_jobs_arriving_after_max_time_are_accounted_for(tmp_path):
    # before: left out of jobs.csv and the summary entirely
    trace = write_trace(tmp_path / "t.csv", [("a", 0, "resnet50", 1, 32, 100), ("b", 5000, "resnet50", 1, 32, 100)])
    out = tmp_path / "o"
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--max-time", "1000",
                 "--out", str(out)]) == 0
    assert strict_load(out / "summary.json")["summary"]["jobs"] == 2
    rows = (out / "jobs.csv").read_text().splitlines()
    assert any(r.startswith("b,") and "submitted after the simulation stopped" in r for r in rows)


# ------------------------------------------------------------ cluster-spec fields that would be ignored


def test_spines_without_clos_are_refused_not_ignored(tmp_path, capsys):
    # before: parsed, then silently run as the tiered model's single path between racks
    spec = tmp_path / "c.yaml"
    spec.write_text("name: c\nnode_groups:\n  - {name: a, gpu: A100, nodes: 2, gpus_per_node: 8}\nnetwork:\n"
                    "  spines: 2\n")
    assert main(["simulate", *SMALL[2:], "--cluster", str(spec), "--out", str(tmp_path / "o")]) == 2
    assert "spines 2 describes a Clos fabric; set topology: clos" in capsys.readouterr().err


def test_clos_fabric_takes_effect_under_the_flow_network(tmp_path):
    # a Clos spec builds the network layer's Clos link graph (dlsched.network.topologies.clos_of)
    spec = tmp_path / "c.yaml"
    spec.write_text("name: c\nnode_groups:\n  - {name: a, gpu: A100, nodes: 4, gpus_per_node: 8, nodes_per_rack: 2}\n"
                    "network:\n  topology: clos\n  spines: 2\n")
    out = tmp_path / "o"
    assert main(["simulate", *SMALL[2:], "--cluster", str(spec), "--network", "flow", "--out", str(out)]) == 0
    assert strict_load(out / "summary.json")["params"]["network"]["topology"] == "c:clos"
