"""argparse value types that refuse what a run cannot use, before any work starts.

Each returns the parsed value or raises ``argparse.ArgumentTypeError``, which argparse turns
into a usage line naming the flag (exit status 2): no traceback, no NaN reaching a result.
"""

from __future__ import annotations

import argparse
import math


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _bounded(parse, low, strict: bool, what: str):
    """An argparse type: ``parse(text)``, then greater than ``low`` (``strict``) or at least it."""
    def check(text: str):
        value = parse(text)
        if value < low or (strict and value == low):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    return check


positive_int = _bounded(_whole, 1, False, "at least 1")
non_negative_int = _bounded(_whole, 0, False, "0 or more")
positive_float = _bounded(_number, 0.0, True, "positive")  # finite and above zero
non_negative_float = _bounded(_number, 0.0, False, "0 or more")  # finite and at least zero
