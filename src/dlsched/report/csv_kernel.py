"""CSV rows written by compiled code (numba): the bytes ``columns.write_rows``'s numpy path writes.

``columns`` decides every field as before, in numpy and Python: which floats take the fast path
(``round(x, 6)``'s integer ``k`` and its sign, the same expressions) and the Python text of every
other field (strings quoted as the csv module quotes them, slow floats, None).  What the numpy path
then builds as NUL-padded byte matrices per column, concatenated and stripped of their NULs (most
of a million-row file's writing time), is here one pass over the rows:

- a fast float: ``-`` if negative, the digits of ``k // 10**6`` ("0" for none), ``.``, the six
  digits of ``k % 10**6`` with trailing zeros cut, one kept;
- an int (``|v| < 10**18``): ``-`` if negative, its digits;
- anything else: its text, copied from a pool of bytes.

Importing this module imports numba (about 0.5 s, or a few seconds to compile once): ``columns``
uses it where numba is loaded already or a file has many rows.
"""

from __future__ import annotations

import numpy as np

from dlsched.numba_cache import compiled

FLOAT, INT, TEXT = 0, 1, 2


@compiled
def _digits(v, out, k):
    """Decimal digits of non-negative ``v`` at ``out[k:]``; returns the end."""
    if v == 0:
        out[k] = 48
        return k + 1
    m = 0
    w = v
    while w > 0:
        w //= 10
        m += 1
    for i in range(k + m - 1, k - 1, -1):
        out[i] = 48 + v % 10
        v //= 10
    return k + m


@compiled
def rows(kinds, num, fast, offs, pool, out):
    """Rows of ``len(kinds)`` fields into ``out`` (each row ended by a newline); the bytes written.

    Column ``c``: ``num[c]`` holds a fast float's ``|k|`` or an int's value, ``fast[c]`` 1 (a fast
    float, positive), 2 (a fast float, negative) or 0 (the text ``pool[offs[c, i]:offs[c, i + 1]]``)."""
    cols, n = num.shape
    k = 0
    for i in range(n):
        for c in range(cols):
            if c:
                out[k] = 44
                k += 1
            kind = kinds[c]
            if kind == FLOAT and fast[c, i]:
                if fast[c, i] == 2:
                    out[k] = 45
                    k += 1
                v = num[c, i]
                k = _digits(v // 1000000, out, k)
                out[k] = 46
                k += 1
                frac = v % 1000000
                last = k  # at least one digit after the point
                p = 100000
                for _ in range(6):
                    d = frac // p
                    out[k] = 48 + d
                    k += 1
                    frac -= d * p
                    p //= 10
                    if d:
                        last = k
                k = last if last > k - 6 else k - 5
            elif kind == INT:
                v = num[c, i]
                if v < 0:
                    out[k] = 45
                    k += 1
                    v = -v
                k = _digits(v, out, k)
            else:
                for j in range(offs[c, i], offs[c, i + 1]):
                    out[k] = pool[j]
                    k += 1
        out[k] = 10
        k += 1
    return k


def write(f, kinds: list[int], num: np.ndarray, fast: np.ndarray, offs: np.ndarray, pool: bytes) -> None:
    n = num.shape[1]
    out = np.empty(n * (21 * len(kinds) + 1) + len(pool), np.uint8)  # a field's digits: 21 bytes at most
    end = rows(np.asarray(kinds, np.int64), num, fast, offs, np.frombuffer(pool, np.uint8), out)
    f.write(out[:end].tobytes())
