"""Registered policy names without importing the policy modules.

``dlsched simulate --list`` must stay cheap (benchmarks/bench_startup.py), and importing the
policy modules pulls numpy and scipy (about 0.5 CPU s).  Every policy registers itself with a
literal ``@register("name")`` decorator, so the names can be read from the modules' source;
a test checks that this reading equals what importing the modules registers.
"""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

_DECORATOR = re.compile(r"""^@register\(\s*["']([^"']+)["']\s*\)""", re.MULTILINE)


def declared_policy_names() -> list[str]:
    """Names given to ``@register`` in the modules of ``dlsched.policies``, sorted."""
    folder = Path(__file__).resolve().parent
    names: set[str] = set()
    for mod in pkgutil.iter_modules([str(folder)]):
        path = folder / f"{mod.name}.py"
        if path.is_file():
            names.update(_DECORATOR.findall(path.read_text(encoding="utf-8")))
    return sorted(names)
