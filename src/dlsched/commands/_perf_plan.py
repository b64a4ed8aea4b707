"""``dlsched perf`` for the large models: the best plan on a placement, and the simulator's price.

The plan is searched on the links of the placement asked for (``--nodes`` x
``--gpus-per-node`` GPUs of ``--gpu-type``); its split into compute and
communication is the plan's time with the links made free subtracted from
its time (what the links cost this plan, after overlap).  The simulator's own
price for an allocation of that shape follows (``AdaptivePerfModel``: the
consolidated optimum, slowed per halving of GPUs per node when spread).
"""

from __future__ import annotations

import math
from dataclasses import replace

from dlsched.cluster.topology import LinkCost
from dlsched.errors import InputError


def _free(links):
    fast = LinkCost(1e30, 0.0)
    return replace(links, intra=fast, rack=fast, network=fast)


def print_best_plan(args, cluster, model) -> int:
    from dlsched.perf.parallel.cost import DEFAULT_PARAMS, plan_time, scaled_links
    from dlsched.perf.parallel.hardware import Hardware, TierLinks
    from dlsched.perf.parallel.plan import Plan, StagePlan
    from dlsched.perf.parallel.profile import profile
    from dlsched.perf.parallel.search import optimal_plan

    calibrated = args.perf == "calibrated"
    if calibrated:
        from dlsched.perf.calibration.params import resolve

        cal = resolve(args.perf_params)
        params = cal.cost_params()
    else:
        params = DEFAULT_PARAMS
    gpu = args.gpu_type or cluster.gpu_types[0].name
    gpu = cluster.gpu_types[cluster.type_id(gpu)].name
    base = TierLinks.from_cluster(cluster, gpu)
    n = args.gpus
    gpn = args.gpus_per_node or min(base.gpus_per_node, n)
    nodes = args.nodes or -(-n // gpn)
    if nodes * gpn != n:
        raise InputError(f"{nodes} nodes x {gpn} GPUs per node is {nodes * gpn} GPUs, not {n}", field="gpus")
    if gpn > base.gpus_per_node:
        raise InputError(f"{cluster.name}'s {gpu} nodes have {base.gpus_per_node} GPUs, not {gpn}",
                         field="--gpus-per-node")
    batch = args.batch or model.default_batch * n
    links = scaled_links(TierLinks(base.intra, base.rack, base.network, gpn, base.nodes_per_rack), gpu, params,
                         model.family)
    hw = Hardware.of(gpu, links)
    where = (f"{model.name} on {nodes} x {gpn} {gpu} of {cluster.name}, global batch {batch}, "
             f"{'calibrated' if calibrated else 'analytic'} parameters")
    found = optimal_plan(model, batch, hw, n, params)
    if found is None:
        print(f"{where}: out of memory with every plan")
        return 0
    t, plan = found
    t_free = plan_time(model, batch, plan, Hardware.of(gpu, _free(links)), params)
    dp = plan_time(model, batch, Plan((StagePlan(0, profile(model).n_layers, n, 1),)), hw, params)
    print(where)
    print(f"best plan: {plan.describe()}")
    print(f"iteration {t:.3f} s = compute {t_free:.3f} s + communication {t - t_free:.3f} s "
          f"({100 * (t - t_free) / t:.1f}%)")
    print("data parallelism alone: " + ("out of memory" if dp is None else f"{dp:.3f} s ({dp / t:.2f}x the best plan)"))
    sim = _simulator_price(cluster, model, batch, gpu, nodes, gpn, args, calibrated)
    if sim is not None:
        print(f"simulator's price for {n} {gpu} on {nodes} nodes: "
              + ("out of memory" if not math.isfinite(sim) else f"{sim:.3f} s per iteration"))
    return 0


def _simulator_price(cluster, model, batch, gpu, nodes, gpn, args, calibrated) -> float | None:
    """What ``--perf adaptive|calibrated`` charges an allocation of this shape (None: the cluster has none)."""
    from dlsched.perf.default import default_perf_model
    from dlsched.workload.job import JobSpec

    t = cluster.type_id(gpu)
    picked = []
    for node in cluster.nodes:
        if cluster.node_type[node.id] == t and len(node.gpus) >= gpn:
            picked.extend(list(node.gpus)[:gpn])
            if len(picked) == nodes * gpn:
                break
    if len(picked) < nodes * gpn:
        return None
    perf = default_perf_model(cluster, "calibrated" if calibrated else "adaptive",
                              perf_params=args.perf_params if calibrated else None)
    job = JobSpec("perf", 0.0, args.model, nodes * gpn, batch_size=batch, total_iterations=1, params=args.params)
    return perf.price(job, tuple(picked)).total
