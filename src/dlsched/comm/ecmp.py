"""ECMP with no priorities: the default fabric (flows hashed over equal-cost paths, one level)."""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView


@dataclass
class Ecmp:
    name: str = "ecmp"

    def assign(self, view: CommView) -> dict[str, Assignment]:
        return {j: Assignment(0, None) for j in view.jobs}
