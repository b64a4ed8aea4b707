"""links.csv's two forms: the per-link summary (default) against the full utilisation table it sums."""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest

from dlsched.cli import main
from dlsched.cluster.topology import Cluster
from dlsched.network import FlowContention
from dlsched.policies.registry import make_policy
from dlsched.sim.engine import Simulator
from dlsched.workload.job import JobSpec


def _run(links: str, gap: float = 30.0, max_time: float | None = None):
    # 3-GPU jobs on crius-testbed's 2-GPU hosts, arriving while others run: shared NICs, changing speeds
    from dlsched.sim.engine import SimConfig

    cluster = Cluster.load("crius-testbed")
    jobs = [JobSpec(f"j{i}", i * gap, "vgg16", 3, batch_size=96, total_iterations=2000 + 300 * i,
                    gpu_type="A40") for i in range(10)]
    flow = FlowContention.for_cluster(cluster, links=links)
    sim = Simulator(cluster, make_policy("fcfs"), jobs, contention=flow, config=SimConfig(max_time=max_time))
    return sim, sim.run()


def _integrate(rows, end):
    """Per link: the time integral of the full table's utilisation up to ``end``, and how long it was > 0."""
    by = defaultdict(list)
    for t, name, u in rows:
        by[name].append((t, u))
    out = {}
    for name, seq in by.items():
        area = busy = 0.0
        for (t, u), (t2, _) in zip(seq, seq[1:] + [(end, 0.0)]):
            area += u * (t2 - t)
            busy += (t2 - t) if u > 0 else 0.0
        out[name] = (area, busy)
    return out


@pytest.mark.parametrize("max_time", [None, 400.0])
def test_summary_is_the_full_tables_integral_and_decides_nothing(max_time):
    full_sim, full = _run("full", max_time=max_time)
    sim, summ = _run("summary", max_time=max_time)
    assert [r.row() for r in summ.records] == [r.row() for r in full.records]
    assert summ.links == [] and full.links
    end = sim.now
    assert end == full_sim.now
    want = _integrate(full.links, end)
    rows = sim.contention.link_summary(end)
    assert {r[0] for r in rows} == {n for n, (area, _) in want.items() if area > 0}
    shared = 0
    for name, gbps, busy_s, nbytes, util, busy_util in rows:
        area, busy = want[name]
        cap = gbps / 8e-9
        assert util == pytest.approx(area / end, rel=1e-9)
        assert nbytes == pytest.approx(area * cap, rel=1e-9)
        assert busy_s == pytest.approx(busy, rel=1e-9, abs=1e-9)
        assert busy_util == pytest.approx(area / busy, rel=1e-9)
        shared += busy_util > util
    assert shared, "some link idled part of the run"


def test_utilisation_now_is_the_same_in_either_form():
    a = FlowContention.for_cluster(Cluster.load("crius-testbed"), links="full")
    b = FlowContention.for_cluster(Cluster.load("crius-testbed"), links="summary")
    for fc in (a, b):
        fc.add_placed("x", [(0, 0), (0, 1), (1, 0)], 1e9, 1.0, 0.1)
        fc.add_placed("y", [(1, 1), (2, 0), (2, 1)], 1e9, 1.0, 0.1)
    assert a.utilisation() == b.utilisation()
    with pytest.raises(ValueError, match="links="):
        a.link_summary(1.0)


def test_cli_links_flag(tmp_path):
    args = ["simulate", "--cluster", "crux-testbed", "--jobs", "40", "--days", "0.2", "--network", "flow",
            "--placement", "first-free", "--quiet"]
    heads = {}
    for form in ("summary", "full", "none"):
        out = tmp_path / form
        assert main([*args, "--out", str(out), *([] if form == "summary" else ["--links", form])]) == 0
        path = out / "links.csv"
        heads[form] = next(csv.reader(open(path))) if path.exists() else None
    assert heads["summary"] == ["link", "capacity_gbps", "busy_s", "bytes", "utilisation", "busy_utilisation"]
    assert heads["full"] == ["time", "link", "utilisation"]
    assert heads["none"] is None
    for name in ("jobs.csv", "summary.json", "series.csv"):
        assert (tmp_path / "summary" / name).read_bytes() == (tmp_path / "full" / name).read_bytes()
        assert (tmp_path / "none" / name).read_bytes() == (tmp_path / "full" / name).read_bytes()
    from dlsched.report.figures import read_links

    rows = read_links(tmp_path / "summary" / "links.csv")
    assert rows and all(float(r["utilization"]) == float(r["utilisation"]) for r in rows)
    assert read_links(tmp_path / "full" / "links.csv") is None  # the table over time: not this figure's input
