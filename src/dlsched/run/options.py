"""Policy options given as ``KEY=VALUE`` text (``--option``), typed per policy."""

from __future__ import annotations


def policy_options(option_pairs: list[str], names: list[str]) -> dict[str, dict]:
    """Typed ``--option`` values per policy name (InputError on an unknown key or a bad value);
    a plain KEY goes to every policy declaring it, POLICY.KEY to that one."""
    from dlsched.policies.options import assign_options, split_pairs
    from dlsched.policies.registry import policy_options as declared

    return assign_options(split_pairs(option_pairs), {n: declared(n) for n in names})
