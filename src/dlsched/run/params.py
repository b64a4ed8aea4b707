"""What a run writes to ``summary.json`` under ``params``: the engine's and the jobs' parameters,
the policy's options, and the run's spec (from which ``RunSpec.from_dict`` reruns it)."""

from __future__ import annotations

import json
from pathlib import Path

from dlsched.errors import InputError
from dlsched.run.spec import RunSpec


def run_params(result_params: dict, info: dict, spec: RunSpec, policy_options: dict) -> dict:
    params = {**result_params, **info, "policy_options": policy_options}
    if spec.cluster.placement != "packed":
        params["placement"] = spec.cluster.placement
    from dlsched.run.paths import absolute

    params["spec"] = absolute(recorded_data(spec)).to_dict()  # reruns from any directory (run/paths.py)
    return params


def recorded_data(spec: RunSpec) -> RunSpec:
    """``spec`` naming the reference-data folder in effect (when there is one), as summary.json keeps it."""
    if spec.data is not None:
        return spec
    from dataclasses import replace

    from dlsched.shared_data import shared_dir

    found = shared_dir()
    return replace(spec, data=str(found.resolve())) if found.is_dir() else spec


def read_spec(path: str | Path) -> RunSpec:
    """A spec from a JSON file: a results folder's ``summary.json`` (its ``params.spec``), the
    folder itself, or a file holding a spec alone; a relative path in it that names a file beside
    it is read from there (``run/paths.py``)."""
    p = Path(path)
    if p.is_dir():
        p = p / "summary.json"
    try:
        text = p.read_text()
        doc = json.loads(text)
    except OSError as e:
        raise InputError(f"cannot read the run specification: {e.strerror}", file=str(p)) from None
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", file=str(p), line=e.lineno) from None
    prefix = ""
    if isinstance(doc, dict) and "params" in doc and "summary" in doc:
        doc = doc["params"].get("spec") if isinstance(doc["params"], dict) else None
        if doc is None:
            raise InputError("this summary.json holds no run specification (params.spec); it was "
                             "written by a run that recorded none", file=str(p), field="params.spec")
        prefix = "params.spec."
    try:
        spec = RunSpec.from_dict(doc, where=str(p))
    except InputError as e:
        field = prefix + e.field if e.field else None
        raise InputError(e.reason, file=str(p), line=_line_of(text, field), field=field) from None
    from dlsched.run.paths import relative_to

    return relative_to(spec, p.parent)  # a hand-written spec's relative paths: from its own folder


def _line_of(text: str, field: str | None) -> int | None:
    """The line of a dotted key path in a JSON text: each key looked for after its parent's."""
    if not field:
        return None
    at = 0
    for key in field.split("."):
        found = text.find(json.dumps(key) + ":", at)
        if found < 0:
            return None
        at = found
    return text.count("\n", 0, at) + 1
