"""Typed, validated policy options: declared once per policy class, read by the registry and the CLI.

A policy class lists its options as ``options = (PolicyOption(...), ...)``; each name is a
keyword argument of its constructor (a test checks the defaults agree).  ``--option
key=value`` on the command line arrives here as text and leaves as the typed value, or as an
``InputError`` naming the option; unknown keys are rejected with the list of known ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from dlsched.errors import InputError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class PolicyOption:
    """One constructor keyword of a policy, as the command line offers it."""

    name: str
    type: type  # int, float, bool or str
    default: object
    help: str
    minimum: float | None = None  # inclusive lower bound (int/float)
    positive: bool = False  # strictly greater than zero (int/float)
    optional: bool = False  # "none" is accepted and means None

    def parse(self, text: str, field: str = "--option"):
        """The typed value of ``text``, or an InputError saying what is wrong with it."""
        raw = text.strip()
        if self.optional and raw.lower() in ("none", "null", ""):
            return None
        if self.type is bool:
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise InputError(f"{self.name}: not a boolean: {raw!r} (use true or false)", field=field)
        if self.type is str:
            return raw
        try:
            value = self.type(raw)
        except ValueError:
            kind = "a whole number" if self.type is int else "a number"
            raise InputError(f"{self.name}: not {kind}: {raw!r}", field=field) from None
        self.check(value, field)
        return value

    def check(self, value, field: str = "--option") -> None:
        """Range checks shared by parsed text and values passed in code."""
        if value is None and self.optional:
            return
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{self.name}: must be a finite number, got {value}", field=field)
        if self.positive and value <= 0:
            raise InputError(f"{self.name}: must be positive, got {value}", field=field)
        if self.minimum is not None and value < self.minimum:
            raise InputError(f"{self.name}: must be at least {self.minimum:g}, got {value}", field=field)

    def describe_default(self) -> str:
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)


def split_pairs(pairs: Iterable[str], field: str = "--option") -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; a pair without '=' or a repeated key is an error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"expected KEY=VALUE, got {pair!r}", field=field)
        if key in out:
            raise InputError(f"option {key!r} given twice", field=field)
        out[key] = value
    return out


def parse_options(policy: str, declared: tuple[PolicyOption, ...], given: dict[str, str],
                  field: str = "--option") -> dict[str, object]:
    """Typed values for the options ``given`` as text; unknown keys name the known ones."""
    by_name = {o.name: o for o in declared}
    out = {}
    for key, text in given.items():
        opt = by_name.get(key)
        if opt is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise InputError(f"policy '{policy}' has no option {key!r}; its options: {known}", field=field)
        try:
            out[key] = opt.parse(text, field)
        except InputError as e:
            raise InputError(f"bad option for policy '{policy}': {e.reason}", field=field) from None
    return out


def resolved(declared: tuple[PolicyOption, ...], chosen: dict[str, object]) -> dict[str, object]:
    """Every declared option with the value a run uses (the default unless chosen)."""
    return {o.name: chosen.get(o.name, o.default) for o in declared}


def assign_options(given: dict[str, str], declared: dict[str, tuple[PolicyOption, ...]],
                   field: str = "--option") -> dict[str, dict[str, object]]:
    """Typed options per policy for a run of several policies (``compare``) or one (``simulate``).

    A key ``policy.name`` targets one policy; a plain ``name`` goes to every policy that
    declares it, and is an error when none does (naming the options they have).
    """
    per: dict[str, dict[str, str]] = {p: {} for p in declared}
    for key, text in given.items():
        target, dot, name = key.rpartition(".")
        if dot:
            if target not in declared:
                raise InputError(f"option {key!r} names policy {target!r}, which is not in this run "
                                 f"({', '.join(declared)})", field=field)
            per[target][name] = text
            continue
        owners = [p for p, opts in declared.items() if any(o.name == name for o in opts)]
        if not owners:
            if len(declared) == 1:
                (policy, opts), = declared.items()
                parse_options(policy, opts, {name: text}, field)  # raises with the known options
            known = sorted({f"{p}.{o.name}" for p, opts in declared.items() for o in opts})
            raise InputError(f"no policy in this run has option {name!r}; their options: "
                             f"{', '.join(known) or 'none'}", field=field)
        for p in owners:
            per[p][name] = text
    return {p: parse_options(p, declared[p], per[p], field) for p in declared}
