"""Names of the cluster specs shipped with the package (no pydantic, no numpy: listing stays cheap)."""

from __future__ import annotations

from importlib import resources


def shipped_specs() -> list[str]:
    """Names of the cluster specs that ship with the package."""
    folder = resources.files("dlsched.cluster") / "specs"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))
