"""Communication policies by name (``--comm``): the ``communication policy`` ``Registry``.

A built-in or plugin is a factory (a class or a function) whose ``options`` (``PolicyOption``s,
keywords of the factory) say which run settings it takes: ``levels`` and ``reserved`` (the
fabric's strict-priority levels, ``--comm-levels`` / ``--comm-reserved``) and ``seed``.  Plugins
come from the ``dlsched.comm_policies`` entry-point group or a ``file.py:Factory`` /
``module:Factory`` reference (``dlsched.registry``).
"""

from __future__ import annotations

import inspect
from typing import Callable

from dlsched.comm.base import CommPolicy, usable_levels
from dlsched.policies.options import PolicyOption
from dlsched.registry import Registry

_LEVELS = PolicyOption("levels", int, 8, "strict-priority levels of the fabric (--comm-levels)", minimum=1)
_RESERVED = PolicyOption("reserved", int, 2, "levels kept for other traffic (--comm-reserved)", minimum=0)
_SEED = PolicyOption("seed", int, 0, "seed of the policy's own random choices (the run's --seed)", minimum=0)

# name -> (factory, summary, options); the factories' modules are imported on first use
_BUILTINS: dict[str, tuple[str, str, tuple[PolicyOption, ...]]] = {
    "crux": ("dlsched.comm.crux:crux_full",
             "CRUX (SIGCOMM '24): a path per job, priorities P=kI, DAG compression to K levels",
             (_LEVELS, _RESERVED, _SEED)),
    "crux-pa": ("dlsched.comm.crux:crux_pa",
                "CRUX ablation (the paper's CRUX-PA): priorities and compression, ECMP paths",
                (_LEVELS, _RESERVED, _SEED)),
    "crux-ps": ("dlsched.comm.crux:crux_ps", "CRUX ablation: path selection only", (_LEVELS, _RESERVED, _SEED)),
    "crux-ps-pa": ("dlsched.comm.crux:crux_ps_pa",
                   "CRUX ablation: path selection and priority assignment, uncompressed (a level per job)",
                   (_LEVELS, _RESERVED, _SEED)),
    # ours: the same policies with a path per flow instead of the paper's path per job (docs/crux.md)
    "crux-flow": ("dlsched.comm.crux:crux_flow", "CRUX with a path per flow (ours; the paper: one per job)",
                  (_LEVELS, _RESERVED, _SEED)),
    "crux-ps-flow": ("dlsched.comm.crux:crux_ps_flow", "crux-ps with a path per flow (ours)",
                     (_LEVELS, _RESERVED, _SEED)),
    "crux-ps-pa-flow": ("dlsched.comm.crux:crux_ps_pa_flow", "crux-ps-pa with a path per flow (ours)",
                        (_LEVELS, _RESERVED, _SEED)),
    "taccl-flow": ("dlsched.comm.taccl:taccl_flow", "TACCL* with a path per flow (ours; CRUX's TACCL*: per job)",
                   (_LEVELS, _RESERVED)),
    "sincronia": ("dlsched.comm.sincronia:Sincronia",
                  "Sincronia (SIGCOMM '18): BSSI order, exponential level classes", (_LEVELS, _RESERVED)),
    "varys": ("dlsched.comm.varys:Varys",
              "Varys (SIGCOMM '14): smallest effective bottleneck first, MADD rates", (_LEVELS, _RESERVED)),
    "cassini": ("dlsched.comm.cassini:Cassini",
                "CASSINI (NSDI '24): compatible jobs staggered onto distinct levels", (_LEVELS, _RESERVED)),
    "ecmp": ("dlsched.comm.ecmp:Ecmp", "ECMP hashing, no priorities (the default fabric)", ()),
    "taccl": ("dlsched.comm.taccl:Taccl",
              "TACCL* (NSDI '23, as CRUX extends it): least-congested paths, longer distance first",
              (_LEVELS, _RESERVED)),
}


def _check(obj) -> str | None:
    if inspect.isclass(obj) and not callable(getattr(obj, "assign", None)):
        return "it has no assign(view) method (see dlsched.comm.base.CommPolicy)"
    return None if callable(obj) else f"{obj!r} cannot be called to build a policy"


def _factories(module) -> list[str]:
    return sorted(n for n, o in vars(module).items()
                  if inspect.isclass(o) and o.__module__ == module.__name__ and callable(getattr(o, "assign", None)))


COMM: Registry[Callable[..., CommPolicy]] = Registry("communication policy", "dlsched.comm_policies", "--comm",
                                                    check=_check, pick=_factories)
for _name, (_target, _summary, _) in _BUILTINS.items():
    COMM.add(_name, _target, _summary)

COMM_POLICIES = sorted(_BUILTINS)  # the built-ins; ``COMM.names()`` adds installed plugins


def comm_options(name: str) -> tuple[PolicyOption, ...]:
    """The run settings a communication policy takes (``dlsched policies`` prints them)."""
    if name in _BUILTINS:
        return _BUILTINS[name][2]
    return tuple(getattr(COMM.get(name), "options", ()))


def describe(name: str) -> str:
    if name in _BUILTINS:
        return _BUILTINS[name][1]
    factory = COMM.get(name)
    return getattr(factory, "summary", "") or (inspect.getdoc(factory) or "").split("\n")[0]


def make_comm_policy(name: str, levels: int = 8, reserved: int = 2, seed: int = 0) -> CommPolicy:
    """Build a communication policy, giving it the settings its ``options`` declare."""
    factory = COMM.get(name)
    declared = {o.name for o in comm_options(name)}
    if "levels" in declared:
        usable_levels(levels, reserved)  # refuse a fabric with no level left before the run starts
    given = {"levels": levels, "reserved": reserved, "seed": seed}
    return factory(**{k: v for k, v in given.items() if k in declared})
