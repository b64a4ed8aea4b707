"""Headlines over a grid, not a point.

A paper's headline ("Crius's average JCT is 81% lower than FCFS's") is a claim
about a direction (lower) and a size (81%).  One simulation at one setting can
agree with it by accident: a seed, a load or a modelling constant may decide
who wins.  So every headline is run over a grid of seeds x load factors x the
one or two settings that decide it, and reported as our range with a verdict:

* ``reproduced``: the paper's direction holds at every grid point;
* ``mixed``: it holds at some points and not at others;
* ``not reproduced``: it holds at no point (or no point produced a value).

The verdict is about the direction only: our size beside the paper's is
shown (the range) but not judged, because the paper's size depends on its
testbed and trace in ways a model cannot claim to match.

Usage::

    heads = [GridHeadline("sim", "JCT lower than FCFS", 81.3, "%", "average JCT", HIGHER)]
    spec = GridSpec(settings=("div100", "div30"))
    results = run_grid(heads, lambda p: {"JCT lower than FCFS": run_one(p)}, spec)
    header, rows = grid_table(results)

``run_point`` runs one grid point and returns every headline's value there, so
one simulation set serves all the headlines measured from it.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

REPRODUCED = "reproduced"
MIXED = "mixed"
NOT_REPRODUCED = "not reproduced"

# load factors of the grid: arrivals compressed by the factor (x2 is twice the arrival rate)
LOADS = (0.5, 1.0, 2.0)
SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Direction:
    """Where the paper's claim points: a value ``better`` than ``neutral`` agrees with it.

    ``neutral`` is the value at which the compared systems tie (0 for "% lower",
    1 for "x as much"); a tie does not count as agreeing.
    """

    better: str  # "higher" or "lower"
    neutral: float

    def __post_init__(self) -> None:
        if self.better not in ("higher", "lower"):
            raise ValueError(f"direction must be 'higher' or 'lower', not {self.better!r}")

    def holds(self, value: float | None) -> bool:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False  # no value (e.g. no job finished) cannot agree with a claim
        return value > self.neutral if self.better == "higher" else value < self.neutral

    def describe(self) -> str:
        return f"{'>' if self.better == 'higher' else '<'} {self.neutral:g}"


# the two common shapes of a headline: "X% lower/higher than" (tie at 0) and "X times" (tie at 1)
PCT_POSITIVE = Direction("higher", 0.0)  # e.g. "JCT 48.9% lower": our percent must be > 0
RATIO_ABOVE_ONE = Direction("higher", 1.0)  # e.g. "1.49x throughput": our ratio must be > 1
RATIO_BELOW_ONE = Direction("lower", 1.0)


@dataclass(frozen=True)
class GridHeadline:
    """One headline of a paper: its figure, the metric it is stated in and the direction it claims."""

    scenario: str
    name: str  # the headline as the paper states it, e.g. "JCT lower than FCFS"
    paper: float  # the paper's figure, in ``unit``
    unit: str  # "%", "x" or a unit name
    metric: str  # the paper's own metric, e.g. "average JCT (h)": ours must be the same one
    direction: Direction
    source: str = ""  # where the paper gives it, e.g. "Fig. 16"
    ours_label: bool = False  # True for our own additions (ablations, extra baselines), never the paper's row
    note: str = ""


@dataclass(frozen=True)
class GridPoint:
    seed: int
    load: float
    setting: str

    def label(self) -> str:
        return f"seed {self.seed}, load x{self.load:g}, {self.setting}"


@dataclass(frozen=True)
class GridSpec:
    """The grid: at least 3 seeds x the load factors x the deciding settings."""

    seeds: tuple[int, ...] = SEEDS
    loads: tuple[float, ...] = LOADS
    settings: tuple[str, ...] = ("default",)

    def __post_init__(self) -> None:
        if not self.seeds or not self.loads or not self.settings:
            raise ValueError("a grid needs at least one seed, load and setting")

    def points(self) -> list[GridPoint]:
        # settings outermost: a setting's runs share its set-up (e.g. a rebuilt workload)
        return [GridPoint(s, l, st) for st in self.settings for l in self.loads for s in self.seeds]

    @property
    def size(self) -> int:
        return len(self.seeds) * len(self.loads) * len(self.settings)


def verdict(values: Iterable[float | None], direction: Direction) -> str:
    """``reproduced`` if the direction holds at every point, ``not reproduced`` if at none, else ``mixed``."""
    vals = list(values)
    held = sum(direction.holds(v) for v in vals)
    if vals and held == len(vals):
        return REPRODUCED
    if held == 0:
        return NOT_REPRODUCED
    return MIXED


@dataclass
class GridResult:
    """A headline's values over the grid."""

    headline: GridHeadline
    values: dict[GridPoint, float | None] = field(default_factory=dict)

    def _present(self, points: Iterable[GridPoint] | None = None) -> list[float]:
        pts = self.values if points is None else points
        return [v for p in pts if (v := self.values.get(p)) is not None and not math.isnan(v)]

    @property
    def lo(self) -> float | None:
        vals = self._present()
        return min(vals) if vals else None

    @property
    def hi(self) -> float | None:
        vals = self._present()
        return max(vals) if vals else None

    @property
    def median(self) -> float | None:
        vals = self._present()
        return statistics.median(vals) if vals else None

    @property
    def held(self) -> int:
        return sum(self.headline.direction.holds(v) for v in self.values.values())

    @property
    def verdict(self) -> str:
        return verdict(self.values.values(), self.headline.direction)

    def settings(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.values:
            seen.setdefault(p.setting, None)
        return list(seen)

    def by_setting(self) -> dict[str, tuple[float | None, float | None, str]]:
        """Per deciding setting: (min, max, verdict) over seeds and loads."""
        out = {}
        for s in self.settings():
            pts = [p for p in self.values if p.setting == s]
            vals = self._present(pts)
            out[s] = (min(vals) if vals else None, max(vals) if vals else None,
                      verdict((self.values[p] for p in pts), self.headline.direction))
        return out

    def as_dict(self) -> dict:
        h = self.headline
        return {"scenario": h.scenario, "headline": h.name, "paper": h.paper, "unit": h.unit, "metric": h.metric,
                "direction": h.direction.describe(), "source": h.source, "ours_label": h.ours_label,
                "lo": self.lo, "hi": self.hi, "median": self.median, "verdict": self.verdict,
                "held": self.held, "points": len(self.values),
                "by_setting": {s: {"lo": a, "hi": b, "verdict": v} for s, (a, b, v) in self.by_setting().items()},
                "values": [{"seed": p.seed, "load": p.load, "setting": p.setting, "value": v}
                           for p, v in self.values.items()]}


def run_grid(headlines: Sequence[GridHeadline], run_point: Callable[[GridPoint], Mapping[str, float | None]],
             spec: GridSpec, progress: Callable[[int, int, GridPoint], None] | None = None) -> list[GridResult]:
    """Run ``run_point`` at every grid point; each returns the value of every headline (by name) there.

    A headline missing from a point's answer counts as no value at that point (it cannot agree).
    """
    results = [GridResult(h) for h in headlines]
    pts = spec.points()
    for i, p in enumerate(pts):
        vals = run_point(p)
        for r in results:
            r.values[p] = vals.get(r.headline.name)
        if progress is not None:
            progress(i + 1, len(pts), p)
    return results


def run_headline(headline: GridHeadline, run_point: Callable[[GridPoint], float | None],
                 spec: GridSpec) -> GridResult:
    """One headline whose value is one function of the grid point."""
    return run_grid([headline], lambda p: {headline.name: run_point(p)}, spec)[0]


# ---------------------------------------------------------------- formatting

def fmt(v: float | None, unit: str, signed: bool = True) -> str:
    """A figure in its unit; percentages carry their sign unless ``signed`` is off."""
    if v is None:
        return "-"
    if unit == "%":
        return f"{v:+.1f}%" if signed else f"{v:.1f}%"
    if unit == "x":
        return f"{v:.2f}x"
    return f"{v:.2f} {unit}".strip()


def fmt_range(lo: float | None, hi: float | None, unit: str) -> str:
    if lo is None or hi is None:
        return "-"
    if fmt(lo, unit) == fmt(hi, unit):
        return fmt(lo, unit)
    return f"{fmt(lo, unit)} .. {fmt(hi, unit)}"


def paper_text(h: GridHeadline) -> str:
    if h.ours_label:
        return "not in the paper (ours)"
    v = f"{h.paper:+.1f}%" if h.unit == "%" else fmt(h.paper, h.unit)
    if h.unit == "%" and h.paper == 0 and h.source:
        v = "direction only"  # a paper row that states who is ahead (e.g. a figure's order), not by how much
    return f"{v} ({h.source})" if h.source else v


GRID_HEADER = ["scenario", "headline", "metric", "paper", "ours (range over grid)", "per setting", "verdict"]


def grid_row(r: GridResult) -> list[str]:
    """One table row: the paper's figure, our range (overall and per setting) and the verdict."""
    h = r.headline
    per = "; ".join(f"{s}: {fmt_range(a, b, h.unit)} ({v})" for s, (a, b, v) in r.by_setting().items())
    name = f"[ours] {h.name}" if h.ours_label else h.name
    return [h.scenario, name, h.metric, paper_text(h), fmt_range(r.lo, r.hi, h.unit), per,
            f"{r.verdict} ({r.held}/{len(r.values)})"]


def grid_table(results: Sequence[GridResult]) -> tuple[list[str], list[list[str]]]:
    """Paper rows first, our own additions after them (labelled)."""
    ordered = [r for r in results if not r.headline.ours_label] + [r for r in results if r.headline.ours_label]
    return list(GRID_HEADER), [grid_row(r) for r in ordered]


def markdown(results: Sequence[GridResult]) -> str:
    header, rows = grid_table(results)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- load factor

def scale_arrivals(jobs: Sequence, load: float) -> list:
    """The workload at ``load`` times its arrival rate: arrival offsets divided by ``load``.

    Offsets are taken from the first arrival, so x1 returns the jobs unchanged.  A
    deadline keeps its slack (deadline - submit): load changes when work arrives,
    not how long a job may take.  Works on any object with ``submit_time``,
    ``deadline`` and ``with_`` (``JobSpec``).
    """
    if load <= 0:
        raise ValueError(f"load factor must be positive, not {load}")
    if not jobs or load == 1.0:
        return list(jobs)
    t0 = min(j.submit_time for j in jobs)
    out = []
    for j in jobs:
        sub = t0 + (j.submit_time - t0) / load
        ddl = getattr(j, "deadline", None)
        changes = {"submit_time": round(sub, 3)}
        if ddl is not None:
            changes["deadline"] = round(sub, 3) + (ddl - j.submit_time)
        out.append(j.with_(**changes))
    return out


def to_headline(r: GridResult):
    """The registry's ``Headline`` (what ``dlsched reproduce`` prints): median as ours, range and verdict."""
    from dlsched.experiments.registry import Headline

    h = r.headline
    per = "; ".join(f"{s}: {fmt_range(a, b, h.unit)} ({v})" for s, (a, b, v) in r.by_setting().items())
    metric = f"[ours] {h.name}" if h.ours_label else h.name
    note = "; ".join(x for x in (f"metric: {h.metric}", h.note) if x)
    return Headline(h.scenario, metric, h.paper, r.median, h.unit, note, lo=r.lo, hi=r.hi,
                    verdict=f"{r.verdict} ({r.held}/{len(r.values)})", per_setting=per)
