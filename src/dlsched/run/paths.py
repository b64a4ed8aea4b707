"""The file paths a spec names, made independent of the working directory.

A spec names files in seven places, and the reference-data folder (``data``): the trace, a jobs file, a cluster YAML, a tier-profile CSV,
throughput tables, calibrated parameters, and plugin references (``file.py:Attr`` as a policy,
communication policy or perf model).  ``summary.json`` keeps its spec with each of them
absolute (``absolute``), so ``dlsched simulate --spec DIR/summary.json`` reruns from any
directory; a relative path in a spec read from a file is taken from that file's folder where a
file is there (``relative_to``), as a hand-written spec beside its trace expects, and from the
working directory otherwise.  Names (a shipped cluster, a built-in profile, a registered policy)
are not paths and stay as they are: only a string that names an existing file is rewritten.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Callable

from dlsched.run.spec import RunSpec


def _ref_path(text: str) -> tuple[str, str]:
    """(path, suffix) of a plugin reference ``path.py:Attr``; (text, "") for a plain path."""
    head, sep, attr = text.rpartition(":")
    if sep and head.endswith(".py") and attr.isidentifier():
        return head, sep + attr
    return text, ""


def _rewrite(spec: RunSpec, fix: Callable[[str], str | None], base_dir: Path | None = None) -> RunSpec:
    def one(value):
        if not isinstance(value, str):
            return value
        path, tail = _ref_path(value)
        new = fix(path)
        return value if new is None else new + tail

    wl, cl, perf, pol, net = spec.workload, spec.cluster, spec.perf, spec.policy, spec.network
    values = [wl.trace, wl.jobs_file, cl.name, perf.model, perf.tier_profile, perf.params, pol.name, net.comm,
              *(perf.throughputs if isinstance(perf.throughputs, list) else [perf.throughputs])]
    data = spec.data
    if data is not None and not os.path.isabs(data) and base_dir is not None and (base_dir / data).is_dir():
        data = os.path.normpath(os.path.abspath(base_dir / data))
    if data == spec.data and all(one(v) == v for v in values):  # nothing to rewrite: no new spec
        return spec
    throughputs = [one(t) for t in perf.throughputs] if isinstance(perf.throughputs, list) else one(perf.throughputs)
    return replace(
        spec,
        workload=replace(wl, trace=one(wl.trace), jobs_file=one(wl.jobs_file)),
        cluster=replace(cl, name=one(cl.name)),
        perf=replace(perf, model=one(perf.model), tier_profile=one(perf.tier_profile), throughputs=throughputs,
                     params=one(perf.params)),
        policy=replace(pol, name=one(pol.name)),
        network=replace(net, comm=one(net.comm)), data=data)


def absolute(spec: RunSpec, base: str | Path | None = None) -> RunSpec:
    """Every relative path naming an existing file (from ``base``, default the working directory)
    made absolute."""
    root = Path(base) if base is not None else Path.cwd()

    def fix(path: str) -> str | None:
        if os.path.isabs(path) or not (root / path).is_file():
            return None
        return os.path.normpath(os.path.abspath(root / path))
    return _rewrite(spec, fix, root)


def relative_to(spec: RunSpec, folder: str | Path) -> RunSpec:
    """Relative paths naming a file in ``folder`` (a spec file's own) made absolute from there."""
    return absolute(spec, folder)
