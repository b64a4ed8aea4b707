"""Parallelism plans: pipeline stages, each split into data x tensor parallelism.

A plan places a model's operators ``[start, stop)`` on a stage of ``dp * tp``
GPUs.  Stages occupy consecutive GPUs of the (consolidated) allocation in
order, and inside a stage tensor-parallel groups are innermost (consecutive
GPUs), as Megatron-LM and Alpa lay meshes out, so a TP group shares a node
whenever it fits in one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StagePlan:
    """One pipeline stage: its operators and (dp, tp) degrees."""

    start: int  # first operator (layer index) of the stage
    stop: int  # one past the last operator
    dp: int  # data-parallel degree (experts are sharded across it)
    tp: int  # tensor-parallel degree

    @property
    def n_gpus(self) -> int:
        return self.dp * self.tp

    @property
    def layers(self) -> range:
        return range(self.start, self.stop)

    def describe(self) -> str:
        return f"[{self.start}:{self.stop}) D{self.dp}xT{self.tp}"


@dataclass(frozen=True, slots=True)
class Plan:
    """A parallel plan: its pipeline stages in order."""

    stages: tuple[StagePlan, ...]

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def n_gpus(self) -> int:
        return sum(s.n_gpus for s in self.stages)

    @property
    def micro_batches(self) -> int:
        """GPipe-style: 4 x the number of stages (Crius 5.1, following GPipe)."""
        return 4 * len(self.stages)

    def offsets(self) -> tuple[int, ...]:
        """Index of each stage's first GPU in the allocation."""
        out, acc = [], 0
        for s in self.stages:
            out.append(acc)
            acc += s.n_gpus
        return tuple(out)

    def describe(self) -> str:
        return f"P{self.n_stages} " + " | ".join(s.describe() for s in self.stages)


@dataclass(frozen=True, slots=True)
class StageSplit:
    """A pipeline partition without the (dp, tp) choice: what a Cell fixes (section 4.2)."""

    bounds: tuple[int, ...]  # operator boundaries, len = n_stages + 1, bounds[0] = 0
    gpus: tuple[int, ...]  # GPUs per stage

    @property
    def n_stages(self) -> int:
        return len(self.gpus)

    def ranges(self) -> list[tuple[int, int]]:
        return list(zip(self.bounds[:-1], self.bounds[1:]))

    def with_degrees(self, degrees) -> Plan:
        """The plan giving stage i the (dp, tp) pair ``degrees[i]``."""
        return Plan(tuple(StagePlan(a, b, dp, tp) for (a, b), (dp, tp) in zip(self.ranges(), degrees)))
