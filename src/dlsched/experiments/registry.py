"""The paper experiments ``dlsched reproduce`` knows, by name: the ``experiment`` ``Registry``.

An experiment module registers an ``Experiment`` when imported; ``MODULES``
lists the modules to import: one per paper (Crius, Gandiva, Dally, CRUX).  Other
distributions add theirs through the ``dlsched.experiments`` entry-point group (an
``Experiment`` object), or a ``file.py:EXPERIMENT`` reference names one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dlsched.registry import Registry

MODULES = ["dlsched.experiments.crius", "dlsched.experiments.dally", "dlsched.experiments.gandiva",
           "dlsched.experiments.crux"]


@dataclass(frozen=True)
class Headline:
    """One of the paper's headline figures beside ours."""

    scenario: str
    metric: str
    paper: float
    ours: float | None
    unit: str = ""  # "%", "x" or a unit name; how both figures print
    note: str = ""
    # over a grid (experiments/grid.py): ``ours`` is the median, lo..hi the range, and the verdict
    lo: float | None = None
    hi: float | None = None
    verdict: str = ""
    per_setting: str = ""

    @property
    def ratio(self) -> float | None:
        """ours / paper: 1.0 is the paper's figure exactly."""
        if self.ours is None or not self.paper:
            return None
        return self.ours / self.paper


@dataclass(frozen=True)
class Experiment:
    name: str
    paper: str  # citation
    # run(quick, out_dir, progress) -> headline figures; progress(done, total, label) after each run
    run: Callable[[bool, Path, Callable[[int, int, str], None] | None], list[Headline]]
    # (runs, expected wall seconds on a 2-core machine) for a quick or full run
    plan: Callable[[bool], tuple[int, float]]
    available: Callable[[], str | None]  # None when its data is present, else why not


def _check(obj) -> str | None:
    return None if isinstance(obj, Experiment) else f"{obj!r} is not a dlsched.experiments.registry.Experiment"


EXPERIMENTS: Registry[Experiment] = Registry("experiment", "dlsched.experiments", "NAME", check=_check)


def register(exp: Experiment) -> Experiment:
    EXPERIMENTS.add(exp.name, exp)
    return exp


def experiment_names() -> list[str]:
    for m in MODULES:
        importlib.import_module(m)
    return EXPERIMENTS.names()


def get_experiment(name: str) -> Experiment:
    experiment_names()
    return EXPERIMENTS.get(name)
