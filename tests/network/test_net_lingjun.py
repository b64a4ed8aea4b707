"""The CRUX production topology from the Lingjun 2023 topo.csv."""

from __future__ import annotations

import pytest

from dlsched.errors import InputError
from dlsched.network import PathTable, read_lingjun


@pytest.mark.shared
def test_lingjun_loads_and_is_connected(shared_dir):
    g = read_lingjun(shared_dir / "traces/alibaba-lingjun-2023/topo.csv")
    assert len(g.hosts) == 847
    assert len(g.switches("tor")) == 48
    assert len(g.switches("agg")) == 3
    assert len(g.switches("core")) == 1
    pt = PathTable(g)
    # a host's NICs hang off its one ToR, so hosts reach each other iff their ToRs do: check every
    # ToR pair, and the host-level paths of one host per ToR
    first = {}
    for h in g.hosts:
        first.setdefault(next(iter(g.graph.successors(h.nics[0]))), h)
    reps = list(first.values())
    assert len(reps) == 48
    for a in reps:
        for b in reps:
            if a is not b:
                assert pt.paths(a.nics[0], b.nics[0]), (a.name, b.name)
    tor_of = {h.name: next(iter(g.graph.successors(h.nics[0]))) for h in g.hosts}
    assert set(tor_of.values()) == set(first)


def test_lingjun_errors_name_line_and_field(tmp_path):
    bad = tmp_path / "topo.csv"
    bad.write_text("ip,DSW,PSW,ASW\nh1,G6,P8,S1\nh2,G6,,S2\n")
    with pytest.raises(InputError) as e:
        read_lingjun(bad)
    assert "line 3" in str(e.value) and "PSW" in str(e.value)
