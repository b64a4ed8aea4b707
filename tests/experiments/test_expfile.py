"""Experiment files: validation errors name file, line and field; sweeps expand in a fixed order."""

from __future__ import annotations

import textwrap

import pytest

from dlsched.errors import InputError
from dlsched.experiments.expfile import load_experiment

GOOD = """\
name: t
cluster: crius-testbed
workload:
  synthetic: {jobs: 20}
policies:
  - fcfs
  - name: crius
    options: {depth: 2}
seeds: [0, 1]
sweep:
  policies.1.options.depth: [1, 2]
  workload.load: [1.0, 2.0]
"""


def _write(tmp_path, text):
    p = tmp_path / "exp.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_runs_expand_every_combination_in_order(tmp_path):
    exp, runs = load_experiment(_write(tmp_path, GOOD))
    assert len(runs) == 2 * 2 * 2 * 2  # depth x load x seeds x policies
    assert runs[0].point == "depth=1_load=1.0_seed=0" and runs[0].policy == "fcfs"
    assert runs[1].policy == "crius" and runs[1].doc["policies"] == [{"name": "crius", "options": {"depth": 1}}]
    assert runs[-1].point == "depth=2_load=2.0_seed=1"
    assert runs[-1].doc["workload"]["load"] == 2.0 and runs[-1].doc["seeds"] == [1] and "sweep" not in runs[-1].doc


@pytest.mark.parametrize("text, line, field, words", [
    (GOOD.replace("policies:\n  - fcfs", "policies:\n  - fcfss"), 6, "policies.0", "unknown policy 'fcfss'"),
    (GOOD.replace("{depth: 2}", "{depht: 2}"), 8, "policies.1.options", "bad option for policy 'crius'"),
    (GOOD.replace("jobs: 20", "jobs: 0"), 4, "workload.synthetic.jobs", "greater than or equal to 1"),
    (GOOD.replace("seeds: [0, 1]", "seeds: [0, 1]\ncolour: red"), 10, "colour", "Extra inputs"),
    (GOOD.replace("workload.load: [1.0, 2.0]", "workload.load: [1.0, -2.0]"), 12, "sweep.workload.load",
     "greater than 0"),
    (GOOD.replace("policies.1.options.depth", "policies.7.options.depth"), 11, "sweep.policies.7.options.depth",
     "does not lead into"),
    (GOOD.replace("[1, 2]", "[]"), 11, "sweep", "has no values"),
    (GOOD.replace("perf", "x") + "perf: magic\n", 13, "perf", "unknown perf model"),
    ("name: ok\npolicies: [fcfs\nseeds: [0]\n", 3, None, "malformed YAML"),
])
def test_errors_name_file_line_and_field(tmp_path, text, line, field, words):
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert e.value.file == str(p) and e.value.line == line and e.value.field == field, str(e.value)
    assert words in str(e.value)


def test_relative_trace_paths_follow_the_file(tmp_path):
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "exp.yaml").write_text("workload: {trace: traces/t.csv}\npolicies: [fcfs]\n")
    _, runs = load_experiment(sub / "exp.yaml")
    assert runs[0].doc["workload"]["trace"] == str(sub / "traces" / "t.csv")


def test_a_cluster_that_does_not_load_is_reported_before_any_run(tmp_path):
    p = _write(tmp_path, GOOD.replace("cluster: crius-testbed", "cluster: no-such-cluster"))
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert (e.value.line, e.value.field) == (2, "cluster") and "no-such-cluster" in str(e.value)
    inline = GOOD.replace("cluster: crius-testbed", "cluster: {name: x, node_groups: []}")
    with pytest.raises(InputError) as e:
        load_experiment(_write(tmp_path, inline))
    assert (e.value.line, e.value.field) == (2, "cluster") and "node_groups" in str(e.value)


def test_expanding_a_sweep_reports_progress_from_the_start(tmp_path):
    from dlsched.experiments.expfile import load_experiment

    path = tmp_path / "e.yaml"
    path.write_text("name: p\ncluster: crius-testbed\nworkload: {synthetic: {jobs: 10, days: 0.1}}\n"
                    "policies: [fcfs]\nseeds: [0, 1, 2]\nsweep:\n  workload.synthetic.jobs: [5, 6]\n")
    calls = []
    _, runs = load_experiment(path, lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 6) and [d for d, _ in calls] == list(range(6)) and len(runs) == 6


def test_a_job_count_too_big_for_memory_names_the_file_line_and_field(tmp_path):
    from dlsched.errors import InputError
    from dlsched.experiments.expfile import load_experiment

    path = tmp_path / "e.yaml"
    path.write_text("name: big\ncluster: crius-testbed\nworkload:\n  synthetic: {jobs: 1000000000, days: 1}\n"
                    "policies: [fcfs]\nseeds: [0]\n")
    with pytest.raises(InputError) as e:
        load_experiment(path)
    assert (e.value.file, e.value.line, e.value.field) == (str(path), 4, "workload.synthetic.jobs")
    path.write_text("name: big\ncluster: crius-testbed\nworkload: {synthetic: {jobs: 10}}\npolicies: [fcfs]\n"
                    "seeds: [0]\nsweep:\n  workload.synthetic.jobs: [10, 1000000000]\n")
    with pytest.raises(InputError) as e:
        load_experiment(path)
    assert (e.value.line, e.value.field) == (7, "sweep.workload.synthetic.jobs")
