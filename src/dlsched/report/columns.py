"""Column-at-a-time CSV formatting, byte for byte what ``csv.writer`` writes for ``_fmt``'d rows.

A million-job run writes tens of millions of fields; formatting each through a Python
function call (``repr(round(v, 6))``, then the csv module) cost a quarter of the command.
Here a column of floats is rounded and turned into text by numpy, as whole arrays, and
every value the fast path cannot vouch for exactly goes through the Python expression
instead, so the output cannot differ:

- ``round(x, 6)`` is the double nearest to ``k / 10**6``, where ``k`` is ``x * 10**6``
  rounded half-even on its exact value.  numpy's ``rint(x * 1e6)`` gives that ``k`` unless
  the product's own rounding error could cross a half: those values (distance to a half
  within the error bound) take the Python path.  ``k / 1e6`` in IEEE division is then
  exactly the nearest double to the decimal.
- ``repr`` of that double is the decimal ``k * 10**-6`` itself with trailing zeros cut
  (at least one digit after the point) when ``k`` has at most 15 digits (any such decimal
  round-trips, so no shorter one names the same double) and ``|x| >= 1e-4`` (below,
  ``repr`` switches to exponent form).  Zero is "0.0"; a negative zero takes the Python path.
- A column holding anything but floats and None (ints, strings, a stray int among floats)
  is formatted value by value as before.
"""

from __future__ import annotations

import csv
import io
from itertools import repeat

import numpy as np

_SPECIAL = frozenset(',"\r\n')  # the csv module decides how such a string is quoted
_S = np.dtypes.StringDType()


def fmt_value(v):
    """One field as the writer before this module formatted it (``None`` empty, floats rounded)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(round(v, 6))
    return v


def _quoted(texts: list[str]) -> list[str]:
    """``texts`` with each field the csv module would quote written its way."""
    if not any(_SPECIAL.intersection(s) for s in texts):
        return texts
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    out = []
    for s in texts:
        if _SPECIAL.intersection(s):
            buf.seek(0)
            buf.truncate()
            w.writerow([s, ""])  # two fields: a lone empty field would be quoted as a row of its own
            s = buf.getvalue()[:-2]
        out.append(s)
    return out


def _text(v) -> str:
    """What ``csv.writer`` writes for ``fmt_value(v)``, before quoting."""
    x = fmt_value(v)
    return x if isinstance(x, str) else str(x)


def float_texts(values: list) -> list[str]:
    """``repr(round(v, 6))`` of each float, "" for None (``values`` holds only these two)."""
    x = np.array(values, dtype=float)  # None becomes NaN: finite values only take the fast path
    with np.errstate(invalid="ignore", over="ignore"):
        y = x * 1e6
        k = np.rint(y)
        half = np.abs(np.abs(y - np.trunc(y)) - 0.5)
        ak = np.abs(k)
        fast = (np.isfinite(y) & (ak < 1e15) & (half > np.abs(y) * 4e-16 + 1e-9)
                & ((ak >= 100) | ((k == 0) & ~np.signbit(x))))
    ik = np.where(fast, ak, 0).astype(np.int64)
    whole = (ik // 1_000_000).astype(_S)
    frac = np.strings.rstrip(np.strings.slice((ik % 1_000_000 + 1_000_000).astype(_S), 1, None), "0")
    frac = np.where(frac == "", "0", frac)
    s = np.strings.add(np.strings.add(whole, "."), frac)
    s = np.where(k < 0, np.strings.add("-", s), s)
    out = s.tolist()
    for i in np.flatnonzero(~fast).tolist():
        v = values[i]
        out[i] = "" if v is None else repr(round(v, 6))
    return out


def column_texts(values: list) -> list[str]:
    """Each value of one column as its CSV field text (quoted where the csv module would)."""
    types = set(map(type, values))
    if types <= {float, type(None)} and float in types:
        return float_texts(values)
    if types == {int}:
        return list(map(str, values))
    if types == {str}:
        return _quoted(values)
    return _quoted(list(map(_text, values)))


def write_rows(f, columns: list[list]) -> None:
    """Write rows given as columns of equal length (one line each, "\\n" after every line)."""
    if not columns or not columns[0]:
        return
    texts = [column_texts(c) for c in columns]
    f.write("\n".join(map(",".join, zip(*texts))))
    f.write("\n")
