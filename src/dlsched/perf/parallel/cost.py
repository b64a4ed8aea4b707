"""Iteration time and memory of a plan: the pipeline formula over per-stage costs.

Per stage and micro-batch (m samples, m / dp per data-parallel replica):

- compute: 4 x forward FLOPs (forward, recomputed forward under remat, and a
  backward of twice the forward) / (tp x peak x efficiency), the efficiency
  keyed by GPU architecture and model family (``compute_efficiency``);
- weight streaming: the stage's weight shard is read from GPU memory three
  times (forward, recompute, backward), which is what makes tiny per-replica
  batches memory-bound and favours tensor parallelism there;
- a fixed launch overhead per operator and pass;
- tensor-parallel all-reduces of activations (ring), expert all-to-alls
  across the expert-parallel group (GShard; pairwise, with the node's GPUs
  sharing its NIC, see ``expert_alltoall``), and the send/recv from the
  previous stage, plus an all-gather when the receiving stage is tensor-
  parallel (Crius 5.1, Fig. 8; Alpa's cross-mesh resharding).  The expert
  all-to-alls run in an operator's forward, again in its rematerialised
  forward, and (their gradients) in its backward: ``comm_passes``.

Per iteration: the pipeline (Crius 5.1, Fig. 10)

    sum_s T_s + (B - 1) x max_s (T_s - Tcomm_s),   B = 4 x stages

where T_s includes the receive from stage s-1 and Tcomm_s is that receive
(overlapped in the steady state), then the data-parallel gradient all-reduce
and the optimizer update, which follow the last backward (the slowest stage
sets them).

Memory per GPU: mixed-precision Adam states (16 bytes per parameter: fp16
weights and gradients, fp32 master copy and two moments; Rajbhandari et al.,
ZeRO, 2020, section 3.1) of the stage's shard (dense weights / tp, expert
weights / (tp x ep), ep = min(dp, E)), the operator outputs of every micro-batch in flight
(rematerialisation keeps only operator outputs, Chen et al. 2016): GPipe,
which Crius follows, runs all B forwards before the backwards, so every stage
of a pipeline holds all B micro-batches; a single stage accumulates gradients
one micro-batch at a time.  ``CostParams.schedule = "1f1b"`` gives the
PipeDream-flush bound instead (stage s of S holds S - s; same timing), the
working set of the operator being recomputed (/ tp), and a
fixed reserve for the CUDA context and workspaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.cluster.topology import LinkCost
from dlsched.perf.comm.collectives import ring_allreduce, ring_reduce_scatter, sendrecv_time
from dlsched.perf.compute import efficiency
from dlsched.perf.parallel.hardware import Hardware, TierLinks, peak_flops
from dlsched.perf.parallel.plan import Plan
from dlsched.perf.parallel.profile import ModelProfile, profile
from dlsched.workload.models import ModelInfo


@dataclass(frozen=True, slots=True)
class CostParams:
    """Constants of the plan cost model."""

    # Fraction of dense peak XLA-compiled large Transformer GEMMs sustain (over the 4 forward
    # passes counted; 0.375 over the usual 3).  Alpa's GPT runs reach roughly half of V100 peak
    # (Zheng et al. 2022, sec. 8.1).  Other families scale it (``compute_efficiency``).
    efficiency: float = 0.5
    launch_s: float = 20e-6  # per operator and pass (kernel launches, small ops)
    state_bytes_per_param: float = 16.0  # mixed-precision Adam (ZeRO, sec. 3.1)
    reserved_bytes: float = 1.5 * 2**30  # CUDA context, cuBLAS/cuDNN workspaces, fragmentation
    forward_passes: float = 4.0  # forward + recompute + backward (2x forward)
    schedule: str = "gpipe"  # "gpipe" | "1f1b": how many micro-batches a stage holds
    # Calibrated figures (dlsched.perf.calibration); empty = the analytic defaults above.
    # (GPU type, family, efficiency): replaces ``efficiency`` x the family ratio for that pair.
    family_efficiency: tuple[tuple[str, str, float], ...] = ()
    # (family, state scale, activation scale): multiply the optimizer-state and activation bytes.
    memory_scale: tuple[tuple[str, float, float], ...] = ()
    # (GPU type, family, intra-node bandwidth scale, inter-node bandwidth scale), applied by
    # ``scaled_links``; family "" applies to every family without its own entry.
    link_scale: tuple[tuple[str, str, float, float], ...] = ()
    # (GPU type, family, k): small-batch inefficiency.  A GPU working on mb samples per micro-batch
    # takes as long as mb + k would at full efficiency (kernels on few samples do not fill the GPU),
    # which is what makes measured runs scale worse with GPUs and pipeline depth than FLOPs say.
    batch_overhead: tuple[tuple[str, str, float], ...] = ()
    # Times each operator's working set (activations, attention scores, softmax) crosses GPU memory
    # per sample and micro-batch, at the GPU's memory bandwidth.  These element-wise and attention
    # operators are memory-bound; their share of the FLOPs-bound GEMM time falls as the hidden size
    # grows (bytes ~ S h + a S^2, FLOPs ~ S h^2), which a single efficiency per family cannot follow
    # across model sizes.  0 = no such term (the analytic defaults).
    activation_passes: float = 0.0

    def overhead_samples(self, gpu: str, family: str) -> float:
        for name, fam, k in self.batch_overhead:
            if name == gpu and fam == family:
                return k
        return 0.0

    def memory_scales(self, family: str) -> tuple[float, float]:
        for fam, s_state, s_act in self.memory_scale:
            if fam == family:
                return s_state, s_act
        return 1.0, 1.0

    @property
    def comm_passes(self) -> float:
        """Multiplier on the per-operator traits' forward + backward collective traffic.

        ``LayerTraits.tp_bytes`` / ``a2a_bytes`` count one forward and one
        backward (equal halves).  Rematerialisation re-runs each operator's
        forward before its backward, collectives included (Korthikanti et al.
        2022, sec. 4: full recomputation repeats the forward tensor-parallel
        all-reduces; GShard's dispatch and combine all-to-alls sit inside the
        recomputed expert operator just the same), so every recomputed forward
        adds half of the traits' traffic: 1.5x with ``forward_passes`` = 4
        (forward, recompute, 2x backward), 1x without remat (3).  Applied to
        the expert all-to-alls; the tensor-parallel term does not use it yet
        (see ``stage_cost``).
        """
        return 1.0 + 0.5 * max(0.0, self.forward_passes - 3.0)

    def in_flight(self, stage: int, n_stages: int) -> int:
        """Micro-batches whose checkpoints stage ``stage`` holds at once."""
        if n_stages == 1:
            return 1  # gradient accumulation, one micro-batch at a time
        return 4 * n_stages if self.schedule == "gpipe" else n_stages - stage


DEFAULT_PARAMS = CostParams()


def compute_efficiency(gpu, family: str, bytes_per_param: int, params: CostParams = DEFAULT_PARAMS) -> float:
    """Achieved fraction of ``gpu``'s peak for a model family, under ``params``' remat accounting.

    ``params.efficiency`` is the Transformer figure; other families take the
    ratio the data-parallel compute model keys by (architecture, family)
    (``dlsched.perf.compute.efficiency``: MoE about 0.75 of a Transformer,
    fp32 CNNs 0.33 on Ampere's TF32 and 1.7 on Volta's CUDA cores, where
    Transformers lose their tensor-core advantage), so one table sets how the
    families compare on every GPU type.  Checked against the Crius authors'
    measured single-GPU Alpa runs (experiments/crius/measured_scaling.py):
    MoE at 0.66 and WideResNet at 0.16 of BERT's efficiency on the H100
    (0.71 and 0.29 here) and 0.72 and 0.52 on the L20 (1.0 here: the table
    has no Ada entry, and we do not take one from the runs we compare with).
    """
    for name, fam, eff in params.family_efficiency:  # a few entries; scanned only when calibrated
        if name == gpu.name and fam == family:
            return eff
    # every stage_cost asks, so the ratio is looked up once per (GPU type, family, precision)
    key = (gpu.name, family, bytes_per_param)
    ratio = _FAMILY_RATIO.get(key)
    if ratio is None:
        ratio = _FAMILY_RATIO[key] = efficiency(gpu, family, bytes_per_param) / efficiency(gpu, "transformer", 2)
    return params.efficiency * ratio


_FAMILY_RATIO: dict[tuple[str, str, int], float] = {}


# ----------------------------------------------------------------------------- collectives
# Flat ring collectives over ``n`` participants on one link (dlsched.perf.comm.collectives), with
# ``count`` calls' latency and a ``share`` of the link's bandwidth (several groups on one NIC).


def _link(link: LinkCost, count: float, share: float) -> LinkCost:
    return LinkCost(link.bandwidth_Bps / share, link.latency_s * count)


def allreduce(nbytes: float, n: int, link: LinkCost, count: float = 1.0, share: float = 1.0) -> float:
    if n <= 1 or nbytes <= 0:
        return 0.0
    return ring_allreduce(nbytes, n, _link(link, count, share))


def allgather(nbytes: float, n: int, link: LinkCost, count: float = 1.0, share: float = 1.0) -> float:
    if n <= 1 or nbytes <= 0:
        return 0.0
    return ring_reduce_scatter(nbytes, n, _link(link, count, share))


def expert_alltoall(nbytes: float, ep: int, stride: int, offset: int, node_gpus: int, links: TierLinks,
                    count: float = 1.0) -> float:
    """All-to-alls of an expert-parallel group: ``ep`` ranks ``offset + k * stride``.

    ``nbytes`` is what each rank sends over all ``count`` calls; it keeps 1/ep
    and sends 1/ep to every other rank, pairwise and all at once (NCCL grouped
    send/recv), so each call pays one latency per tier it crosses, not a
    ring's ep - 1 hops.  The share bound for ranks of its own node goes over
    the intra-node link; the rest leaves through the node's NIC, which carries
    the off-node share of *every* GPU of the stage on that node (``node_gpus``:
    all the node's EP groups exchange at the same time), not of one.  The two
    tiers work concurrently: the slower bounds the time.
    """
    if ep <= 1 or nbytes <= 0:
        return 0.0
    gpn = links.gpus_per_node
    local = min(ep, (gpn - offset % gpn - 1) // stride + 1)  # group members on the first rank's node
    t_intra = nbytes * (local - 1) / ep / links.intra.bandwidth_Bps
    lat = links.intra.latency_s if local > 1 else 0.0
    if local == ep:
        return t_intra + count * lat
    nic, _ = links.group(offset, ep, stride)
    t_nic = node_gpus * nbytes * (ep - local) / ep / nic.bandwidth_Bps
    return max(t_intra, t_nic) + count * (lat + nic.latency_s)


def scaled_links(links: TierLinks, gpu_name: str, params: CostParams, family: str | None = None) -> TierLinks:
    """``links`` with ``params.link_scale``'s bandwidth factors for ``gpu_name`` and ``family``.

    Why per family: the measured runs (Alpa) move a family's tensors with different
    efficiency (fp32 convolution gradients vs fp16 Transformer ones), which one link figure
    per GPU type cannot give; unchanged when no entry matches."""
    found = None
    for name, fam, s_intra, s_inter in params.link_scale:
        if name == gpu_name and (fam == family or (fam == "" and found is None)):
            found = (s_intra, s_inter)
    if found is None:
        return links
    s_intra, s_inter = found

    def bw(link: LinkCost, s: float) -> LinkCost:
        return LinkCost(link.bandwidth_Bps * s, link.latency_s)
    return TierLinks(bw(links.intra, s_intra), bw(links.rack, s_inter), bw(links.network, s_inter),
                     links.gpus_per_node, links.nodes_per_rack)


# ----------------------------------------------------------------------------- one stage


@dataclass(frozen=True, slots=True)
class StageCost:
    """One pipeline stage's time and memory under one (dp, tp) choice."""

    micro: float  # T_s: seconds per micro-batch, including the receive from the previous stage
    recv: float  # Tcomm_s: the receive part of ``micro`` (overlapped in the steady state)
    sync: float  # per iteration after the pipeline drains: gradient all-reduce + update
    memory: float  # bytes per GPU
    compute: float  # the computation part of ``micro`` (what single-device profiling measures)

    @property
    def steady(self) -> float:
        """Per-micro-batch time in the steady state; communication hides behind compute."""
        return max(self.micro - self.recv, self.recv)


def stage_cost(prof: ModelProfile, hw: Hardware, a: int, b: int, dp: int, tp: int, offset: int,
               batch: float, n_micro: int, in_flight: int,
               params: CostParams = DEFAULT_PARAMS) -> StageCost | None:
    """Cost of operators [a, b) on ``dp * tp`` GPUs starting at allocation index ``offset``.

    ``in_flight`` is how many micro-batches' checkpoints the stage holds at once.

    None when the degrees are not usable: fewer than one sample per replica per
    micro-batch, or more tensor shards than the model has heads.  Experts are
    sharded across up to E data-parallel ranks (expert parallelism); beyond E
    the expert shards are replicated and their gradients all-reduced.
    """
    return stage_costs(prof, hw, a, b, ((dp, tp),), offset, batch, n_micro, in_flight, params)[0]


def stage_costs(prof: ModelProfile, hw: Hardware, a: int, b: int, choices, offset: int,
                batch: float, n_micro: int, in_flight: int,
                params: CostParams = DEFAULT_PARAMS) -> list[StageCost | None]:
    """``stage_cost`` of one stage for each (dp, tp) of ``choices``.

    The plan search prices every choice of a stage: what does not depend on the choice is
    computed once here (each expression as ``stage_cost`` defines it, so the floats are the same).
    """
    sums = prof.lists
    m = batch / n_micro
    pe = sums.expert_params[b] - sums.expert_params[a]
    pd = sums.dense_params[b] - sums.dense_params[a]
    a2a = sums.a2a_bytes[b] - sums.a2a_bytes[a]
    shard_max = prof.max_experts_shard
    links: TierLinks = hw.links
    gpn = links.gpus_per_node
    bpp = prof.bytes_per_param
    peak = _peak(prof, hw, params)
    work = params.forward_passes * (sums.flops[b] - sums.flops[a])
    k_small = params.overhead_samples(hw.gpu.name, prof.family) if params.batch_overhead else 0.0
    mem_bw = hw.gpu.mem_bw_gbs * 1e9
    launch = 3 * (b - a) * params.launch_s
    act_traffic = params.activation_passes * (sums.workset[b] - sums.workset[a]) / mem_bw if \
        params.activation_passes else 0.0
    tp_bytes = sums.tp_bytes[b] - sums.tp_bytes[a]
    tp_count = sums.tp_count[b] - sums.tp_count[a]
    passes = params.comm_passes  # forward, rematerialised forward, backward
    a2a_count = (sums.a2a_count[b] - sums.a2a_count[a]) * passes
    held = min(in_flight, n_micro)
    ckpt = sums.ckpt[b] - sums.ckpt[a]
    workset = sums.workset_max[a][b - 1]
    s_state, s_act = params.memory_scales(prof.family) if params.memory_scale else (1.0, 1.0)
    state_bytes = params.state_bytes_per_param
    mem_state = state_bytes * s_state
    ckpt *= s_act
    workset *= s_act
    cut = recv_p2p = 0.0
    if a > 0:
        cut = sums.act_out[a - 1] * m
        recv_p2p = 2 * sendrecv_time(cut, links.group(offset - 1, 2, 1)[0])  # activation forward, gradient backward

    out: list[StageCost | None] = []
    for dp, tp in choices:
        mb = m / dp
        if mb < 1 or tp > prof.max_tp:
            out.append(None)
            continue
        ep = min(dp, shard_max) if shard_max else dp  # expert-parallel degree
        shard_params = pd / tp + pe / (tp * ep)
        compute = work * (mb + k_small) / (tp * peak)
        if act_traffic:
            compute += act_traffic * mb / tp
        stream = 3 * shard_params * bpp / mem_bw
        t = compute + stream + launch

        tp_link, _ = links.group(offset, tp, 1) if tp > 1 else (None, False)
        if tp > 1:
            # NB: remat repeats these forward all-reduces too (``comm_passes``); not
            # applied here yet because it reprices every dense model's tensor-parallel
            # plans, outside the MoE fix (docs/crius-parallelism.md, Simplifications).
            t += allreduce(tp_bytes * mb, tp, tp_link, count=tp_count)
        dp_link, dp_cross = links.group(offset, dp, tp) if dp > 1 else (None, False)
        # Data-parallel rings of the tp ranks of a node share the node's NIC (a ring
        # crosses each node boundary once, so one ring per tensor rank).
        dp_share = min(tp, gpn) if dp_cross else 1
        if ep > 1 and a2a > 0:
            # Each tensor rank dispatches 1/tp of its replica's mb samples' tokens.
            t += expert_alltoall(a2a * mb / tp * passes, ep, tp, offset, min(gpn, dp * tp), links,
                                 count=a2a_count)

        recv = 0.0
        if a > 0:
            recv = recv_p2p
            if tp > 1:
                recv += 2 * allgather(cut / dp, tp, tp_link)
        t += recv

        sync = 0.0
        if dp > 1:
            sync += allreduce(pd / tp * bpp, dp, dp_link, share=dp_share)
            if dp > ep and pe > 0:
                # Only replicas of the same expert shard (dp / ep of them, stride tp x ep)
                # all-reduce its gradient.  Every GPU of a node holds a different shard,
                # so min(tp x ep, gpn) replica rings share the node's NIC, not tp.
                rep_link, rep_cross = links.group(offset, dp // ep, tp * ep)
                sync += allreduce(pe / (tp * ep) * bpp, dp // ep, rep_link,
                                  share=min(tp * ep, gpn) if rep_cross else 1)
        sync += shard_params * state_bytes / mem_bw

        memory = (shard_params * mem_state
                  + held * mb * ckpt
                  + mb * workset / tp
                  + params.reserved_bytes)
        out.append(StageCost(t, recv, sync, memory, compute))
    return out


def _peak(prof: ModelProfile, hw: Hardware, params: CostParams) -> float:
    """FLOP/s one GPU reaches on this model: ``stage_costs`` prices with it, and ``compute_floor``
    is a lower bound only while both use the same figure."""
    return peak_flops(hw.gpu, prof.bytes_per_param) * compute_efficiency(hw.gpu, prof.family, prof.bytes_per_param,
                                                                        params)


def compute_floor(prof: ModelProfile, hw: Hardware, bounds, gpus, batch: float, n_micro: int,
                  params: CostParams = DEFAULT_PARAMS) -> float:
    """A lower bound on ``pipeline_time`` of every plan of a stage split, whatever its (dp, tp).

    A stage's micro-batch time includes its computation, which is the same for every
    dp x tp = g (work x (m / dp) / (tp x peak) = work x m / (g x peak)), and nothing is
    negative; the steady term is at least the slowest stage's computation.  So
    sum_s compute_s + (B - 1) x max_s compute_s bounds the plan from below, up to rounding
    (the caller leaves a margin for it).
    """
    sums = prof.lists
    peak = _peak(prof, hw, params)
    m = batch / n_micro
    comp = [params.forward_passes * (sums.flops[b] - sums.flops[a]) * m / (g * peak)
            for a, b, g in zip(bounds[:-1], bounds[1:], gpus)]
    return sum(comp) + (n_micro - 1) * max(comp)


def pipeline_time(costs: list[StageCost], n_micro: int) -> float:
    """Crius's pipeline formula: first micro-batch through all stages, then B - 1 at the slowest."""
    first = sum(c.micro for c in costs)
    steady = max(c.steady for c in costs)
    return first + (n_micro - 1) * steady + max(c.sync for c in costs)


# ----------------------------------------------------------------------------- whole plans


def plan_costs(model: ModelInfo, batch: float, plan: Plan, hw: Hardware,
               params: CostParams = DEFAULT_PARAMS) -> list[StageCost] | None:
    prof = profile(model)
    out = []
    S = plan.n_stages
    for i, (st, off) in enumerate(zip(plan.stages, plan.offsets())):
        c = stage_cost(prof, hw, st.start, st.stop, st.dp, st.tp, off, batch, plan.micro_batches,
                       params.in_flight(i, S), params)
        if c is None:
            return None
        out.append(c)
    return out


def memory_per_gpu(model: ModelInfo, batch: float, plan: Plan, hw: Hardware,
                   params: CostParams = DEFAULT_PARAMS) -> tuple[float, ...] | None:
    """Bytes each stage's GPUs hold (None when the plan's degrees are unusable)."""
    costs = plan_costs(model, batch, plan, hw, params)
    return None if costs is None else tuple(c.memory for c in costs)


def plan_time(model: ModelInfo, batch: float, plan: Plan, hw: Hardware,
              params: CostParams = DEFAULT_PARAMS) -> float | None:
    """Iteration time of ``plan`` on ``hw``, or None if unusable or out of memory."""
    costs = plan_costs(model, batch, plan, hw, params)
    if costs is None or any(c.memory > hw.gpu.memory_bytes for c in costs):
        return None
    return pipeline_time(costs, plan.micro_batches)


def iteration_time(model: ModelInfo, batch: float, gpu_type: str, gpus_per_node: int, n_gpus: int,
                   plan: Plan, links: TierLinks, params: CostParams = DEFAULT_PARAMS) -> float | None:
    """Seconds per iteration of ``model`` at global ``batch`` on ``n_gpus`` GPUs with ``plan``.

    None when the plan does not fit (OOM) or its degrees are unusable.  The
    plan must use exactly ``n_gpus`` GPUs; ``gpus_per_node`` must match ``links``.
    """
    if plan.n_gpus != n_gpus:
        raise ValueError(f"plan uses {plan.n_gpus} GPUs, the allocation has {n_gpus}")
    if links.gpus_per_node != gpus_per_node:
        raise ValueError(f"links are for {links.gpus_per_node} GPUs per node, not {gpus_per_node}")
    return plan_time(model, batch, plan, Hardware.of(gpu_type, links), params)
