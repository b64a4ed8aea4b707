"""``dlsched reproduce``: Crius's quick set prints our figures beside the paper's; the others say not yet."""

from __future__ import annotations

import json

import pytest

from dlsched.cli import main


@pytest.mark.shared
def test_reproduce_crius_quick(tmp_path, capsys, shared_dir):
    from dlsched.experiments import crius_scenarios

    if not crius_scenarios.arena_available():
        pytest.skip(f"arena trace not found at {crius_scenarios.ARENA}")
    out = tmp_path / "repro"
    assert main(["reproduce", "crius", "--quick", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "expected about" in text  # the time is stated before the runs start
    for figure in ("JCT lower than baselines (up to)", "queuing lower than baselines (up to)",
                   "avg throughput vs baselines (up to)", "peak throughput vs baselines (up to)"):
        assert figure in text
    heads = json.loads((out / "headline.json").read_text())
    assert [h["paper"] for h in heads] == [48.9, 71.0, 1.49, 1.36]
    for h in heads:  # ours computed from the runs, the ratio from both
        assert h["ours"] is not None and h["ratio"] == pytest.approx(h["ours"] / h["paper"])
    rows = json.loads((out / "crius_results.json").read_text())["testbed"]
    best = max((1 - rows["crius"]["avg_jct_h"] / rows[b]["avg_jct_h"]) * 100
               for b in ("fcfs", "gavel-admit", "elasticflow-ls", "gandiva"))
    assert heads[0]["ours"] == pytest.approx(best)
    page = (out / "report_testbed.html").read_text()
    assert "<td>crius</td>" in page and "data:image/png;base64," in page
    assert (out / "testbed" / "crius" / "jobs.csv").exists() and (out / "provenance.json").exists()


def test_unknown_paper_lists_the_known(capsys):
    assert main(["reproduce", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'nosuch'" in err
    assert all(p in err for p in ("crius", "gandiva", "dally", "crux"))
