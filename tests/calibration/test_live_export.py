"""A live run's measured iteration times come out in the profile format ``perf calibrate`` reads."""

from __future__ import annotations

import pytest

from dlsched.live.jobfile import LiveJob
from dlsched.live.profile_export import iteration_rows
from dlsched.live.raycluster import layout_from_ray
from dlsched.live.store import Store
from dlsched.workload.job import JobSpec
from dlsched.workload.readers.profiles import read_profile, write_iterations


def _node(nid, gpus, gpu="A40"):
    return {"NodeID": nid, "Alive": True, "NodeManagerAddress": "10.0.0.1",
            "Resources": {"CPU": 4.0, "GPU": float(gpus), f"gpu_type:{gpu}": gpus, "rack:0": 1}, "Labels": {}}


def test_segments_become_iteration_rows(tmp_path):
    lay = layout_from_ray([_node("a", 2), _node("b", 2), _node("c", 2, "A10")])
    c = lay.cluster()
    a40 = [g for g in range(c.num_gpus) if c.gpu_types[int(c.gpu_type_idx[g])].name == "A40"]
    a, b = a40[:2], a40[2:]  # the two A40 nodes' GPUs
    st = Store(tmp_path / "st")
    st.set_meta("layout", lay.to_json())
    st.submit([LiveJob(JobSpec(j, 0.0, "resnet50", n, batch_size=64, total_iterations=100), "x.py", [], 0, 0.0)
               for j, n in (("j1", 2), ("j2", 4), ("j3", 3))])
    for j in ("j1", "j2", "j3"):
        st.update_job(j, arrival=0.0)
    seg = dict(kind="start", placed_at=0.0, state="finished")
    st.put_segment("j1", 1, **seg, gpus=a, iter_time=0.5, timed_iterations=10, mode="exclusive")
    st.put_segment("j1", 2, **seg, gpus=b, iter_time=0.8, timed_iterations=30, mode="exclusive")
    st.put_segment("j1", 3, **seg, gpus=a, iter_time=2.0, timed_iterations=50, mode="packed")  # not a solo time
    st.put_segment("j2", 1, **seg, gpus=a + b, iter_time=0.3, timed_iterations=20, mode="exclusive")
    # 2 GPUs on one node and 1 on another: no nodes x gpus_per_node shape
    st.put_segment("j3", 1, **seg, gpus=a + b[:1], iter_time=0.4, timed_iterations=20, mode="exclusive")
    rows, shapeless = iteration_rows(st)
    st.close()
    assert shapeless == 1
    got = {(r.model, r.gpu_type, r.nodes, r.gpus_per_node): r.iter_time_s for r in rows}
    assert got == {("resnet50", "A40", 1, 2): pytest.approx((0.5 * 10 + 0.8 * 30) / 40),
                   ("resnet50", "A40", 2, 2): pytest.approx(0.3)}
    out = tmp_path / "measured.csv"
    write_iterations(out, rows)
    table = read_profile(out)
    assert table.kind == "iterations" and len(table) == 2 and table.rows[0].param == ""
