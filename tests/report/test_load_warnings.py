"""Runs that could not differ are said to be so; repeated policy names are told apart by directory;
long runs print progress when stderr is not a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

from dlsched.cli import main
from dlsched.report.labels import unique_labels
from dlsched.report.progress import plain_progress
from dlsched.report.warnings import describe_load, network_lines, nothing_could_differ

WAITED = {"jobs": 3, "avg_queue": 10.0, "avg_jct": 100.0}
IDLE = {"jobs": 3, "avg_queue": 0.0, "avg_jct": 90.0}


def test_no_job_waited_under_any_policy():
    lines = nothing_could_differ({"fcfs": IDLE, "tiresias": dict(IDLE, avg_jct=91.0)})
    assert lines == ["no job waited under any policy: policies cannot differ; raise --load "
                     "(or --time-scale below 1 on a trace)"]


def test_some_idle_and_identical_runs():
    lines = nothing_could_differ({"fcfs": WAITED, "fcfs-backfill": dict(WAITED), "crius": IDLE})
    assert "no job waited under crius" in lines and "fcfs, fcfs-backfill gave identical schedules" in lines


def test_nothing_said_when_runs_differ_and_jobs_waited():
    assert nothing_could_differ({"fcfs": WAITED, "gandiva": dict(WAITED, avg_jct=50.0)}) == []


def test_network_lines_warn_when_no_link_was_shared():
    quiet = network_lines({"network": {"solves": 0, "largest_group": 1, "jobs_sharing_links": 0}})
    assert quiet[0].startswith("network: 0 jobs shared a link; 0 contention groups solved") and "warning" in quiet[1]
    busy = network_lines({"network": {"solves": 38, "largest_group": 7, "jobs_sharing_links": 24}})
    assert busy == ["network: 24 jobs shared a link; 38 contention groups solved (largest 7 jobs)"]
    assert network_lines({}) == []


def test_describe_load():
    assert describe_load({"offered_load": 1.0, "offered_gpu_hours": 1234.5, "arrival_window_h": 2.0}) == \
        "offered load 1.00 (1,234.5 GPU-hours asked over a 2.00-hour arrival window)"
    assert "batch" in describe_load({"offered_load": None, "offered_gpu_hours": 10.0, "arrival_window_h": 0.0})


def test_labels_by_directory_when_names_repeat():
    dirs = [Path("/r/a/compare/fcfs"), Path("/r/b/compare/fcfs"), Path("/r/a/compare/crius")]
    assert unique_labels(["fcfs", "fcfs", "crius"], dirs) == ["fcfs (a/compare)", "fcfs (b/compare)", "crius"]


def test_plain_progress_prints_at_most_once_per_period():
    now = iter([0.0, 5.0, 31.0, 40.0, 62.0])
    out = io.StringIO()
    with plain_progress("fcfs on x", every_s=30, file=out, clock=lambda: next(now)) as cb:
        for done in (1, 2, 3, 4):
            cb(3600.0 * done, done, 4)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("dlsched: fcfs on x: 2/4 jobs done")


def test_report_flags_identical_runs_and_labels_them(tmp_path, capsys):
    for d in ("a", "b"):
        assert main(["compare", "--cluster", "crius-testbed", "--jobs", "8", "--quiet", "--out",
                     str(tmp_path / d)]) == 0
    err = capsys.readouterr().err
    assert "no job waited under any policy" in err and "fcfs, fcfs-backfill gave identical schedules" in err
    assert main(["report", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out, err = capsys.readouterr()
    assert "fcfs (a)" in out and "fcfs-backfill (b)" in out and "offered load" in out
    assert "gave identical schedules" in err
    summary = json.loads((tmp_path / "a" / "fcfs" / "summary.json").read_text())
    assert summary["summary"]["offered_load"] == summary["params"]["offered_load"] == 1.0


def test_queue_cdf_names_runs_that_never_waited(tmp_path):
    from dlsched.report.figures import fig_queue_cdf
    from dlsched.report.html import load_runs

    assert main(["simulate", "--cluster", "crius-testbed", "--jobs", "6", "--quiet", "--out", str(tmp_path / "r")]) == 0
    runs, notes = load_runs([tmp_path / "r"])
    texts = [t.get_text() for t in fig_queue_cdf(runs).axes[0].texts]
    assert texts == ["no job waited: fcfs"]
    assert any("no job waited" in n for n in notes)


def test_network_runs_say_whether_any_link_was_shared(tmp_path, capsys):
    out = tmp_path / "n"
    assert main(["simulate", "--cluster", "crux-testbed", "--network", "flow", "--jobs", "10", "--quiet",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "jobs shared a link" in err and "contention groups solved" in err
    assert main(["report", str(out)]) == 0
    assert "fcfs: network: " in capsys.readouterr().err
