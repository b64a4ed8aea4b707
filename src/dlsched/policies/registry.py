"""Policies by name, for the CLI and experiment scripts: the ``policy`` ``Registry``.

Each built-in policy module registers its class with ``@register("name")``; a name is looked up by
importing only the module whose source registers it (``names.policy_home``), so importing the
registry stays cheap.  ``MODULES`` lists every built-in module; one that fails to import is an
error (a policy must never go missing silently).  Plugins come from the ``dlsched.policies``
entry-point group, or from a reference where a name is expected: ``--policy path/to/file.py:Class``
or ``--policy package.module:Class`` (``dlsched.registry``).  A policy class declares ``summary``
(one line), ``paper`` and ``options`` (a tuple of ``PolicyOption``), which ``dlsched policies``
prints and ``--option`` checks.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.errors import InputError
from dlsched.policies.options import PolicyOption, parse_options, resolved
from dlsched.registry import Entry, Registry

if TYPE_CHECKING:  # policies.base pulls numpy: listing names must not (benchmarks/bench_startup.py)
    from dlsched.policies.base import JobPolicy

# modules under dlsched.policies that define job policies; importing one registers what it holds
MODULES = ("fcfs", "crius.policy", "gavel.policy", "elasticflow.ls", "elasticflow.deadline", "sia",
           "gandiva.timeslice", "dally.policy", "tiresias", "gandiva.policy")
_loaded = False


def _check(obj) -> str | None:
    if not inspect.isclass(obj):
        return f"{obj!r} is not a class"
    if not callable(getattr(obj, "schedule", None)):
        return "it has no schedule(view, now) method (see dlsched.policies.base.JobPolicy)"
    return None


def _policy_classes(module) -> list[str]:
    """The policy classes a plugin file defines itself (not those it imports)."""
    return sorted(name for name, obj in vars(module).items()
                  if inspect.isclass(obj) and obj.__module__ == module.__name__ and _check(obj) is None)


def _declared() -> dict[str, str]:
    from dlsched.policies.names import declared_policy_modules

    return {name: f"dlsched.policies.{module}" for name, module in declared_policy_modules().items()}


def _home(name: str) -> str | None:
    from dlsched.policies.names import policy_home

    home = policy_home(name)
    return None if home is None else f"dlsched.policies.{home}"


POLICIES: Registry[type['JobPolicy']] = Registry("policy", "dlsched.policies", "--policy", check=_check,
                                               pick=_policy_classes, discover=_declared, locate=_home)
register = POLICIES.register


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for mod in MODULES:  # an ImportError here propagates: a broken policy module is a bug
        importlib.import_module(f"dlsched.policies.{mod}")
    _loaded = True


def policy_names() -> list[str]:
    """Every policy name: the built-ins, then installed plugins (``dlsched.policies`` entry points)."""
    _load_all()
    return POLICIES.names()


def policy_class(name: str) -> type[JobPolicy]:
    """The class of a registered name, an installed plugin, or a ``file.py:Class`` /
    ``module:Class`` reference."""
    return POLICIES.get(name)


def policy_entry(name: str) -> Entry:
    """Where policy ``name`` comes from and how to load it again (for provenance)."""
    return POLICIES.entry(name)


def policy_options(name: str) -> tuple[PolicyOption, ...]:
    return tuple(getattr(policy_class(name), "options", ()))


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """What ``dlsched policies`` prints about one policy."""

    name: str
    summary: str
    paper: str
    options: tuple[PolicyOption, ...]
    origin: str = "built-in"  # or "entry point", "file", "module"
    source: str = ""          # how to load it again


def policy_info(name: str) -> PolicyInfo:
    cls = policy_class(name)
    entry = policy_entry(name)
    return PolicyInfo(name, getattr(cls, "summary", ""), getattr(cls, "paper", ""), policy_options(name),
                      entry.origin, entry.source)


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
