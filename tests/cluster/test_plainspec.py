"""The shipped specs read without pydantic (``Cluster.load``'s fast path) equal the validated ones."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from dlsched.cluster import Cluster
from dlsched.cluster.plainspec import PlainClusterSpec, PlainIntra, PlainNetwork, PlainNodeGroup
from dlsched.cluster.shipped import (SIDECAR, _sidecar, load_shipped, read_shipped_yaml, shipped_name,
                                     shipped_specs, write_sidecar)
from dlsched.cluster.spec import ClusterSpec, IntraSpec, NetworkSpec, NodeGroupSpec, load_spec

PAIRS = [(PlainIntra, IntraSpec), (PlainNodeGroup, NodeGroupSpec), (PlainNetwork, NetworkSpec),
         (PlainClusterSpec, ClusterSpec)]


def _plain(obj):
    """A dataclass tree as dicts and lists, as pydantic's model_dump gives it."""
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    return obj


@pytest.mark.parametrize("plain,schema", PAIRS, ids=lambda c: c.__name__)
def test_plain_classes_mirror_the_schema(plain, schema):
    """Same fields with the same defaults: a field added to one side alone fails here."""
    fields = {f.name: f for f in dataclasses.fields(plain)}
    assert set(fields) == set(schema.model_fields)
    for name, info in schema.model_fields.items():
        f = fields[name]
        if info.is_required():
            assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING, name
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        assert _plain(default) == (info.default.model_dump() if hasattr(info.default, "model_dump")
                                   else info.default), name


@pytest.mark.parametrize("name", shipped_specs())
def test_every_shipped_spec_reads_as_validated(name):
    plain, checked = load_shipped(name), load_spec(name)
    assert _plain(plain) == checked.model_dump()
    # every derived figure the cluster is built from agrees too
    for g, h in zip(plain.node_groups, checked.node_groups):
        for key in ("bandwidth_GBps", "latency_us", "cross_socket_GBps", "cross_socket_latency_us",
                    "host_bridge_GBps"):
            assert g.intra.value(key) == h.intra.value(key)
    a, b = Cluster(plain), Cluster(checked)
    assert (a.num_gpus, a.num_racks, a.type_index) == (b.num_gpus, b.num_racks, b.type_index)
    assert (a.gpu_switch == b.gpu_switch).all() and (a.node_rack == b.node_rack).all()


def test_a_file_path_is_never_taken_for_a_shipped_name(tmp_path, monkeypatch):
    assert shipped_name("crius-sim") == "crius-sim"
    assert shipped_name("crius-sim.yaml") is None and shipped_name("no-such-spec") is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crius-sim").write_text("name: mine\nnode_groups: [{name: g, gpu: V100, nodes: 1, "
                                        "gpus_per_node: 2}]\n")
    assert shipped_name("crius-sim") is None  # an existing file wins, as in load_spec
    assert Cluster.load("crius-sim").name == "mine"


def test_loading_a_shipped_cluster_imports_no_pydantic_and_no_yaml():
    code = ("import sys; from dlsched.cluster import Cluster; c = Cluster.load('crius-sim'); "
            "print(c.num_gpus, 'pydantic' in sys.modules, 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["1280", "False", "False"]


def test_the_json_sidecar_holds_exactly_the_shipped_yaml(tmp_path):
    """The plain-data copy Cluster.load reads equals the YAML files: a spec edited, added or removed
    without running write_sidecar fails here."""
    assert _sidecar() == read_shipped_yaml()
    assert sorted(_sidecar()) == shipped_specs()
    # and the writer reproduces the shipped file byte for byte
    from importlib import resources

    shipped = (resources.files("dlsched.cluster") / "specs" / SIDECAR).read_text()
    assert write_sidecar(tmp_path).read_text() == shipped
