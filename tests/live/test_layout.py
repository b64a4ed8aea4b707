"""Reading Ray nodes into the cluster model, and the emulation syntax."""

from __future__ import annotations

import pytest

from dlsched.errors import InputError
from dlsched.live.raycluster import ClusterLayout, layout_from_ray, parse_emulation


def node(nid, gpus, res=None, labels=None, alive=True):
    return {"NodeID": nid, "Alive": alive, "NodeManagerAddress": "10.0.0.1",
            "Resources": {"CPU": 4.0, "GPU": float(gpus), **(res or {})}, "Labels": labels or {}}


def test_layout_groups_nodes_by_rack_and_type():
    nodes = [node("b", 2, {"gpu_type:A40": 2, "rack:0": 1}), node("a", 2, {"gpu_type:A40": 2, "rack:0": 1}),
             node("c", 4, {"accelerator_type:A10": 1}, labels={"rack": "1"}),
             node("head", 0), node("dead", 2, {"gpu_type:A40": 2}, alive=False)]
    lay = layout_from_ray(nodes)
    c = lay.cluster()
    assert c.num_gpus == 8 and c.num_nodes == 3 and c.num_racks == 2
    assert [n.node_id for n in lay.nodes] == ["a", "b", "c"]
    assert lay.slots[:4] == (("a", 0), ("a", 1), ("b", 0), ("b", 1))
    assert [c.nodes[int(c.gpu_node[g])].gpu.name for g in range(8)] == ["A40"] * 4 + ["A10"] * 4
    assert ClusterLayout.from_json(lay.to_json()) == lay


def test_layout_errors():
    with pytest.raises(InputError, match="no alive node"):
        layout_from_ray([node("head", 0)])
    with pytest.raises(InputError, match="unknown GPU type"):
        layout_from_ray([node("x", 1, {"gpu_type:Z9000": 1})])


def test_parse_emulation():
    nodes = parse_emulation("2x2:A40@0, 1x4:A10@1")
    assert [(n.gpus, n.gpu_type, n.rack) for n in nodes] == [(2, "A40", 0), (2, "A40", 0), (4, "A10", 1)]
    with pytest.raises(InputError, match="NODESxGPUS"):
        parse_emulation("three nodes")
