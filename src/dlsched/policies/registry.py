"""Policies by name, for the CLI and experiment scripts.

Each policy module registers its class with ``@register("name")``; modules
are imported lazily from ``_MODULES`` so that importing the registry stays cheap.
"""

from __future__ import annotations

import importlib

from dlsched.errors import UnknownNameError
from dlsched.policies.base import JobPolicy

_POLICIES: dict[str, type[JobPolicy]] = {}

# modules that define policies; importing one registers what it holds
_MODULES = ["fcfs", "crius", "gavel", "elasticflow", "gandiva", "tiresias", "dally", "timeslice"]


def register(name: str):
    def deco(cls: type[JobPolicy]) -> type[JobPolicy]:
        _POLICIES[name] = cls
        return cls
    return deco


def _load_all() -> None:
    for mod in _MODULES:
        try:
            importlib.import_module(f"dlsched.policies.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"dlsched.policies.{mod}":
                raise


def policy_names() -> list[str]:
    _load_all()
    return sorted(_POLICIES)


def make_policy(name: str, **options) -> JobPolicy:
    """Build a fresh policy by registered name (e.g. 'fcfs', 'fcfs-backfill', 'crius')."""
    _load_all()
    try:
        cls = _POLICIES[name]
    except KeyError:
        raise UnknownNameError("policy", name, _POLICIES) from None
    return cls(**options)
