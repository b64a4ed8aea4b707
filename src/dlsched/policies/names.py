"""Registered policy names without importing the policy modules.

``dlsched simulate --list`` must stay cheap (benchmarks/bench_startup.py), and importing the
policy modules pulls numpy and scipy (about 0.5 CPU s).  Every policy registers itself with a
literal ``@register("name")`` decorator, so the names can be read from the modules' source;
a test checks that this reading equals what importing the modules registers.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

_DECORATOR = re.compile(r"""^@register\(\s*["']([^"']+)["']\s*\)""", re.MULTILINE)


@functools.cache
def declared_policy_modules() -> dict[str, str]:
    """Each name given to ``@register`` -> the module of ``dlsched.policies`` that registers it.

    ``make_policy("fcfs")`` imports only that module this way: importing every policy module
    pulls scipy for the LP policies, about 0.4 CPU s that a FCFS run never needs.
    """
    folder = Path(__file__).resolve().parent
    homes: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        module = ".".join(path.relative_to(folder).with_suffix("").parts)
        for name in _DECORATOR.findall(path.read_text(encoding="utf-8")):
            homes.setdefault(name, module)
    return homes


def policy_home(name: str) -> str | None:
    """The module of ``dlsched.policies`` whose source registers ``name``, or None.

    The namesake module ("fcfs-backfill" -> fcfs.py, "gavel-admit" -> gavel/policy.py) is read
    first; only a name found there does not read every module's source (about 8 ms a run).
    """
    folder = Path(__file__).resolve().parent
    for guess in dict.fromkeys((name.replace("-", "_"), name.split("-", 1)[0])):
        if not guess.isidentifier():
            continue
        if len(guess) > 100:  # no module has such a name (and the file system refuses to look it up)
            continue
        for module in (guess, f"{guess}.policy"):
            path = folder.joinpath(*module.split(".")).with_suffix(".py")
            if path.is_file() and name in _DECORATOR.findall(path.read_text(encoding="utf-8")):
                return module
    return declared_policy_modules().get(name)


def declared_policy_names() -> list[str]:
    """Names given to ``@register`` in the modules of ``dlsched.policies``, sorted."""
    return sorted(declared_policy_modules())
