"""Fidelity checks of the perf model against the papers (used by tests and experiments/perf_validation.py).

Each function returns plain data: ours beside the paper's, so a script can
print the gap and a test can bound it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from dlsched.cluster.topology import Cluster
from dlsched.perf.placement.model import TIERS, PlacementPerfModel, tier_placements
from dlsched.perf.papers.reference import DALLY_TABLE1, GANDIVA_FIG1, paper_model


def kendall_tau(a: list[float], b: list[float]) -> float:
    """Rank agreement in [-1, 1] (ties count as disagreement: they are rare here)."""
    pairs = list(combinations(range(len(a)), 2))
    s = sum(1 if (a[i] - a[j]) * (b[i] - b[j]) > 0 else -1 for i, j in pairs)
    return s / len(pairs)


@dataclass(frozen=True)
class DallyRow:
    model: str
    zoo_name: str
    ours_pct: tuple[float, ...]  # exposed communication as % of compute, per tier
    paper_pct: tuple[float, ...]
    slowdown: tuple[float, ...]  # iteration time relative to the machine tier


def dally_table1(cluster: str | Cluster = "dally-2racks", n_gpus: int = 8, tier_profile=None,
                 **perf_opts) -> list[DallyRow]:
    """Dally Table I: communication % of compute for 8 GPUs at machine / rack / network tier.

    Each model runs at its zoo per-GPU batch; communication is what the
    bucketed, overlapped all-reduce leaves exposed.  With ``tier_profile``
    (e.g. ``"dally-table1"``) the models it lists are priced through
    ``TierProfiledPerfModel`` on the same placements instead: the path a
    Dally experiment takes when it uses ArtISt-sim's calibrated figures.
    """
    c = cluster if isinstance(cluster, Cluster) else Cluster.load(cluster)
    pm = PlacementPerfModel(c, **perf_opts)
    profiled = None
    if tier_profile is not None:
        from dlsched.perf.comm.tier_profile import TierProfiledPerfModel
        from dlsched.workload.job import JobSpec

        profiled = TierProfiledPerfModel(pm, tier_profile)
    places = tier_placements(c, n_gpus)
    rows = []
    for name, paper in DALLY_TABLE1.items():
        m = paper_model(name)
        key = f"_fidelity_{m.name}"
        pm._models[(key, None)] = m  # price the model as given (zoo or stand-in)
        pct, times = [], []
        for tier in TIERS:
            if profiled is None:
                cost = pm.price_shape(key, None, m.default_batch * n_gpus, pm._index.shape(places[tier]))
            else:  # through the public contract, by the zoo name a trace would give
                job = JobSpec(f"table1-{m.name}", 0.0, m.name, n_gpus, batch_size=m.default_batch * n_gpus,
                              total_iterations=1)
                cost = profiled.price(job, places[tier])
            pct.append(100.0 * cost.comm / cost.compute)
            times.append(cost.total)
        rows.append(DallyRow(name, m.name, tuple(pct), tuple(float(p) for p in paper),
                             tuple(t / times[0] for t in times)))
    return rows


def dally_rank_agreement(rows: list[DallyRow]) -> dict[str, float]:
    """Kendall tau between our and the paper's ordering of the models, per tier."""
    return {tier: kendall_tau([r.ours_pct[k] for r in rows], [r.paper_pct[k] for r in rows])
            for k, tier in enumerate(TIERS)}


def gandiva_fig1(per_gpu_batch: int = 32, cluster: str = "gandiva-100") -> dict[str, tuple[float, float]]:
    """Gandiva Fig. 1: throughput across sockets over that under one PCIe switch, two P100s.

    Returns {model: (ours, paper)}.
    """
    c = Cluster.load(cluster)
    pm = PlacementPerfModel(c)
    node = next(nd for nd in c.nodes if nd.num_gpus == 4 and nd.gpu.name == "P100")
    g = list(node.gpus)
    same = [g[0], g[1]]  # one PCIe switch
    cross = [g[0], g[2]]  # other socket
    assert c.pair_tier(*same).name == "PCIE_SWITCH" and c.pair_tier(*cross).name == "CROSS_SOCKET"
    out = {}
    for name, paper in GANDIVA_FIG1.items():
        m = paper_model(name)
        key = f"_fidelity_{m.name}"
        pm._models[(key, None)] = m
        t_same = pm.price_shape(key, None, 2 * per_gpu_batch, pm._index.shape(same)).total
        t_cross = pm.price_shape(key, None, 2 * per_gpu_batch, pm._index.shape(cross)).total
        out[name] = (t_same / t_cross, paper)
    return out


def crius_fig4(models=("gpt-1.3b", "bert-1.3b", "wide_resnet-1b", "moe-1.3b"), counts=(1, 2, 4, 8, 16),
               global_batch: int = 32, cluster: str = "crius-sim") -> dict[str, list[float]]:
    """Crius Fig. 4(a) shape: data-parallel throughput vs GPU count on A100 NVLink nodes.

    Throughput (samples/s) at a fixed global batch, normalised to one GPU.
    """
    c = Cluster.load(cluster)
    pm = PlacementPerfModel(c)
    a100 = [nd for nd in c.nodes if nd.gpu.name.startswith("A100")]
    gpus = [g for nd in a100 for g in nd.gpus]
    out = {}
    for name in models:
        thr = []
        for n in counts:
            cost = pm.price_shape(name, None, global_batch, pm._index.shape(gpus[:n]))
            thr.append(global_batch / cost.total)
        out[name] = [t / thr[0] for t in thr]
    return out
