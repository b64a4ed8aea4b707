"""``--comm`` from the command line: implies the flow network, records the policy, byte-identical reruns."""

import json

from dlsched.cli import main


def _run(tmp_path, comm, name):
    out = tmp_path / name
    assert main(["simulate", "--jobs", "40", "--days", "0.05", "--cluster", "crux-testbed", "--policy", "fcfs",
                 "--comm", comm, "--out", str(out), "--quiet", "--fit-requests"]) == 0
    return out


def test_comm_runs_and_is_deterministic(tmp_path):
    a, b = _run(tmp_path, "crux", "a"), _run(tmp_path, "crux", "b")
    assert (a / "jobs.csv").read_bytes() == (b / "jobs.csv").read_bytes()
    s = json.loads((a / "summary.json").read_text())
    assert s["params"]["network"]["comm"] == "crux"
    summ = s["summary"]
    assert summ["finished"] == 40
    assert 0 < summ["gpu_compute_utilization"] <= summ["utilization"] + 1e-12
    timing = json.loads((a / "timing.json").read_text())
    assert timing["network"]["comm_assignments"] > 0


def test_policies_lists_comm(capsys):
    assert main(["policies", "fcfs", "crux"]) == 0
    out = capsys.readouterr().out
    assert "communication policies" in out and "crux:" in out


def test_no_level_left_is_a_clear_error(tmp_path, capsys):
    rc = main(["simulate", "--jobs", "5", "--cluster", "crux-testbed", "--comm", "crux", "--comm-levels", "2",
               "--comm-reserved", "2", "--out", str(tmp_path / "x"), "--quiet"])
    assert rc != 0
    assert "--comm-reserved 2" in capsys.readouterr().err


def test_serve_refuses_a_bad_level_count_before_ray(tmp_path, capsys):
    rc = main(["serve", "--comm", "crux", "--comm-levels", "2", "--comm-reserved", "2",
               "--state", str(tmp_path / "state")])
    assert rc != 0 and "--comm-reserved 2" in capsys.readouterr().err
    assert not (tmp_path / "state").exists()  # nothing written, Ray never started


def test_first_free_placement_from_the_cli(tmp_path, capsys):
    # the same jobs under both placements: first-free is recorded in summary.json, every job still
    # runs, and a bad value is refused by argparse with a message, not a traceback
    runs = {}
    for placement in ("packed", "first-free"):
        out = tmp_path / placement
        assert main(["simulate", "--jobs", "40", "--days", "0.05", "--cluster", "crux-testbed", "--policy", "fcfs",
                     "--comm", "ecmp", "--placement", placement, "--out", str(out), "--quiet",
                     "--fit-requests"]) == 0
        runs[placement] = json.loads((out / "summary.json").read_text())
    assert runs["first-free"]["params"]["placement"] == "first-free"
    assert "placement" not in runs["packed"]["params"]  # the default leaves summary.json as it was
    assert runs["first-free"]["summary"]["finished"] == runs["packed"]["summary"]["finished"] == 40
    capsys.readouterr()
    try:
        main(["simulate", "--jobs", "5", "--cluster", "crux-testbed", "--placement", "scatter",
              "--out", str(tmp_path / "bad"), "--quiet"])
    except SystemExit as e:
        assert e.code == 2
    assert "invalid choice: 'scatter'" in capsys.readouterr().err
