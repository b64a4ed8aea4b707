"""Policies by name, for the CLI and experiment scripts.

Each policy module registers its class with ``@register("name")``; the modules
listed in ``MODULES`` are imported on first use, so importing the registry stays
cheap.  A listed module that fails to import is an error (a policy must never go
missing silently): a later issue that adds a policy adds its module name here.
A policy class declares ``summary`` (one line), ``paper`` and ``options`` (a tuple
of ``PolicyOption``), which ``dlsched policies`` prints and ``--option`` checks.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from dlsched.errors import InputError, UnknownNameError
from dlsched.policies.base import JobPolicy
from dlsched.policies.options import PolicyOption, parse_options, resolved

_POLICIES: dict[str, type[JobPolicy]] = {}

# modules under dlsched.policies that define job policies; importing one registers what it holds
MODULES = ("fcfs", "crius.policy", "gavel.policy", "elasticflow.ls", "elasticflow.deadline", "sia",
           "gandiva.timeslice", "dally.policy", "tiresias", "gandiva.policy")
_loaded = False


def register(name: str):
    def deco(cls: type[JobPolicy]) -> type[JobPolicy]:
        _POLICIES[name] = cls
        return cls
    return deco


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for mod in MODULES:  # an ImportError here propagates: a broken policy module is a bug
        importlib.import_module(f"dlsched.policies.{mod}")
    _loaded = True


def _load_home(name: str) -> None:
    """Import only the module whose source registers ``name`` (``names.policy_home``);
    a policy run then pays for its own module's imports, not every policy's (scipy for the LPs)."""
    from dlsched.policies.names import policy_home

    home = policy_home(name)
    if home in MODULES:
        importlib.import_module(f"dlsched.policies.{home}")


def policy_names() -> list[str]:
    _load_all()
    return sorted(_POLICIES)


def policy_class(name: str) -> type[JobPolicy]:
    if name not in _POLICIES and not _loaded:
        _load_home(name)
    if name not in _POLICIES:
        _load_all()
    try:
        return _POLICIES[name]
    except KeyError:
        raise UnknownNameError("policy", name, sorted(_POLICIES), field="--policy") from None


def policy_options(name: str) -> tuple[PolicyOption, ...]:
    return tuple(getattr(policy_class(name), "options", ()))


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """What ``dlsched policies`` prints about one policy."""

    name: str
    summary: str
    paper: str
    options: tuple[PolicyOption, ...]


def policy_info(name: str) -> PolicyInfo:
    cls = policy_class(name)
    return PolicyInfo(name, getattr(cls, "summary", ""), getattr(cls, "paper", ""), policy_options(name))


def make_policy(name: str, **options) -> JobPolicy:
    """Build a fresh policy by registered name (e.g. 'fcfs', 'fcfs-backfill', 'crius').

    ``options`` are typed values (``parse_policy_options`` turns command-line text into them);
    each is range-checked against the policy's declaration, and unknown ones are rejected.
    """
    declared = policy_options(name)
    by_name = {o.name: o for o in declared}
    for key, value in options.items():
        if key not in by_name:  # same message as from the command line
            parse_options(name, declared, {key: ""})
        try:
            by_name[key].check(value)
        except InputError as e:
            raise InputError(f"bad option for policy '{name}': {e.reason}", field=e.field) from None
    return policy_class(name)(**options)


def used_options(name: str, chosen: dict[str, object]) -> dict[str, object]:
    """Every option of policy ``name`` with the value a run uses; written to summary.json."""
    return resolved(policy_options(name), chosen)
