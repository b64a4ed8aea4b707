"""Calibrated perf-model parameters: what ``dlsched perf calibrate`` writes and ``--perf-params`` reads.

A ``CalibratedParams`` holds, per GPU type and model family, the figures the
analytic model would otherwise take from its defaults:

- ``efficiency[(gpu, family)]``: achieved fraction of the GPU's dense peak
  (``CostParams.family_efficiency``);
- ``links[(gpu, family)] = (intra, inter)``: bandwidth multipliers on the
  cluster spec's intra-node and inter-node (rack and network) link figures
  (family "" = every family);
- ``batch_overhead[(gpu, family)]``: the small-batch inefficiency in samples
  (``CostParams.batch_overhead``);
- ``memory[family] = (state, activation)``: multipliers on optimizer-state and
  activation bytes, and ``reserved_bytes`` per GPU;
- ``contention[family]`` and ``utilisation[family]``: the packing model's
  ``p`` and a scale on each job's solo GPU utilisation (``sharing.interference``);
- ``spread_keep``: throughput kept per halving of GPUs per node when a job is
  spread over more servers than it needs (``AdaptivePerfModel.spread_factor``).

The file is JSON with a ``provenance`` block (source tables with sha256, fit
method, fit date, row counts, in-sample error).  The shipped fit
(``calibrated.json`` next to this module, read with ``importlib.resources``)
is what ``--perf calibrated`` uses when no ``--perf-params`` is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from dlsched.errors import InputError
from dlsched.perf.parallel.cost import DEFAULT_PARAMS, CostParams

FORMAT = "dlsched-perf-params/1"
SHIPPED = "calibrated.json"


@dataclass(frozen=True)
class CalibratedParams:
    efficiency: dict[tuple[str, str], float] = field(default_factory=dict)
    links: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    batch_overhead: dict[tuple[str, str], float] = field(default_factory=dict)
    memory: dict[str, tuple[float, float]] = field(default_factory=dict)
    reserved_bytes: float = DEFAULT_PARAMS.reserved_bytes
    contention: dict[str, float] = field(default_factory=dict)
    utilisation: dict[str, float] = field(default_factory=dict)
    spread_keep: float | None = None
    activation_passes: float = 0.0  # ``CostParams.activation_passes`` (0: none, as in older files)
    provenance: dict[str, Any] = field(default_factory=dict)

    def cost_params(self, base: CostParams = DEFAULT_PARAMS) -> CostParams:
        """The plan cost model's constants with these figures (sorted, so equal fits compare equal)."""
        from dataclasses import replace

        return replace(base,
                       family_efficiency=tuple((g, f, e) for (g, f), e in sorted(self.efficiency.items())),
                       memory_scale=tuple((f, s, a) for f, (s, a) in sorted(self.memory.items())),
                       link_scale=tuple((g, f, i, o) for (g, f), (i, o) in sorted(self.links.items())),
                       batch_overhead=tuple((g, f, k) for (g, f), k in sorted(self.batch_overhead.items())),
                       reserved_bytes=self.reserved_bytes, activation_passes=self.activation_passes)

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "efficiency": [{"gpu": g, "family": f, "efficiency": round(e, 6)}
                           for (g, f), e in sorted(self.efficiency.items())],
            "links": [{"gpu": g, "family": f, "intra_bandwidth_scale": round(i, 6),
                       "inter_bandwidth_scale": round(o, 6)} for (g, f), (i, o) in sorted(self.links.items())],
            "batch_overhead": [{"gpu": g, "family": f, "samples": round(k, 6)}
                               for (g, f), k in sorted(self.batch_overhead.items())],
            "memory": [{"family": f, "state_scale": round(s, 6), "activation_scale": round(a, 6)}
                       for f, (s, a) in sorted(self.memory.items())],
            "reserved_bytes": round(self.reserved_bytes),
            "packing": [{"family": f, "contention": round(self.contention[f], 6),
                         "utilisation_scale": round(self.utilisation.get(f, 1.0), 6)}
                        for f in sorted(self.contention)],
            "spread_keep": None if self.spread_keep is None else round(self.spread_keep, 6),
            "activation_passes": self.activation_passes,
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @staticmethod
    def from_json(data: Any, source: str) -> CalibratedParams:
        def need(obj: dict, key: str, kind=float):
            if not isinstance(obj, dict) or key not in obj:
                raise InputError(f"missing {key!r}", file=source, field=key)
            v = obj[key]
            try:
                v = kind(v)
            except (TypeError, ValueError):
                raise InputError(f"expected {kind.__name__}, got {v!r}", file=source, field=key) from None
            if kind is float and not v > 0:
                raise InputError(f"must be a positive number, got {v!r}", file=source, field=key)
            return v

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not a perf-params file (expected \"format\": \"{FORMAT}\")", file=source,
                             field="format")
        eff = {(need(e, "gpu", str), need(e, "family", str)): need(e, "efficiency")
               for e in data.get("efficiency", [])}
        links = {(need(e, "gpu", str), str(e.get("family", ""))): (need(e, "intra_bandwidth_scale"),
                                                                   need(e, "inter_bandwidth_scale"))
                 for e in data.get("links", [])}
        over = {(need(e, "gpu", str), need(e, "family", str)): need(e, "samples")
                for e in data.get("batch_overhead", [])}
        mem = {need(e, "family", str): (need(e, "state_scale"), need(e, "activation_scale"))
               for e in data.get("memory", [])}
        packing = data.get("packing", [])
        spread = data.get("spread_keep")
        passes = _number(data, "activation_passes", source) if "activation_passes" in data else 0.0
        if passes < 0:
            raise InputError(f"must be 0 or more, got {passes!r}", file=source, field="activation_passes")
        if spread is not None and not (isinstance(spread, (int, float)) and 0 < spread <= 1):
            raise InputError(f"must be in (0, 1], got {spread!r}", file=source, field="spread_keep")
        return CalibratedParams(
            efficiency=eff, links=links, batch_overhead=over, memory=mem,
            reserved_bytes=need(data, "reserved_bytes") if "reserved_bytes" in data else DEFAULT_PARAMS.reserved_bytes,
            contention={need(e, "family", str): _number(e, "contention", source) for e in packing},
            utilisation={need(e, "family", str): need(e, "utilisation_scale") for e in packing},
            spread_keep=None if spread is None else float(spread),
            activation_passes=passes,
            provenance=dict(data.get("provenance", {})))

    @staticmethod
    def load(path: str | Path) -> CalibratedParams:
        source = str(path)
        p = Path(path)
        if not p.is_file():
            raise InputError("no such file" if not p.exists() else "not a file", file=source)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"not JSON: {e}", file=source) from None
        return CalibratedParams.from_json(data, source)


def _number(obj: dict, key: str, source: str) -> float:
    """A finite number of any sign (a fitted contention may be negative: packing helps)."""
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) == float("inf"):
        raise InputError(f"expected a finite number, got {v!r}", file=source, field=key)
    return float(v)


@cache  # read once per process: the default perf model builds it for every simulator
def shipped() -> CalibratedParams:
    """The fit shipped with dlsched (package data)."""
    text = resources.files("dlsched.perf.calibration").joinpath(SHIPPED).read_text(encoding="utf-8")
    return CalibratedParams.from_json(json.loads(text), f"dlsched/perf/calibration/{SHIPPED}")


def resolve(spec: str | Path | CalibratedParams | None) -> CalibratedParams:
    """``None`` or "shipped": the packaged fit; a path: a user's ``perf calibrate --out`` file."""
    if isinstance(spec, CalibratedParams):
        return spec
    if spec is None or str(spec) == "shipped":
        return shipped()
    return CalibratedParams.load(spec)
