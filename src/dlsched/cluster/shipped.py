"""The cluster specs shipped with the package: their names, and the specs read without pydantic.

Listing stays cheap (no pydantic, no numpy); ``load_shipped`` reads a shipped spec into the plain
dataclasses of ``plainspec`` (the test suite validates every shipped spec against the schema).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dlsched.cluster.plainspec import PlainClusterSpec


@lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    folder = resources.files("dlsched.cluster") / "specs"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml")))


def shipped_specs() -> list[str]:
    """Names of the cluster specs that ship with the package."""
    return list(_names())


def shipped_name(name_or_path) -> str | None:
    """The shipped spec ``name_or_path`` names, or None where ``load_spec`` would read a file
    (a .yaml/.yml path or an existing file wins over a shipped name, as there)."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return None
    name = str(name_or_path)
    return name if name in _names() else None


def load_shipped(name_or_path) -> PlainClusterSpec | None:
    """The shipped spec ``name_or_path`` names, without the schema; None if it names none."""
    name = shipped_name(name_or_path)
    if name is None:
        return None
    import yaml

    from dlsched.cluster.plainspec import plain_spec

    text = (resources.files("dlsched.cluster") / "specs" / f"{name}.yaml").read_text()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML was built with it
    return plain_spec(yaml.load(text, Loader=loader), f"{name}.yaml")
