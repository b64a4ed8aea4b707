"""Bad cluster specs: every problem is an InputError naming file, line and field."""

from __future__ import annotations

import gzip

import pytest

from dlsched.cluster.spec import load_spec, parse_spec
from dlsched.errors import InputError

GOOD = """name: t
node_groups:
  - name: g1
    gpu: A40
    nodes: 2
    gpus_per_node: 4
    nic_gbps: 100
"""


def test_good_spec_and_gpu_alias():
    assert parse_spec(GOOD).total_gpus == 8
    assert parse_spec(GOOD.replace("A40", "a100")).node_groups[0].gpu == "A100-40G"


@pytest.mark.parametrize("text,line,field", [
    (GOOD.replace("nodes: 2", "nodes: true"), 5, "node_groups.0.nodes"),  # was read as 1 node
    (GOOD.replace("gpus_per_node: 4", "gpus_per_node: '4'"), 6, "node_groups.0.gpus_per_node"),
    (GOOD.replace("nic_gbps: 100", "nic_gbps: .inf"), 7, "node_groups.0.nic_gbps"),  # was accepted
    (GOOD + "network: {rack_gbps: .inf}\n", 8, "network.rack_gbps"),
    (GOOD.replace("    nodes: 2\n", "    nodes: 2\n    nodes: 3\n"), 6, "nodes"),  # last one won silently
    (GOOD + "name: u\n", 8, "name"),
    (GOOD.replace("nodes: 2", "nodes: -2"), 5, "node_groups.0.nodes"),
    (GOOD.replace("gpu: A40", "gpu: Z900"), 4, "node_groups.0.gpu"),
    (GOOD.replace("    gpu: A40\n", ""), 3, "node_groups.0.gpu"),
])
def test_bad_values(text, line, field):
    with pytest.raises(InputError) as err:
        parse_spec(text, "c.yaml")
    assert (err.value.file, err.value.line, err.value.field) == ("c.yaml", line, field)


def test_duplicate_key_names_first_line():
    with pytest.raises(InputError, match="duplicate key 'name' \\(first on line 1\\)"):
        parse_spec(GOOD + "name: u\n")


def test_huge_cluster_is_refused_before_it_is_built():
    with pytest.raises(InputError, match="at most"):
        parse_spec(GOOD.replace("nodes: 2", "nodes: 100000000000"))


@pytest.mark.parametrize("kind", ["directory", "gzip", "latin1", "missing"])
def test_unreadable_files(tmp_path, kind):
    p = tmp_path / "c.yaml"
    if kind == "directory":
        p.mkdir()
    elif kind == "gzip":
        p.write_bytes(gzip.compress(GOOD.encode()))
    elif kind == "latin1":
        p.write_bytes(GOOD.encode() + b"description: caf\xe9\n")
    with pytest.raises(InputError) as err:
        load_spec(p)
    assert err.value.file == str(p)
    assert {"directory": "directory", "gzip": "gzip", "latin1": "UTF-8", "missing": "no such file"}[kind] in str(err.value)
    if kind == "latin1":
        assert err.value.line == 8


def test_bom_and_crlf(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode())
    assert load_spec(p).total_gpus == 8
