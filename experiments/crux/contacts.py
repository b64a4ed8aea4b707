"""Where jobs meet on a CRUX fabric: the contact census behind docs/crux.md's "What decides the gain".

    PYTHONPATH=src python experiments/crux/contacts.py --topology crux-double-sided --jobs 5000 --days 14
        [--comm ecmp] [--placement first-free] [--out /tmp/crux-contacts]

Runs one trace simulation (the trace grid's workload and flags) and, each time the flow model places
a job, notes for that job and the jobs it meets: whether its flows leave their ToR, whether they share
a network link with another job (and whether that link is contended: its flows at their solo rates
overfill it), on which kind of link (NIC, ToR uplink, aggregation uplink, ...), and whether two of its
own flows were hashed onto one switch port (a self-collision, which the flow model does not charge:
"solo exactness", docs/network.md).  Flags are sticky over a job's life; under a path-choosing
policy a job is first placed on its ECMP paths and re-placed on the policy's at once, so that brief
placement counts too: read the census of ``--comm ecmp`` runs.  Prints one row per job size
and writes ``contacts.json`` under ``--out``.  The simulation itself is the plain run's (the census only
reads the flow model's state), so its results equal ``trace_grid.py``'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from dlsched.experiments.crux import TOPOLOGIES, write_trace
from dlsched.network.contention import FlowContention


def link_kind(g, l: int) -> str:
    """'nic-tor', 'tor-agg', ... from the layers of a link's ends (NICs are 'nic', GPUs 'gpu')."""
    return "-".join(g.layers.get(n, "gpu") for n in (g.link_src[l], g.link_dst[l]))


def _flags(seen: dict, job_id: str) -> dict:
    return seen.setdefault(job_id, {"hosts": 0, "cross_tor": False, "meets": False, "contended": False,
                                    "self_collision": False, "where": set()})


def census(fc: FlowContention, job_id: str, seen: dict) -> None:
    """Update the sticky flags of ``job_id`` (just placed) and of the jobs it meets."""
    g = fc.graph
    job = fc._jobs[job_id]
    me = _flags(seen, job_id)
    me["hosts"] = len({f.src_nic.split("/")[0] for f in job.traffic.flows} |
                      {f.dst_nic.split("/")[0] for f in job.traffic.flows})
    for l, n in job.lc.items():
        if not fc._network_link[l]:
            continue
        kind = link_kind(g, l)
        if "nic" not in kind:
            me["cross_tor"] = True
            if n > 1 and len(g.ports(g.link_src[l], g.link_dst[l])) > 1:
                me["self_collision"] = True
        others = fc._link_jobs[l] - {job_id}
        if not others:
            continue
        hot = fc._contended(l)
        for j in (job_id, *others):
            s = _flags(seen, j)
            s["meets"] = True
            if hot:
                s["contended"] = True
                s["where"].add(kind)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", default="crux-double-sided")
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--days", type=float, default=1.0)
    ap.add_argument("--comm", default="ecmp")
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--placement", default="first-free", choices=["packed", "first-free"])
    ap.add_argument("--out", default="/tmp/crux-contacts")
    a = ap.parse_args()
    from dlsched.cli import main as cli

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    gpus, largest = TOPOLOGIES[a.topology]
    trace = write_trace(out / "trace.csv", a.jobs, a.days, gpus_total=gpus, max_gpus=largest)
    seen: dict[str, dict] = {}
    place = FlowContention._place

    def recording(self, job_id, make_traffic, total, comm):
        got = place(self, job_id, make_traffic, total, comm)
        census(self, job_id, seen)
        return got

    FlowContention._place = recording
    try:
        rc = cli(["simulate", "--cluster", a.topology, "--trace", str(trace), "--policy", a.policy, "--comm", a.comm,
                  "--out", str(out / f"{a.policy}-{a.comm}"), "--quiet", "--fit-requests", "--placement", a.placement])
    finally:
        FlowContention._place = place
    if rc:
        return rc
    sizes = {}
    with open(trace) as f:
        next(f)
        for line in f:
            row = line.rstrip("\n").split(",")
            sizes[row[0]] = int(row[3])
    rows = defaultdict(Counter)
    where = Counter()
    for j, s in seen.items():
        if s["hosts"] < 2:
            continue
        size = sizes.get(j, 0)
        for key in (size, "all"):
            r = rows[key]
            r["jobs"] += 1
            for flag in ("cross_tor", "meets", "contended", "self_collision"):
                r[flag] += s[flag]
        where.update(s["where"])
    print(f"{a.topology}, {a.jobs} jobs, {a.comm}, {a.placement}: multi-host jobs (2+ hosts)")
    print(f"{'GPUs':>6} {'jobs':>6} {'leave ToR':>10} {'meet others':>12} {'contended':>10} {'self-collide':>13}")
    for key in sorted((k for k in rows if k != "all"), key=int) + ["all"]:
        r = rows[key]
        pct = lambda f: f"{r[f]} ({100 * r[f] / r['jobs']:.0f}%)"  # noqa: E731
        print(f"{key:>6} {r['jobs']:>6} {pct('cross_tor'):>10} {pct('meets'):>12} {pct('contended'):>10} "
              f"{pct('self_collision'):>13}")
    print("contended meetings by link kind (jobs): " + ", ".join(f"{k} {n}" for k, n in sorted(where.items())))
    (out / "contacts.json").write_text(json.dumps(
        {"rows": {str(k): dict(v) for k, v in rows.items()}, "where": dict(where),
         "args": vars(a)}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
