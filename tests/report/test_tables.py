from dlsched.report.tables import summary_rows


def _summary(makespan, avg_jct):
    return {"finished": 6, "avg_jct": avg_jct, "median_jct": avg_jct, "p95_jct": avg_jct, "avg_queue": 0.0,
            "makespan": makespan, "utilization": 0.5, "avg_throughput": 10.0, "restarts_per_job": 0.0}


def test_short_runs_are_shown_in_seconds():
    header, rows = summary_rows({"fcfs": _summary(20.0, 8.95)})
    assert "avg JCT (s)" in header
    assert rows[0][header.index("avg JCT (s)")] == "8.95"


def test_cluster_runs_are_shown_in_hours():
    header, rows = summary_rows({"a": _summary(30.0, 10.0), "b": _summary(7200.0, 5400.0)})
    assert "avg JCT (h)" in header
    assert rows[1][header.index("avg JCT (h)")] == "1.50"
    assert rows[0][header.index("finished")] == "6"
