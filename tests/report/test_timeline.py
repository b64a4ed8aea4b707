"""The Chrome-trace timeline: valid trace-event JSON, and slices that match what the run recorded."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

import pytest
from trace_format import check_trace

from dlsched.cli import main
from dlsched.report.event_sources import store_events
from dlsched.report.timeline import chrome_trace


@dataclass(frozen=True)
class Ev:  # the execution core's CoreEvent shape, built here so the exporter is tested on its own
    time: float
    job_id: str
    kind: str
    gpus: tuple = ()
    cost_s: float = 0.0
    detail: str = ""


EVENTS = [Ev(0, "a", "submit"), Ev(0, "b", "submit"), Ev(1, "a", "start", (0, 1), 2.0),
          Ev(5, "b", "start", (2,), 0.5), Ev(10, "a", "suspend"), Ev(12, "b", "pack", (0,), 1.0),
          Ev(12, "c", "submit"), Ev(12, "c", "pack", (0,), 1.0, "shared"),
          Ev(20, "a", "resume", (3, 4), 3.0), Ev(30, "a", "migrate", (5, 6), 4.0), Ev(40, "a", "finish"),
          Ev(41, "c", "drop", detail="deadline missed"), Ev(45, "b", "finish")]


def _slices(doc, pid, tid):
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and e["tid"] == tid]


def test_fixture_events_give_a_valid_trace_with_the_right_slices():
    doc = chrome_trace(EVENTS)
    assert check_trace(doc) == []
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    tid = {v: k[1] for k, v in names.items() if k[0] == 1}
    a = [(e["name"], e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6) for e in _slices(doc, 1, tid["job a"])]
    assert a == [("queued", 0, 1), ("running", 1, 10), ("overhead", 1, 3), ("suspended", 10, 20),
                 ("running", 20, 30), ("overhead", 20, 23), ("running", 30, 40), ("overhead", 30, 34)]
    runs = [e for e in _slices(doc, 1, tid["job a"]) if e["name"] == "running"]
    assert [r["args"]["gpus"] for r in runs] == [[0, 1], [3, 4], [5, 6]]
    # b moved onto GPU 0 at 12 while c shares it: the GPU gets two lanes, neither overlapping itself
    gpu0 = sorted(k for k, v in names.items() if k[0] == 2 and v.startswith("GPU 0"))
    assert [names[k] for k in gpu0] == ["GPU 0", "GPU 0 #2"]
    held = sorted((e["name"], e["ts"] / 1e6) for k in gpu0 for e in _slices(doc, *k))
    assert held == [("a", 1), ("b", 12), ("c", 12)]
    markers = [(e["name"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "i"]
    assert ("migrate", tid["job a"]) in markers and ("drop", tid["job c"]) in markers


def test_a_job_still_active_is_closed_at_the_end():
    doc = chrome_trace([Ev(0, "x", "submit"), Ev(2, "x", "start", (0,))], end=9.0)
    assert check_trace(doc) == []
    run = [e for e in doc["traceEvents"] if e["name"] == "running"][0]
    assert (run["ts"] + run["dur"]) / 1e6 == 9.0


def test_checker_rejects_bad_traces():
    assert check_trace({"traceEvents": [{"name": "x", "ph": "X", "pid": 1, "tid": 1, "ts": -1, "dur": 1}]})
    assert check_trace({"traceEvents": [{"name": "x", "ph": "Q", "pid": 1, "tid": 1, "ts": 0}]})
    back = [{"name": "x", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
            {"name": "y", "ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]
    assert check_trace({"traceEvents": back})
    overlap = [{"name": "x", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
               {"name": "y", "ph": "X", "pid": 1, "tid": 1, "ts": 3, "dur": 5}]
    assert check_trace({"traceEvents": overlap})


@pytest.mark.parametrize("policy", ["crius", "gavel"])  # crius migrates and resizes, gavel preempts
def test_simulate_timeline_matches_the_job_records(tmp_path, policy, capsys):
    out, tl = tmp_path / "run", tmp_path / "tl.json"
    assert main(["simulate", "--jobs", "60", "--days", "0.02", "--cluster", "crius-testbed", "--policy", policy,
                 "--out", str(out), "--timeline", str(tl), "--quiet"]) == 0
    doc = json.loads(tl.read_text())
    assert check_trace(doc) == []
    rows = list(csv.DictReader(open(out / "jobs.csv")))
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name" and e["pid"] == 1}
    assert sorted(names.values()) == sorted(f"job {r['job_id']}" for r in rows)
    held: dict[str, float] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X" and e["pid"] == 1 and e["name"] == "running":
            held[names[e["tid"]]] = held.get(names[e["tid"]], 0.0) + e["dur"] / 1e6
    for r in rows:  # time on GPUs in the trace = run_time the engine accounted
        assert held.get(f"job {r['job_id']}", 0.0) == pytest.approx(float(r["run_time"]), rel=1e-6, abs=1e-3)
    count = {}
    for e in doc["traceEvents"]:
        if e["pid"] == 1 and e["ph"] in ("X", "i"):
            count[e["name"]] = count.get(e["name"], 0) + 1
    moves = {k: sum(int(r[k]) for r in rows) for k in ("restarts", "migrations", "resizes")}
    assert sum(moves.values()) > 0  # the load is heavy enough to exercise preemption or re-allocation
    assert count.get("suspended", 0) == moves["restarts"]
    assert count.get("migrate", 0) == moves["migrations"] and count.get("resize", 0) == moves["resizes"]
    started = sum(1 for r in rows if r["first_start"])
    assert count["running"] >= started + sum(moves.values())  # re-plans on the same GPUs add segments too


def test_live_store_events_become_a_valid_trace(tmp_path):
    from dlsched.live.store import Store

    st = Store(tmp_path / "st")
    st.event(1.0, "j1", "submit", arrival=1.0)
    st.event(1.5, "j1", "start", segment=1, gpus=[0, 1])
    st.event(2.5, "j1", "ready", segment=1, how="start", overhead=1.0)
    st.event(4.0, "j1", "fault", reason="node lost", resume_from=3)
    st.event(5.0, "j1", "resume", segment=2, gpus=[2])
    st.event(9.0, "j1", "finish", segment=2, finish=8.5)
    st.event(9.0, None, "workers-stopped")
    events = store_events(st.events())
    st.close()
    assert [e.kind for e in events] == ["submit", "start", "ready", "suspend", "resume", "finish"]
    doc = chrome_trace(events)
    assert check_trace(doc) == []
    got = [(e["name"], e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6) for e in doc["traceEvents"]
           if e["ph"] == "X" and e["pid"] == 1]
    assert got == [("queued", 1.0, 1.5), ("running", 1.5, 4.0), ("overhead", 1.5, 2.5), ("suspended", 4.0, 5.0),
                   ("running", 5.0, 8.5)]


def test_adjacent_slices_weeks_into_a_run_do_not_overlap():
    t = 1_209_600.123456789  # two weeks in: beyond float's sub-microsecond digits in microseconds
    doc = chrome_trace([Ev(t, "x", "submit"), Ev(t + 0.3333333, "x", "start", (0,), 0.1111111),
                        Ev(t + 7.7777777, "x", "suspend"), Ev(t + 9.9999999, "x", "resume", (1,)),
                        Ev(t + 12.5, "x", "finish")])
    assert check_trace(doc) == []
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 1 and e["name"] != "overhead"]
    assert all(a["ts"] + a["dur"] == b["ts"] for a, b in zip(xs, xs[1:]))
