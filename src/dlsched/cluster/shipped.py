"""The cluster specs shipped with the package: their names, and the specs read without pydantic.

Listing stays cheap (no pydantic, no numpy); ``load_shipped`` reads a shipped spec into the plain
dataclasses of ``plainspec`` from ``specs/shipped.json``, a plain-data copy of the YAML files (no
YAML parser on start-up).  The test suite validates every shipped spec against the schema and
checks the JSON equals the YAML files.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from dlsched.registry import Registry

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
    if path.suffix in (".yaml", ".yml") or path_given(path):
        return None
    name = str(name_or_path)
    return name if name in _names() else None


def _check_plugin(obj) -> str | None:
    ok = isinstance(obj, (str, Path)) or hasattr(obj, "read_text") or callable(obj)
    return None if ok else f"{obj!r} is neither a YAML spec's path nor a function returning one"


# Clusters from other distributions: entry-point group ``dlsched.clusters``, each naming a YAML spec
# (a path, an importlib.resources file, or a function returning either).  The shipped specs are
# not in it: they are read without importing anything (``load_shipped``).
CLUSTERS: Registry = Registry("cluster spec", "dlsched.clusters", "--cluster", check=_check_plugin)


def plugin_spec_file(name: str):
    """The YAML file of an installed cluster plugin, or None when ``name`` is not one."""
    if name not in CLUSTERS.plugins():
        return None
    obj = CLUSTERS.get(name)
    got = obj() if callable(obj) and not isinstance(obj, (str, Path)) else obj
    return Path(got) if isinstance(got, str) else got


def cluster_names() -> list[str]:
    """Shipped specs, then installed cluster plugins."""
    return shipped_specs() + sorted(n for n in CLUSTERS.plugins() if n not in _names())


def path_given(path: Path) -> bool:
    """True when ``path`` exists, or is a name the system refuses to look up (read as a file, then refused)."""
    try:
        return path.exists()
    except OSError:  # a name the system refuses (too long): a file path, which load_spec reports
        return True


SIDECAR = "shipped.json"  # in specs/: every shipped YAML as plain data, written by write_sidecar()


@lru_cache(maxsize=1)
def _sidecar() -> dict:
    # JSON rather than YAML: importing PyYAML costs about 0.015-0.025 CPU s of a run's start-up
    # (issue 21); tests/cluster/test_plainspec.py fails if this file differs from the YAML files
    import json

    return json.loads((resources.files("dlsched.cluster") / "specs" / SIDECAR).read_text())


def load_shipped(name_or_path) -> PlainClusterSpec | None:
    """The shipped spec ``name_or_path`` names, without the schema; None if it names none."""
    name = shipped_name(name_or_path)
    if name is None:
        return None
    from dlsched.cluster.plainspec import plain_spec

    return plain_spec(_sidecar()[name], f"{name}.yaml")


def read_shipped_yaml() -> dict:
    """Every shipped spec as its YAML file reads (what the sidecar must hold)."""
    import yaml

    folder = resources.files("dlsched.cluster") / "specs"
    return {name: yaml.safe_load((folder / f"{name}.yaml").read_text()) for name in _names()}


def write_sidecar(folder: Path) -> Path:
    """Write ``SIDECAR`` into ``folder`` (the package's specs/ folder) from the YAML files:
    ``python -c 'from pathlib import Path; from dlsched.cluster.shipped import write_sidecar;
    write_sidecar(Path("src/dlsched/cluster/specs"))'`` after editing a shipped spec."""
    import json

    out = Path(folder) / SIDECAR
    out.write_text(json.dumps(read_shipped_yaml(), indent=1, sort_keys=True) + "\n")
    return out
