"""Bad input through ``dlsched simulate``: exit code 2, a one-line error naming file, line and
field, no traceback; with --skip-bad-rows the rows are listed and the run goes on."""

from __future__ import annotations

import gzip
import json

import pytest

from dlsched.cli import main

HEADER = "job_id,submit_time,model,num_gpus,batch_size,iterations\n"
GOOD = "a,0,resnet50,1,32,100\n"
SPEC = "name: t\nnode_groups:\n  - {name: g, gpu: A40, nodes: 2, gpus_per_node: 2}\n"


def simulate(tmp_path, *args):
    return main(["simulate", "--cluster", "crius-testbed", "--quiet", "--out", str(tmp_path / "out"), *args])


def trace(tmp_path, data, name="t.csv"):
    p = tmp_path / name
    (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)
    return str(p)


@pytest.mark.parametrize("data,where", [
    (HEADER + GOOD + GOOD, ["line 3", "field 'job_id'", "duplicate job id"]),
    (HEADER + GOOD + "b,1e20,resnet50,1,32,100\n", ["line 3", "field 'submit_time'"]),
    (HEADER + GOOD + "b,5,resnet50,2.5,32,100\n", ["line 3", "field 'num_gpus'"]),
    (HEADER.encode() + GOOD.encode() + b"b\xe9,5,resnet50,1,32,100\n", ["line 3", "field 'job_id'", "UTF-8"]),
    (gzip.compress((HEADER + GOOD).encode()), ["gzip"]),
    (b"\x00\x01\x02binary", ["binary"]),
    ((HEADER + GOOD).replace(",", ";"), ["comma-separated"]),
    (HEADER, ["no jobs"]),
    ("", ["empty file"]),
])
def test_bad_trace_exits_2_without_traceback(tmp_path, capsys, data, where):
    p = trace(tmp_path, data)
    assert simulate(tmp_path, "--trace", p) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("dlsched: error: ") and p in err
    for w in where:
        assert w in err


def test_directory_as_trace(tmp_path, capsys):
    assert simulate(tmp_path, "--trace", str(tmp_path)) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("data,line,field", [
    (HEADER + GOOD + "a,5,resnet50,1,32,100\n", 3, "job_id"),
    (HEADER + GOOD + "b,5,resnet50,1,32,100,extra\n", 3, ""),
    (HEADER.encode() + GOOD.encode() + b"b\xe9,5,resnet50,1,32,100\n", 3, "job_id"),
])
def test_skip_bad_rows_lists_them(tmp_path, capsys, data, line, field):
    p = trace(tmp_path, data)
    assert simulate(tmp_path, "--trace", p, "--skip-bad-rows") == 0
    err = capsys.readouterr().err
    assert "skipped 1 row of" in err
    assert (f"line {line}, field '{field}':" if field else f"line {line}: ") in err
    params = json.loads((tmp_path / "out" / "summary.json").read_text())["params"]
    assert params["skipped"] == [{"line": line, "field": field, "reason": params["skipped"][0]["reason"]}]


@pytest.mark.parametrize("spec,where", [
    (SPEC.replace("nodes: 2", "nodes: 2, nodes: 3"), ["line 3", "duplicate key 'nodes'"]),
    (SPEC.replace("nodes: 2", "nodes: true"), ["line 3", "nodes"]),
    (SPEC.replace("nodes: 2", "nodes: 100000000000"), ["at most"]),
    (SPEC + "network: {rack_gbps: .inf}\n", ["line 4", "network.rack_gbps"]),
    (gzip.compress(SPEC.encode()), ["gzip"]),
    (SPEC.encode() + b"description: caf\xe9\n", ["line 4", "UTF-8"]),
])
def test_bad_cluster_spec_exits_2(tmp_path, capsys, spec, where):
    p = tmp_path / "c.yaml"
    (p.write_bytes if isinstance(spec, bytes) else p.write_text)(spec)
    assert main(["simulate", "--cluster", str(p), "--jobs", "5", "--quiet", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(p) in err
    for w in where:
        assert w in err


@pytest.mark.parametrize("days", ["inf", "nan", "0"])
def test_bad_days(tmp_path, capsys, days):
    with pytest.raises(SystemExit) as err:  # refused by argparse, before anything is generated
        simulate(tmp_path, "--jobs", "5", "--days", days)
    assert err.value.code == 2 and "argument --days: must be" in capsys.readouterr().err
