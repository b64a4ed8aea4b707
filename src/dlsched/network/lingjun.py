"""The CRUX production topology, read from the Alibaba Lingjun 2023 ``topo.csv``.

One row per host: ``ip,DSW,PSW,ASW`` (core, aggregation and ToR switch).  The
mapping is not a tree (most ToRs appear with several aggregation switches
across their hosts), so each row is read as that host's own path up the
fabric: the graph gets the cables host-ASW, ASW-PSW and PSW-DSW of every row,
and paths between hosts are the shortest paths of that graph.  The file gives
no bandwidths: NICs default to the CRUX testbed's 4 x 200 Gb/s (Fig. 18) and
the fabric to the 1:1 oversubscription of the production cluster (section 2.2), in
switch ports as fast as a NIC port (``topologies.ports_for``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from dlsched.errors import InputError
from dlsched.inputfile import read_head
from dlsched.network.graph import LinkGraph
from dlsched.network.topologies import GBIT, GPU_LINK_Bps, HOST_LINK_LATENCY_S, ports_for

TOPO = Path("traces") / "alibaba-lingjun-2023" / "topo.csv"  # under the data folder (dlsched.shared_data)
COLUMNS = ("ip", "DSW", "PSW", "ASW")


def default_path() -> Path:
    from dlsched.shared_data import shared_dir

    return shared_dir() / TOPO


def read_lingjun(path: str | Path | None = None, nic_gbps: float = 200.0, nics_per_host: int = 4,
                 gpus_per_host: int = 8, oversubscription: float = 1.0, latency_us: float = 2.0) -> LinkGraph:
    path = default_path() if path is None else path
    source = str(path)
    read_head(Path(path), source, "topology CSV")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(c.strip() for c in rows[0]) != COLUMNS:
        raise InputError(f"header must be {','.join(COLUMNS)}", file=source, line=1)
    seen: set[str] = set()
    paths: list[tuple[str, str, str, str]] = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(COLUMNS):
            raise InputError(f"expected {len(COLUMNS)} fields, found {len(row)}", file=source, line=line)
        ip, dsw, psw, asw = (c.strip() for c in row)
        for name, value in zip(COLUMNS, (ip, dsw, psw, asw)):
            if not value:
                raise InputError("empty", file=source, line=line, field=name)
        if ip in seen:
            raise InputError(f"host {ip[:12]} listed twice", file=source, line=line, field="ip")
        seen.add(ip)
        paths.append((ip, dsw, psw, asw))
    if not paths:
        raise InputError("no hosts", file=source)
    g = LinkGraph("lingjun-2023")
    lat = latency_us * 1e-6
    host_Bps = nics_per_host * nic_gbps * GBIT
    up_asw: dict[tuple[str, str], float] = {}  # (ASW, PSW) -> host bandwidth that climbs it
    up_psw: dict[tuple[str, str], float] = {}
    for ip, dsw, psw, asw in paths:
        a, p, d = f"ASW:{asw}", f"PSW:{psw}", f"DSW:{dsw}"
        g.layers.update({a: "tor", p: "agg", d: "core"})
        g.add_host(ip, [nic_gbps * GBIT] * nics_per_host, gpus_per_host, GPU_LINK_Bps, HOST_LINK_LATENCY_S,
                   [[(a, lat)]] * nics_per_host)
        up_asw[(a, p)] = up_asw.get((a, p), 0.0) + host_Bps
        up_psw[(p, d)] = up_psw.get((p, d), 0.0) + host_Bps
    for (u, v), bw in sorted({**up_asw, **up_psw}.items()):
        g.cable(u, v, bw / oversubscription, lat, ports_for(bw / oversubscription, nic_gbps * GBIT))
    return g
