"""Per-model communication overhead by network tier, taken from a measured or published table.

Why this exists: Dally's ArtISt-sim does not price placements from first
principles.  It calibrates an ASTRA-sim workload *per model* against a real
8-GPU NVSwitch machine and reports the outcome as Table I: communication time
as a percentage of compute time for 8 GPUs within one machine, one rack, or
spread across racks (Dally, sections III-B and IV-C).  Those figures are not
reachable by one alpha-beta model with one set of link figures (ResNet-50
costs 12% at both the machine and the rack tier while ResNet-18, whose
gradients are laid out much like ResNet-50's, goes from 7% to 116%; see
docs/perf-model.md), so a faithful Dally experiment has to use them as data,
exactly as ArtISt-sim does.  ``TierProfiledPerfModel`` does that: for a model
the profile lists, an allocation of two or more GPUs costs

    iteration = compute x (1 + overhead[tier of the allocation])

where compute is the base model's compute part for that allocation and the
tier is Dally's machine / rack / network.  One GPU has no communication.
Models the profile does not list are priced by the base model unchanged.

Simplification (stated in the docs): Table I is measured at 8 GPUs; the same
percentage is applied at every GPU count of that tier, as ArtISt-sim's per-model
sensitivity is a property of the model and tier, not of the count.

A profile is a CSV ``model,machine_pct,rack_pct,network_pct`` (optional
``params`` column for a size variant); the built-in ``dally-table1`` is
Table I itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dlsched.errors import InputError, UnknownNameError
from dlsched.inputfile import read_head
from dlsched.perf.base import IterCost, PerfModel
from dlsched.perf.placement.model import tier_name
from dlsched.perf.papers.reference import DALLY_TABLE1
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

TIER_COLUMNS = {"machine": "machine_pct", "rack": "rack_pct", "network": "network_pct"}
_EXACT_CACHE_MAX = 1 << 18

# Table I names its models as the paper does (mobilenet_v3, bert_large); the zoo resolves them.
BUILTIN = {"dally-table1": DALLY_TABLE1}


@dataclass(frozen=True, slots=True)
class TierOverhead:
    """Communication as a fraction of compute (0.12 = 12%) at each of Dally's tiers."""

    machine: float
    rack: float
    network: float

    def at(self, tier: str) -> float:
        return getattr(self, tier)


# Communication at a hundred times the compute time is far past any table measured; more is a unit slip.
MAX_OVERHEAD_PCT = 10_000.0


@dataclass(frozen=True)
class TierProfile:
    """Overheads keyed by (canonical zoo model name, size variant or None)."""

    name: str
    rows: dict[tuple[str, str | None], TierOverhead]

    def get(self, model: str, params: str | None) -> TierOverhead | None:
        canon = _canonical(model, params)
        if canon is None:
            return None
        return self.rows.get((canon, params)) or self.rows.get((canon, None))

    def models(self) -> list[str]:
        return sorted({m for m, _ in self.rows})

    @classmethod
    def builtin(cls, name: str) -> TierProfile:
        if name not in BUILTIN:
            raise UnknownNameError("tier profile", name, BUILTIN)
        return cls(name, {(get_model(m).name, None): TierOverhead(*(p / 100.0 for p in pcts))
                          for m, pcts in BUILTIN[name].items()})

    @classmethod
    def resolve(cls, spec: str | Path | TierProfile) -> TierProfile:
        """A built-in profile by name, or a CSV path."""
        if isinstance(spec, TierProfile):
            return spec
        if isinstance(spec, str) and spec in BUILTIN:
            return cls.builtin(spec)
        path = Path(spec)
        if not path.suffix and not path.exists():
            raise UnknownNameError("tier profile", str(spec), BUILTIN)
        return cls.load(path)

    @classmethod
    def load(cls, path: str | Path) -> TierProfile:
        from dlsched.workload.readers._common import csv_header, csv_rows

        source = str(path)
        read_head(Path(path), source, "tier profile CSV")
        cols = csv_header(Path(path), source)  # a column named twice is refused here
        need = ["model", *TIER_COLUMNS.values()]
        missing = [c for c in need if c not in cols]
        if missing:
            raise InputError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
                             f"a tier profile needs {','.join(need)} (params optional)", file=source, line=1)
        rows: dict[tuple[str, str | None], TierOverhead] = {}
        seen: dict[tuple[str, str | None], int] = {}
        for row in csv_rows(Path(path), source):
            row.check()  # too many or too few fields, bytes that are not UTF-8
            r, i = row.data, row.line
            name = (r.get("model") or "").strip()
            params = (r.get("params") or "").strip() or None
            if not name:
                raise InputError("empty model name", file=source, line=i, field="model")
            try:
                canon = get_model(name, params).name
            except UnknownNameError as e:
                # a known family with an unknown size (gpt + 99T) is the params column's fault
                family = params and any(k.startswith(name.lower() + "-") for k in e.known)
                raise InputError(e.reason, file=source, line=i, field="params" if family else "model") from None
            pcts = []
            for col in TIER_COLUMNS.values():
                raw = (r.get(col) or "").strip().rstrip("%").strip()
                try:
                    v = float(raw)
                except ValueError:
                    raise InputError(f"not a number: {r.get(col)!r}", file=source, line=i, field=col) from None
                if not (v >= 0 and v != float("inf")):  # NaN and infinity too
                    raise InputError(f"must be a finite percentage >= 0, got {raw}", file=source, line=i,
                                     field=col)
                if v > MAX_OVERHEAD_PCT:
                    raise InputError(f"implausible overhead {raw}% (at most {MAX_OVERHEAD_PCT:g}%)", file=source,
                                     line=i, field=col)
                pcts.append(v / 100.0)
            key = (canon, params)
            if key in seen:
                raise InputError(f"{canon}{' ' + params if params else ''} already given on line {seen[key]}",
                                 file=source, line=i, field="model")
            seen[key] = i
            rows[key] = TierOverhead(*pcts)
        if not rows:
            raise InputError("no rows", file=source)
        return cls(source, rows)


def _canonical(model: str, params: str | None) -> str | None:
    try:
        return get_model(model, params).name
    except UnknownNameError:
        return None


class TierProfiledPerfModel(PerfModel):
    """A base model whose communication, for the profiled models, comes from a tier table."""

    def __init__(self, base: PerfModel, profile: str | Path | TierProfile):
        super().__init__(base.cluster)
        self.base = base
        self.spec_keyed = base.spec_keyed  # it adds only a per-model table
        self.profile = TierProfile.resolve(profile)
        self._exact: dict = {}
        self._overheads: dict = {}

    def overhead(self, job: JobSpec) -> TierOverhead | None:
        key = (job.model, job.params)
        if key not in self._overheads:
            self._overheads[key] = self.profile.get(job.model, job.params)
        return self._overheads[key]

    def price(self, job: JobSpec, gpus: Sequence[int], plan=None) -> IterCost:
        over = self.overhead(job)
        gl = tuple(gpus.tolist() if hasattr(gpus, "tolist") else gpus)
        if over is None or len(gl) <= 1:
            return self.base.price(job, gpus, plan)
        key = (job.model, job.params, job.batch_size, gl)
        hit = self._exact.get(key)
        if hit is not None:
            return hit
        compute = self.base.price(job, gpus, plan).compute
        comm = compute * over.at(tier_name(self.cluster.tier(list(gl))))
        cost = IterCost(compute + comm, compute, comm)
        if len(self._exact) >= _EXACT_CACHE_MAX:
            self._exact.clear()
        self._exact[key] = cost
        return cost

    def comm_breakdown(self, job: JobSpec, gpus: Sequence[int]) -> dict:
        """Same keys as ``PlacementPerfModel.comm_breakdown``; a profiled overhead is all exposed."""
        gl = list(gpus.tolist() if hasattr(gpus, "tolist") else gpus)
        if self.overhead(job) is None and hasattr(self.base, "comm_breakdown"):
            return self.base.comm_breakdown(job, gl)
        cost = self.price(job, gl)
        return {"compute_s": cost.compute, "comm_total_s": cost.comm, "comm_exposed_s": cost.comm,
                "iteration_s": cost.total, "tier": tier_name(self.cluster.tier(gl))}

    def packing(self, jobs, gpu_type: str):
        return self.base.packing(jobs, gpu_type)

    def __getattr__(self, name):
        # packing(), observe(), table() ...: whatever the base model offers beyond the contract
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def describe(self) -> dict:
        return {**self.base.describe(), "tier_profile": self.profile.name}
