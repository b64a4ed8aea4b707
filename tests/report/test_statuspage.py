"""The live status page: loopback only, read-only, JSON the page redraws from; a taken port is a warning."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

from dlsched.live.jobfile import load_jobs
from dlsched.live.statuspage import StatusPage, snapshot
from dlsched.live.store import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _store(tmp_path) -> Store:
    st = Store(tmp_path / "state")
    st.submit(load_jobs(EXAMPLES / "trace6.yaml"))
    st.event(0.0, None, "service-start", policy="timeslice", gpus=6)
    st.update_job("j3", status="running", allocation=[4, 5], done_iterations=10.0)
    st.event(2.0, "j3", "start", segment=1, gpus=[4, 5])
    st.series_sample(2.0, 2, 1, 5, 50.0)
    return st


def test_snapshot_and_json_endpoint(tmp_path):
    st = _store(tmp_path)
    snap = snapshot(st.path)
    assert snap["policy"] == "timeslice" and snap["gpus"] == 6 and snap["busy"] == 2 and snap["queued"] == 5
    j3 = next(j for j in snap["jobs"] if j["job_id"] == "j3")
    assert j3["status"] == "running" and j3["gpus"] == [4, 5]
    assert snap["events"][0]["kind"] == "start" and snap["events"][0]["detail"] == "gpus=[4, 5], segment=1"
    page = StatusPage(st.path, 0)
    try:
        host, port = page.server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(page.url + "status.json", timeout=10) as r:
            assert json.loads(r.read()) == snap
        with urllib.request.urlopen(page.url, timeout=10) as r:
            html = r.read().decode()
        assert "<title>dlsched serve</title>" in html and '"job_id": "j3"' in html
    finally:
        page.close()
        st.close()


def test_a_taken_port_is_a_warning(tmp_path, capsys):
    from dlsched.commands.serve import _status_page

    st = _store(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert _status_page(st, s.getsockname()[1]) is None
    st.close()
    assert "status page not started" in capsys.readouterr().err


HOSTILE = ["<!--<script>", "</script><script>alert(1)</script>", "<!-- x", "]]>&amp;<b>bold</b>", "\u2028\u2029",
           "' \" `${x}`", "<script>", "-->"]


def test_hostile_strings_stay_data_in_the_page(tmp_path):
    """Every job's row renders whatever its error text holds (Chromium runs the page's script)."""
    from browser import render

    st = _store(tmp_path)
    for i, text in enumerate(HOSTILE):
        st.update_job(f"j{i % 6 + 1}", reason=text)
    st.event(3.0, "j1", "fault", error="<!--<script>")
    snap = snapshot(st.path)
    page = StatusPage(st.path, 0)
    try:
        dom, console = render(page.url, tmp_path)
    finally:
        page.close()
        st.close()
    body = dom.split('<tbody id="jobs">', 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == len(snap["jobs"]) == 6
    assert "loading..." not in dom and not [c for c in console if "Uncaught" in c]


def test_the_page_answers_only_to_its_own_host(tmp_path):
    import urllib.error

    st = _store(tmp_path)
    page = StatusPage(st.path, 0)
    try:
        port = page.server.server_address[1]
        for host, ok in ((f"127.0.0.1:{port}", True), (f"localhost:{port}", True), ("evil.example:80", False),
                         (f"evil.example:{port}", False), ("", False)):
            req = urllib.request.Request(page.url + "status.json", headers={"Host": host})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    assert ok and r.status == 200, host
            except urllib.error.HTTPError as e:
                assert not ok and e.code == 421, host
    finally:
        page.close()
        st.close()


def test_script_json_escapes_what_could_end_a_script():
    from dlsched.live.statuspage import script_json

    text = script_json({"a": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": HOSTILE}
