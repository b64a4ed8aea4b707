"""The (data, tensor) choices of a stage, the Cell's plan space, and its halves.

A stage of n GPUs can run any (dp, tp) with dp x tp = n, with one limit taken
from Alpa, the system Crius tunes with: a stage spanning several nodes keeps
tensor parallelism inside a node and replicates across nodes (Alpa's
``single_node_model_parallel`` logical-mesh space, used by its benchmark
suites), since tensor-parallel all-reduces over the NIC cost several times the
computation they split.  So no tensor group may cross a node boundary (for
stages aligned to nodes: tp <= GPUs per node once a stage leaves its node).

Choices are ordered from data-parallel only (tp = 1) to tensor-parallel only
(the largest tp).  Crius's "half-hybrid" plan splits the stage into sqrt(n)
replicas of sqrt(n) tensor shards (section 5.2, Figure 11); the DP half runs
from DP-only to the half-hybrid plan, the TP half from the half-hybrid plan to
TP-only.  When tp is capped at the node size, the half-hybrid plan is the
square root of the widest tensor degree left.  When the half-hybrid plan is
not itself a choice (n = 8), both halves keep the choices on either side of
it, so they overlap by two choices.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import product
from typing import Iterator, Literal

from dlsched.perf.parallel.plan import Plan, StageSplit
from dlsched.perf.parallel.partition import stage_partition
from dlsched.workload.models import ModelInfo

Favour = Literal["dp", "tp"]


def _inside_nodes(n: int, tp: int, gpn: int, offset: int) -> bool:
    """Whether every tensor group of a stage at ``offset`` stays inside one node."""
    return all((offset + k * tp) // gpn == (offset + k * tp + tp - 1) // gpn for k in range(n // tp))


@lru_cache(maxsize=None)
def degree_options(n: int, gpus_per_node: int | None = None, offset: int = 0) -> tuple[tuple[int, int], ...]:
    """Every (dp, tp) with dp * tp = n, DP-only first, TP-only last.

    With ``gpus_per_node`` given, only tensor degrees whose groups stay inside
    a node for a stage starting at GPU ``offset`` of the allocation (see the
    module note); a stage inside one node keeps every degree.
    """
    out = []
    for tp in range(1, n + 1):
        if n % tp:
            continue
        if tp > 1 and gpus_per_node is not None and not _inside_nodes(n, tp, gpus_per_node, offset % gpus_per_node):
            continue
        out.append((n // tp, tp))
    return tuple(out)


@lru_cache(maxsize=None)
def half_options(n: int, favour: Favour, gpus_per_node: int | None = None,
                 offset: int = 0) -> tuple[tuple[int, int], ...]:
    """The half of a stage's choices Crius keeps when the estimate favoured ``favour``."""
    opts = degree_options(n, gpus_per_node, offset)
    top = opts[-1][1]
    if top == 1:
        return opts
    # 0 = DP-only, 1 = TP-only; the half-hybrid plan (sqrt of the widest tensor
    # degree, sqrt(n) when tp is not capped) sits at 0.5.
    pos = [math.log(tp) / math.log(top) for _, tp in opts]
    lo = max(i for i, x in enumerate(pos) if x <= 0.5 + 1e-9)
    hi = min(i for i, x in enumerate(pos) if x >= 0.5 - 1e-9)
    return opts[: hi + 1] if favour == "dp" else opts[lo:]


def endpoint_options(n: int, gpus_per_node: int | None = None, offset: int = 0) -> tuple[tuple[int, int], ...]:
    """The two plans Crius profiles per stage: DP-only and TP-only (one when n = 1)."""
    opts = degree_options(n, gpus_per_node, offset)
    return (opts[0],) if len(opts) == 1 else (opts[0], opts[-1])


def space_size(split: StageSplit, gpus_per_node: int | None = None,
               pruned: tuple[Favour, ...] | None = None) -> int:
    """Plans in a Cell's space (or in its pruned space, given each stage's favour)."""
    offs = offsets(split)
    if pruned is None:
        return math.prod(len(degree_options(g, gpus_per_node, o)) for g, o in zip(split.gpus, offs))
    return math.prod(len(half_options(g, f, gpus_per_node, o)) for g, f, o in zip(split.gpus, pruned, offs))


def offsets(split: StageSplit) -> list[int]:
    """Index of each stage's first GPU in the allocation."""
    out, acc = [], 0
    for g in split.gpus:
        out.append(acc)
        acc += g
    return out


def plan_space(model: ModelInfo, n_gpus: int, n_stages: int, split: StageSplit | None = None,
               gpus_per_node: int | None = None) -> Iterator[Plan]:
    """Every plan of the Cell (model, n_gpus, n_stages): its stage split x all (dp, tp) per stage."""
    split = split or stage_partition(model, n_gpus, n_stages)
    offs = offsets(split)
    for degrees in product(*(degree_options(g, gpus_per_node, o) for g, o in zip(split.gpus, offs))):
        yield split.with_degrees(degrees)
