"""``dlsched reproduce``: Crius's quick set prints our figures beside the paper's; the others say not yet."""

from __future__ import annotations

import json

import pytest

from dlsched.cli import main


@pytest.mark.shared
def test_reproduce_crius_quick(tmp_path, capsys, shared_dir, monkeypatch):
    from dlsched.experiments import crius_grid, crius_scenarios
    from dlsched.experiments.grid import GridSpec

    if not crius_scenarios.arena_available():
        pytest.skip(f"arena trace not found at {crius_scenarios.ARENA}")
    # a 2-seed x 2-load grid keeps the test fast; the command's own quick grid is 3 x 3 x 2
    real = crius_grid.grid_spec
    monkeypatch.setattr(crius_grid, "grid_spec",
                        lambda s, q: GridSpec(seeds=(0, 1), loads=(1.0, 2.0), settings=real(s, q).settings))
    out = tmp_path / "repro"
    assert main(["reproduce", "crius", "--quick", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "expected about" in text  # the time is stated before the runs start
    for figure in ("JCT lower than FCFS", "JCT lower than Gandiva", "JCT lower than Gavel",
                   "JCT lower than ElasticFlow-LS", "queuing lower than Gandiva", "avg throughput vs Gavel",
                   "peak throughput vs ElasticFlow-LS", "[ours] Cells ablation: DP-only planning JCT vs Crius"):
        assert figure in text
    heads = json.loads((out / "headline.json").read_text())
    paper = [h for h in heads if not h["metric"].startswith("[ours]")]
    assert len(paper) == 16 and {h["paper"] for h in paper} == {48.9, 71.0, 1.49, 1.36}
    grid = json.loads((out / "testbed_grid.json").read_text())
    assert len(grid["points"]) == 8  # 2 seeds x 2 loads x 2 iteration divisors
    for h, g in zip(heads, grid["headlines"]):  # the verdict is computed from every point's value
        vals = [v["value"] for v in g["values"]]
        present = [v for v in vals if v is not None]
        assert len(vals) == 8 and g["lo"] == min(present) and g["hi"] == max(present)
        op, edge = g["direction"].split()
        held = sum(v is not None and (v > float(edge) if op == ">" else v < float(edge)) for v in vals)
        want = "reproduced" if held == 8 else "not reproduced" if held == 0 else "mixed"
        assert h["verdict"] == f"{want} ({held}/8)"
    # the values come from the runs: Crius's JCT against FCFS at one point, recomputed
    pt = grid["points"][0]["rows"]
    first = grid["headlines"][0]
    assert first["headline"] == "JCT lower than FCFS"
    assert first["values"][0]["value"] == pytest.approx((1 - pt["crius"]["avg_jct_h"] / pt["fcfs"]["avg_jct_h"]) * 100)
    page = (out / "report_testbed.html").read_text()
    assert "<td>crius</td>" in page and "data:image/png;base64," in page
    assert (out / "testbed" / "crius" / "jobs.csv").exists() and (out / "provenance.json").exists()


def test_unknown_paper_lists_the_known(capsys):
    assert main(["reproduce", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'nosuch'" in err
    assert all(p in err for p in ("crius", "gandiva", "dally", "crux"))
