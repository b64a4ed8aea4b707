"""``dlsched perf calibrate`` / ``perf validate`` / ``perf --nodes`` and ``--perf-params`` from the command line."""

from __future__ import annotations

import json
import re

import pytest

from dlsched.cli import main
from dlsched.cluster.topology import Cluster
from dlsched.perf.calibration import fit as F
from dlsched.perf.parallel.cost import DEFAULT_PARAMS
from dlsched.workload.readers.profiles import IterationRow, write_iterations


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """A measured-looking table: bert on A100s and V100s, 1.6x slower than the analytic defaults
    (with the activation traffic the calibration always prices: the structure it fits)."""
    from dataclasses import replace

    base = replace(DEFAULT_PARAMS, activation_passes=F.ACTIVATION_PASSES)
    rows = [IterationRow("bert", s, b, g, n, gpn, 1.0, 0) for g in ("A100-40G", "V100") for s in ("760M", "1.3B")
            for b in (128, 256) for n, gpn in ((1, 1), (1, 2), (1, 4), (2, 2), (2, 4))]
    runs, _ = F.resolve_runs(rows, Cluster.load("crius-sim"))
    out = [IterationRow(r.row.model, r.row.param, r.row.batch, r.row.gpu_type, r.row.nodes, r.row.gpus_per_node,
                        1.6 * t, 0) for r in runs if (t := F.price_run(r, base)) is not None]
    path = tmp_path_factory.mktemp("prof") / "mine.csv"
    write_iterations(path, out)
    return path


def test_calibrate_writes_a_params_file(profile, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["perf", "calibrate", str(profile), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["format"] == "dlsched-perf-params/1"
    assert data["provenance"]["sources"][0]["file"] == "mine.csv"
    assert "wrote" in capsys.readouterr().out
    # the fitted file prices the table 1.6x slower than the defaults, as measured
    from dlsched.perf.calibration.params import CalibratedParams
    from dlsched.workload.readers.profiles import read_profile

    params = CalibratedParams.load(out).cost_params()
    runs, _ = F.resolve_runs(read_profile(profile).rows, Cluster.load("crius-sim"))
    err = sorted(abs(F.price_run(r, params) / r.row.iter_time_s - 1) for r in runs)
    assert err[len(err) // 2] < 0.03


def test_validate_ends_with_the_held_out_line(profile, tmp_path, capsys):
    rows = tmp_path / "rows.csv"
    assert main(["perf", "validate", str(profile), "--holdout", "gpu", "--rows", str(rows)]) == 0
    import csv

    written = list(csv.DictReader(rows.open()))
    assert len(written) == 36 and all(float(r["held_out_s"]) > 0 and float(r["in_sample_s"]) > 0 for r in written)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    m = re.fullmatch(r"held-out median (\d+(?:\.\d+)?)% p90 (\d+(?:\.\d+)?)% \(rows (\d+)\)", last)
    assert m, last
    # one GPU type held out takes the other's correction, which is the same 1.6x here
    assert float(m.group(1)) < 5.0


def test_perf_prints_best_plan_and_split(capsys):
    assert main(["perf", "bert", "--params", "1.3B", "--cluster", "crius-sim", "--gpu-type", "A100",
                 "--nodes", "2", "--gpus-per-node", "4", "--batch", "256"]) == 0
    out = capsys.readouterr().out
    assert "best plan: P" in out and "compute" in out and "communication" in out
    assert "simulator's price for 8 A100-40G on 2 nodes" in out


def test_calibrated_is_the_default_and_adaptive_stays_by_name(capsys):
    from dlsched.cli import build_parser
    from dlsched.commands._common import spec_from_args

    assert build_parser().parse_args(["simulate"]).perf == "calibrated"
    assert spec_from_args(build_parser().parse_args(["simulate"]), "fcfs").perf.model == "calibrated"
    assert build_parser().parse_args(["simulate", "--perf", "adaptive"]).perf == "adaptive"
    argv = ["perf", "bert", "--params", "1.3B", "--cluster", "crius-sim", "--nodes", "2", "--gpus-per-node", "4"]
    assert main(argv) == 0
    assert "calibrated parameters" in capsys.readouterr().out
    assert main(argv + ["--perf", "adaptive"]) == 0
    assert "analytic parameters" in capsys.readouterr().out


def test_simulate_runs_with_perf_params(profile, tmp_path, shared_dir, capsys):
    out = tmp_path / "p.json"
    assert main(["perf", "calibrate", str(profile), "--out", str(out)]) == 0
    trace = shared_dir / "anchors" / "traces" / "arena-philly.csv"
    if not trace.is_file():
        pytest.skip(f"shared trace not found: {trace}")
    assert main(["simulate", "--cluster", "crius-sim", "--trace", str(trace), "--jobs", "10", "--quiet",
                 "--policy", "fcfs", "--perf-params", str(out), "--out", str(tmp_path / "run"),
                 "--skip-bad-rows"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "calibration" in json.dumps(summary)


@pytest.mark.parametrize("argv,words", [
    (["perf", "calibrate", "nope.csv", "--out", "x.json"], "no such file"),
    (["perf", "validate", "nope.csv"], "no such file"),
    (["perf", "resnet50", "4", "--nodes", "2", "--gpus-per-node", "2"], "data-parallel"),
    (["perf", "bert", "6", "--params", "1.3B", "--cluster", "crius-sim", "--nodes", "4", "--gpus-per-node", "2"],
     "not 6"),
    (["simulate", "--perf", "placement", "--perf-params", "x.json"], "calibrated"),
    (["simulate", "--perf", "adaptive", "--perf-params", "x.json"], "calibrated"),
    (["perf", "bert", "--params", "1.3B", "--cluster", "crius-sim", "--nodes", "2", "--gpus-per-node", "4",
      "--perf", "adaptive", "--perf-params", "x.json"], "calibrated"),
    (["perf", "bert", "8", "--params", "1.3B", "--perf-params", "nope.json"], "no such file"),
])
def test_errors_are_clear(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_calibrate_refuses_tables_with_nothing_to_fit(tmp_path, capsys):
    plans = tmp_path / "plans.csv"
    plans.write_text("model,param,batch_size,gpu_type,nodes,gpus_per_node,plan_pp_dp_mp,compute_s,"
                     "intra_stage_comm_s,inter_stage_comm_s,iter_time_s\nbert,1.3B,128,a100,1,2,1x2x1,5,0,0,5\n")
    assert main(["perf", "calibrate", str(plans), "--out", str(tmp_path / "x.json")]) == 2
    assert "nothing to fit" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_bad_params_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "dlsched-perf-params/1", "efficiency": [{"gpu": "A100-40G"}]}')
    assert main(["perf", "bert", "4", "--params", "1.3B", "--cluster", "crius-sim", "--perf-params", str(bad)]) == 2
    assert "family" in capsys.readouterr().err
