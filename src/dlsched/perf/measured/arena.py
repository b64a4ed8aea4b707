"""The Crius authors' measured iteration times, priced by their simulator's rules.

Reads ``arena-profiled-iteration-times.csv`` (``model,param,batch_size,gpu_type,nodes,
gpus_per_node,gpus,iter_time_s,status``: the measured time of the best Alpa plan per
placement, ``status=oom`` where the run did not fit) and, optionally,
``arena-dp-replica-memory.csv`` (``model,param,batch_size,gpus,per_gpu_mem_gb,status``).
Both are read by the one profile-table reader (``dlsched.workload.readers.profiles``, kinds
``iterations`` and ``dp-memory``), detected from their header.

``ArenaTimes.lookup`` answers what the authors' simulator (sjtu-epcc/arena, ``db_querier.py``,
the ``only_opt`` query every policy's jobs are advanced with) answers for a placement of
``nodes`` x ``per_node`` GPUs, in this order:

1. the entry at exactly that placement;
2. else the entry at the tightest packing of the same GPU count (``per_node`` = the node
   capacity, or all GPUs on one node), its throughput x 0.9 per halving of GPUs per node
   (their ``LOCALITY_SCALE_FACTOR``);
3. else, at the exact placement, the entry of the next larger profiled parameter size of
   the same family, its throughput x 1.8 per size step (their ``PARAM_NUM_SCALE_FACTOR``: a
   smaller model runs faster);
4. else infeasible.

An entry found but out of memory or above one 300-s round is infeasible (their
check applies to the raw entry, before scaling).  Throughput is ``batch / iter`` rounded to
3 decimals and the iteration time ``batch / throughput`` rounded to 3 decimals, as theirs,
so round counts agree with theirs to the iteration.

The data-parallel memory check (their non-Crius baselines' scheduling queries) refuses a
placement when ``mem x 1.2 > 0.8 x GPU memory``, when the replica is out of memory, or when
the (model, size, batch) was not measured at all; a 0 entry passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from dlsched.errors import InputError

ROUND_S = 300.0  # their SCHEDULING_INTERVAL, and the largest feasible iteration time
LOCALITY_FACTOR = 0.9
PARAM_FACTOR = 1.8
PREC = 3
DP_MEM_MARGIN = 1.2  # their estimate of a replica's peak over the measured figure
XLA_FRACTION = 0.8  # their pre_alloc_memory_fraction_for_xla
# their supported_model_cfgs (resources/hardware_specs.py): profiled sizes in increasing order
PARAM_STEPS: dict[str, tuple[str, ...]] = {
    "wide_resnet": ("500M", "1B", "2B", "4B", "6.8B", "13B"),
    "bert": ("760M", "1.3B", "2.6B", "6.7B", "15B", "39B"),
    "moe": ("690M", "1.3B", "2.4B", "10B", "27B", "70B"),
}
# their hardware_specs gpu_specs_suite max_mem (GB) where a cluster GPU type has no figure of ours
GPU_MEMORY_GB = {"a100": 40.0, "v100": 32.0, "a40": 48.0, "a10": 24.0}

Key = tuple[str, str, int, str, int, int]  # family, param, batch, gpu (lower case), nodes, GPUs per node


@dataclass(frozen=True, slots=True)
class Lookup:
    """One priced placement: seconds per iteration (None: infeasible) and the rule that gave it."""

    iter_s: float | None
    rule: str  # measured | locality xK | size xK | oom | over-round | missing
    table_key: Key | None = None


@dataclass(frozen=True)
class ArenaTimes:
    """Measured iteration times (None for an out-of-memory run) by placement."""

    source: str
    times: dict[Key, float | None]
    memory: dict[tuple[str, str, int, int], float | None] = field(default_factory=dict)
    memory_source: str = ""

    def __len__(self) -> int:
        return len(self.times)

    def with_memory(self, memory: "ArenaTimes") -> "ArenaTimes":
        return ArenaTimes(self.source, self.times, memory.memory, memory.memory_source)

    def lookup(self, family: str, param: str, batch: int, gpu: str, nodes: int, per_node: int,
               node_capacity: int) -> Lookup:
        """Seconds per iteration on ``nodes`` x ``per_node`` GPUs of ``gpu``, by the authors' rules."""
        gpu = gpu.lower()
        exact = (family, param, batch, gpu, nodes, per_node)
        if exact in self.times:
            return _priced(self.times[exact], batch, exact, "measured", 1.0)
        n = nodes * per_node
        best = (1, n) if n <= node_capacity else (n // node_capacity, node_capacity)
        tight = (family, param, batch, gpu) + best
        if tight in self.times:
            k = int(math.log2(best[1] // per_node)) if per_node and best[1] >= per_node else 0
            return _priced(self.times[tight], batch, tight, f"locality x{k}", LOCALITY_FACTOR ** k)
        steps = PARAM_STEPS.get(family, ())
        if param in steps:
            i = steps.index(param)
            for j, bigger in enumerate(steps[i + 1:], start=1):
                grown = (family, bigger, batch, gpu, nodes, per_node)
                if grown in self.times:
                    return _priced(self.times[grown], batch, grown, f"size x{j}", PARAM_FACTOR ** j)
        return Lookup(None, "missing")

    def dp_memory_ok(self, family: str, param: str, batch: int, gpus: int, gpu_memory_gb: float) -> bool:
        """The authors' data-parallel memory check for the baselines (see the module docstring)."""
        key = (family, param, batch, gpus)
        if key not in self.memory:
            return False
        mem = self.memory[key]
        return mem is not None and (mem == 0 or mem * DP_MEM_MARGIN <= gpu_memory_gb * XLA_FRACTION)


def _priced(entry: float | None, batch: int, key: Key, rule: str, factor: float) -> Lookup:
    if entry is None:
        return Lookup(None, "oom", key)
    if not 0 < entry <= ROUND_S:
        return Lookup(None, "over-round", key)
    thr = round(batch / entry, PREC) * factor
    if thr <= 0:
        return Lookup(None, "oom", key)
    return Lookup(round(batch / thr, PREC), rule, key)


def gpu_key(name: str) -> str:
    """The authors' GPU names (a100, v100, a40, a10) from a dlsched GPU type name (A100-40G -> a100)."""
    return name.lower().split("-")[0]


def read_arena_times(path: str | Path) -> ArenaTimes:
    """The look-up table of ``arena-profiled-iteration-times.csv`` (or a user's table in that format).

    Rows come from the one profile-table reader (``workload.readers.profiles``, kind
    ``iterations``): its errors name file, line and field."""
    from dlsched.workload.readers.profiles import read_profile

    table = read_profile(path, "iterations")
    times: dict[Key, float | None] = {}
    for r in table.rows:
        key = (r.model, r.param, r.batch, gpu_key(r.gpu_type), r.nodes, r.gpus_per_node)
        if key in times:
            raise InputError("duplicate entry for this model, size, batch, GPU type and placement",
                             file=table.source, line=r.line, field="gpu_type")
        times[key] = r.iter_time_s
    return ArenaTimes(table.source, times)


def read_arena_memory(path: str | Path) -> ArenaTimes:
    """Per-GPU GB of a data-parallel replica (None: OOM) from ``arena-dp-replica-memory.csv``
    (rows from ``workload.readers.profiles``, kind ``dp-memory``)."""
    from dlsched.workload.readers.profiles import read_profile

    table = read_profile(path, "dp-memory")
    memory: dict[tuple[str, str, int, int], float | None] = {}
    for r in table.rows:
        key = (r.model, r.param, r.batch, r.gpus)
        if key in memory:
            raise InputError("duplicate entry for this model, size, batch and GPU count",
                             file=table.source, line=r.line, field="gpus")
        memory[key] = r.per_gpu_mem_gb
    return ArenaTimes("", {}, memory, table.source)
