"""``dlsched report --html``: one self-contained page, the figures the runs support, PNGs beside it."""

from __future__ import annotations

import re

import pytest

from dlsched.cli import main


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for policy in ("fcfs", "crius"):
        assert main(["simulate", "--jobs", "60", "--days", "0.02", "--cluster", "crius-testbed", "--policy", policy,
                     "--out", str(root / policy), "--quiet"]) == 0
    return root


def test_page_is_self_contained_and_overlays_the_runs(two_runs, tmp_path, capsys):
    out = tmp_path / "rep" / "report.html"
    assert main(["report", str(two_runs / "fcfs"), str(two_runs / "crius"), "--html", str(out)]) == 0
    page = out.read_text()
    srcs = re.findall(r"""(?:src|href)=['"]([^'"]+)""", page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)  # nothing fetched from elsewhere
    for fig in ("jct_cdf", "queue_cdf", "busy_gpus", "queue_length", "throughput", "remaining_jobs", "moves"):
        assert f"id='{fig}'" in page
        assert (out.parent / f"report_{fig}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<td>fcfs</td>" in page and "<td>crius</td>" in page
    # no deadlines and no network tiers in these runs: left out, and the page says so
    assert "id='deadlines'" not in page and "deadlines" in page.split("figures left out")[1]
    assert "report in" in capsys.readouterr().out


def test_same_runs_give_the_same_bytes(two_runs, tmp_path):
    from dlsched.report.html import write_report

    a, _ = write_report([two_runs / "crius"], tmp_path / "a.html")
    b, _ = write_report([two_runs / "crius"], tmp_path / "b.html")
    assert a.read_bytes() == b.read_bytes()


def test_links_csv_is_drawn_or_its_problem_noted(two_runs, tmp_path):
    import shutil

    from dlsched.report.html import write_report

    run = tmp_path / "run"
    shutil.copytree(two_runs / "crius", run)
    (run / "links.csv").write_text("link,utilization\nrack0-up,0.8\nrack1-up,0.3\n")
    page = write_report([run], tmp_path / "ok.html")[0].read_text()
    assert "id='link_utilisation'" in page
    (run / "links.csv").write_text("name,busy\nx,1\n")
    page = write_report([run], tmp_path / "bad.html")[0].read_text()
    assert "id='link_utilisation'" not in page and "no &#x27;link&#x27; and &#x27;utilization&#x27; columns" in page


def test_not_a_results_directory_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--html", str(tmp_path / "r.html")]) == 2
    assert "not a results directory" in capsys.readouterr().err


def test_a_compare_root_gives_one_run_per_policy(two_runs, tmp_path):
    from dlsched.report.html import write_report

    page = write_report([two_runs], tmp_path / "cmp.html")[0].read_text()
    assert "<td>fcfs</td>" in page and "<td>crius</td>" in page
