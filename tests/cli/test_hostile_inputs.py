"""Paths and files a careless or hostile user gives: clear one-line errors, never a traceback or a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlsched.cli import main

ROOT = Path(__file__).resolve().parents[2]
LONG = "x" * 300  # one name over the file system's 255-byte limit


@pytest.mark.parametrize("args", [
    ["simulate", "--trace", f"{LONG}.csv"], ["simulate", "--cluster", f"{LONG}.yaml"],
    ["simulate", "--jobs", "5", "--out", LONG], ["simulate", "--jobs", "5", "--timeline", f"{LONG}.json"],
    ["simulate", "--jobs", "5", "--throughputs", f"{LONG}.csv"], ["submit", f"{LONG}.yaml"],
    ["report", LONG], ["run", f"{LONG}.yaml"], ["status", "--state", LONG],
], ids=lambda a: " ".join(x if len(x) < 30 else "LONG" for x in a))
def test_an_over_long_path_is_a_clear_error(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([*args, *(["--state", str(tmp_path / "st")] if args[0] == "submit" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dlsched: error: ") and "too long" in err and "Traceback" not in err
    assert len(err) < 400  # the name is shortened, the reason stays readable


@pytest.mark.parametrize("flag, name", [("--trace", "t.csv"), ("--cluster", "c.yaml"), ("--throughputs", "x.csv"),
                                        ("--tier-profile", "tiers.csv")])
def test_a_fifo_is_refused_without_opening_it(flag, name, tmp_path):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    # in a child process with a timeout: opening a FIFO for reading would block until a writer came
    done = subprocess.run([sys.executable, "-m", "dlsched.cli", "simulate", "--jobs", "5", "--perf", "placement",
                           flag, str(fifo), "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 2 and "FIFO" in done.stderr and "Traceback" not in done.stderr, done.stderr



@pytest.mark.parametrize("kind", ["cluster", "experiment", "jobfile"])
@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_nested_too_deep_is_an_error_at_its_line(kind, style, tmp_path, capsys):
    deep = ("nested: " + "[" * 900 + "]" * 900 + "\n") if style == "flow" else ("nested:\n" + "".join(
        "  " * (i + 1) + f"k{i}:\n" for i in range(900)) + "  " * 901 + "v: 1\n")
    path = tmp_path / f"{kind}.yaml"
    path.write_text("name: deep\n" + deep)
    args = {"cluster": ["simulate", "--cluster", str(path)], "experiment": ["run", str(path)],
            "jobfile": ["submit", str(path), "--state", str(tmp_path / "st")]}[kind]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "nested more than 64 levels deep" in err and f"{path}, line " in err


def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration,priority,priority\na,0,resnet50,1,60,5,0\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace)]) == 2
    assert "line 1, field 'priority': column 'priority' appears twice" in capsys.readouterr().err


def test_a_row_shorter_than_the_header_is_refused_or_skipped_and_counted(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration,deadline\n"
                     "a,0,resnet50,1,60,7200\nb,5,resnet50,1,60\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace)]) == 2
    assert "line 3, field 'deadline': 5 fields, the header has 6" in capsys.readouterr().err
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--skip-bad-rows",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert "skipped 1 row" in capsys.readouterr().err


def test_an_implausible_throughput_is_refused_with_its_bound(tmp_path, capsys):
    table = tmp_path / "thr.csv"
    table.write_text("job_type,scale_factor,v100_steps_per_s\nResNet-50 (batch size 64),1,1e-300\n")
    assert main(["simulate", "--jobs", "5", "--throughputs", str(table)]) == 2
    err = capsys.readouterr().err
    assert "line 2, field 'v100_steps_per_s': implausible throughput 1e-300" in err and "[1e-06, 1e+06]" in err
