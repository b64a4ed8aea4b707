"""The HTML report and the live status page render in headless Chromium: no console message, every image
loaded; screenshots go to the test's temporary folder (skipped without Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

from browser import IMAGE_PROBE, chromium, render

from dlsched.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_report_renders_with_every_image(tmp_path):
    chromium()
    run = tmp_path / "run"
    assert main(["simulate", "--jobs", "30", "--days", "0.05", "--cluster", "crius-testbed", "--policy", "gavel",
                 "--out", str(run), "--quiet"]) == 0
    page = tmp_path / "report.html"
    assert main(["report", str(run), "--html", str(page)]) == 0
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", IMAGE_PROBE + "</body>"))
    dom, console = render(probe.as_uri(), tmp_path, screenshot=tmp_path / "report.png")
    assert console == []
    states = re.search(r'<pre id="image-probe">([^<]*)</pre>', dom).group(1).split()
    assert len(states) >= 6 and set(states) == {"ok"}
    assert _png_size(tmp_path / "report.png") == (1280, 2200)


def test_status_page_renders_and_fills_its_tables(tmp_path):
    chromium()
    from dlsched.live.jobfile import load_jobs
    from dlsched.live.statuspage import StatusPage
    from dlsched.live.store import Store

    st = Store(tmp_path / "state")
    st.submit(load_jobs(EXAMPLES / "trace6.yaml"))
    st.event(0.0, None, "service-start", policy="fcfs", gpus=6)
    st.update_job("j1", status="running", allocation=[0, 1], done_iterations=40.0)
    st.update_job("j2", status="finished", done_iterations=45.0)
    st.event(1.0, "j1", "start", segment=1, gpus=[0, 1])
    st.series_sample(1.0, 2, 1, 4, 123.0)
    page = StatusPage(st.path, 0)
    try:
        assert page.url.startswith("http://127.0.0.1:")
        dom, console = render(page.url, tmp_path, screenshot=tmp_path / "status.png", size=(1100, 900))
    finally:
        page.close()
        st.close()
    assert console == []
    assert "2 of 6 GPUs busy (33%)" in dom
    assert re.search(r"<td>j1</td><td class=\"running\">running</td><td>0, 1</td><td>40 / 250</td>", dom)
    assert "<td>start</td><td>gpus=[0, 1], segment=1</td>" in dom
    assert _png_size(tmp_path / "status.png") == (1100, 900)
