"""Column-at-a-time CSV formatting, byte for byte what ``csv.writer`` writes for ``fmt_value``'d rows.

A million-job run writes tens of millions of fields; formatting each through a Python
function call (``repr(round(v, 6))``, then the csv module) cost a quarter of the command.
Here a block of rows becomes one byte matrix, a column at a time, with numpy: each field
gets a fixed run of bytes in its row, padded with NUL bytes, and dropping every NUL leaves
the CSV text.  Every value the fast path cannot vouch for exactly is formatted by the
Python expression instead and copied in, so the output cannot differ:

- ``round(x, 6)`` is the double nearest to ``k / 10**6``, where ``k`` is ``x * 10**6``
  rounded half-even on its exact value.  numpy's ``rint(x * 1e6)`` gives that ``k`` unless
  the product's own rounding error could cross a half: those values (distance to a half
  within the error bound) take the Python path.
- ``repr`` of that double is the decimal ``k * 10**-6`` itself with trailing zeros cut
  (at least one digit after the point) when ``k`` has at most 15 digits (any such decimal
  round-trips, so no shorter one names the same double) and ``|x| >= 1e-4`` (below,
  ``repr`` switches to exponent form).  Zero is "0.0"; a negative zero takes the Python path.
- Ints are written by ``str`` (digits from integer division); strings as the csv module
  quotes them; a column mixing types, a value past int64, or a NUL in a string takes the
  Python path for that column or block.
"""

from __future__ import annotations

import csv
import io
import locale

import numpy as np

_SPECIAL = (",", '"', "\r", "\n")  # the csv module decides how a string holding one is quoted
_P10 = 10 ** np.arange(18, -1, -1, dtype=np.int64)  # 10**18 .. 1
_COMMA, _NL, _DOT, _MINUS, _ZERO = 44, 10, 46, 45, 48
_ONLY_NONE = {type(None)}


def fmt_value(v):
    """One field as rows were formatted before the csv module wrote them (None empty, floats rounded)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(round(v, 6))
    return v


def _csv_field(s: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([s, ""])  # two fields: a lone "" is quoted as a row
    return buf.getvalue()[:-2]


def _quoted(texts: list[str]) -> list[str]:
    """``texts`` with each field the csv module would quote written its way."""
    joined = "".join(texts)
    if not any(c in joined for c in _SPECIAL):
        return texts
    return [_csv_field(s) if any(c in s for c in _SPECIAL) else s for s in texts]


def _text(v) -> str:
    """What ``csv.writer`` writes for ``fmt_value(v)``, before quoting."""
    x = fmt_value(v)
    return x if isinstance(x, str) else str(x)


def _digits(v: np.ndarray, width: int, keep_zero_last: bool = True) -> np.ndarray:
    """Decimal digits of non-negative int64 ``v`` in ``width`` bytes each, leading zeros as NUL."""
    p = _P10[len(_P10) - width:]
    d = (v[:, None] // p) % 10 + _ZERO
    lead = v[:, None] < p
    if keep_zero_last:
        lead[:, -1] = False  # 0 is written "0"
    d[lead] = 0
    return d.astype(np.uint8)


def _strings(texts: list[str], enc: str) -> np.ndarray | None:
    """Encoded ``texts`` as rows of bytes (NUL-padded); None if a NUL would be lost."""
    joined = "".join(texts)
    if "\0" in joined:
        return None
    a = np.array(texts if joined.isascii() else [t.encode(enc) for t in texts], dtype="S")
    if a.dtype.itemsize == 0:
        return np.zeros((len(texts), 0), np.uint8)
    return a.view(np.uint8).reshape(len(texts), a.dtype.itemsize)


def _fast_floats(values: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fast, ``|k|``, ``k < 0``) of each value: whether ``repr(round(v, 6))`` is the decimal
    ``k * 10**-6`` (see the module), and that ``k`` (``values`` holds floats and None)."""
    x = np.array(values, dtype=float)  # None becomes NaN: only finite values take the fast path
    with np.errstate(invalid="ignore", over="ignore"):
        y = x * 1e6
        k = np.rint(y)
        half = np.abs(np.abs(y - np.trunc(y)) - 0.5)
        ak = np.abs(k)
        fast = (np.isfinite(y) & (ak < 1e15) & (half > np.abs(y) * 4e-16 + 1e-9)
                & ((ak >= 100) | ((k == 0) & ~np.signbit(x))))
    return fast, np.where(fast, ak, 0).astype(np.int64), k < 0


def _floats(values: list, enc: str) -> np.ndarray:
    """``repr(round(v, 6))`` of each float, nothing for None (``values`` holds only these two)."""
    fast, ik, negative = _fast_floats(values)
    whole, frac = ik // 1_000_000, ik % 1_000_000
    n = len(values)
    sign = np.where(fast & negative, _MINUS, 0).astype(np.uint8)[:, None]
    fd = _digits(frac + 1_000_000, 7)[:, 1:]  # six digits, zeros kept
    cut = (frac[:, None] % (_P10[-6:] * 10)) == 0  # nothing but zeros from this digit on
    cut[:, 0] = False  # "3.0": one digit after the point always
    fd[cut] = 0
    dot = np.full((n, 1), _DOT, np.uint8)
    m = np.concatenate([sign, _digits(whole, 9), dot, fd], axis=1)
    m[~fast] = 0
    slow = np.flatnonzero(~fast).tolist()
    if slow:  # None (nothing), and the values above: Python's own text, in a slot of their own
        s = _strings([_text(values[i]) for i in slow], enc)
        if s.shape[1]:
            extra = np.zeros((n, s.shape[1]), np.uint8)
            extra[slow] = s
            m = np.concatenate([m, extra], axis=1)
    return m


def _ints(values: list) -> np.ndarray | None:
    big = max(values, key=abs)
    if abs(big) >= 10**18:
        return None
    v = np.array(values, dtype=np.int64)
    width = len(str(abs(big)))
    sign = np.where(v < 0, _MINUS, 0).astype(np.uint8)[:, None]
    return np.concatenate([sign, _digits(np.abs(v), width)], axis=1)


def column_bytes(values: list, enc: str) -> np.ndarray | None:
    """One column as rows of NUL-padded field bytes; None where only the csv module may write it."""
    types = set(map(type, values))
    if types == _ONLY_NONE:  # an empty column (no deadlines): an empty field per row
        return np.zeros((len(values), 0), np.uint8)
    if types <= {float, type(None)} and float in types:
        return _floats(values, enc)
    if types == {int}:
        m = _ints(values)
        if m is not None:
            return m
    texts = values if types == {str} else list(map(_text, values))
    return _strings(_quoted(texts), enc)


def _numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _slow_rows(f, columns: list[list], enc: str) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in zip(*columns):
        w.writerow([fmt_value(v) for v in row])
    f.write(buf.getvalue().encode(enc))


def _pooled(texts: list[str], enc: str) -> tuple[bytes, list[int]] | None:
    """``texts`` encoded into one pool, and each one's length in it; None if one holds a NUL."""
    joined = "".join(texts)
    if "\0" in joined:
        return None
    if joined.isascii():
        return joined.encode("ascii"), list(map(len, texts))
    encoded = [t.encode(enc) for t in texts]
    return b"".join(encoded), list(map(len, encoded))


def _compiled_rows(f, columns: list[list], enc: str) -> bool:
    """``write_rows`` by ``csv_kernel`` (the same bytes); False, nothing written, where a column
    needs the csv module (a NUL in a string)."""
    from dlsched.report import csv_kernel as K

    n, cols = len(columns[0]), len(columns)
    kinds, num, fast = [], np.zeros((cols, n), np.int64), np.zeros((cols, n), np.int8)
    lengths, pools = np.zeros((cols, n), np.int64), []
    for c, values in enumerate(columns):
        types = set(map(type, values))
        if types <= {float, type(None)} and float in types:
            ok, ik, negative = _fast_floats(values)
            kinds.append(K.FLOAT)
            num[c], fast[c] = ik, np.where(ok, np.where(negative, 2, 1), 0)
            slow = np.flatnonzero(~ok).tolist()
            if slow:
                pool, lens = _pooled([_text(values[i]) for i in slow], enc)  # floats and None: no NUL
                lengths[c, slow] = lens
                pools.append(pool)
            continue
        if types == {int} and abs(max(values, key=abs)) < 10**18:
            kinds.append(K.INT)
            num[c] = values
            continue
        kinds.append(K.TEXT)
        if types != _ONLY_NONE:  # an empty column (no deadlines): an empty field per row
            got = _pooled(_quoted(values if types == {str} else list(map(_text, values))), enc)
            if got is None:
                return False
            pools.append(got[0])
            lengths[c] = got[1]
    ends = np.cumsum(lengths.ravel()).reshape(cols, n)
    offs = np.zeros((cols, n + 1), np.int64)
    offs[:, 1:] = ends
    offs[1:, 0] = ends[:-1, -1]  # each column's texts follow the previous column's in the pool
    K.write(f, kinds, num, fast, offs, b"".join(pools))
    return True


def write_rows(f, columns: list[list], enc: str | None = None, compiled: bool = False) -> None:
    """Write rows given as equal-length columns to binary file ``f`` ("\\n" after each row),
    encoded as ``open`` encodes text by default; ``compiled``: by ``csv_kernel`` where numba is
    installed (the same bytes, in a fraction of the time, once numba is loaded)."""
    enc = enc or locale.getpreferredencoding(False)
    if not columns or not columns[0]:
        return
    if compiled and _numba() and _compiled_rows(f, columns, enc):
        return
    n = len(columns[0])
    parts = []
    sep = np.full((n, 1), _COMMA, np.uint8)
    for i, c in enumerate(columns):
        m = column_bytes(c, enc)
        if m is None:
            return _slow_rows(f, columns, enc)
        if i:
            parts.append(sep)
        parts.append(m)
    parts.append(np.full((n, 1), _NL, np.uint8))
    flat = np.concatenate(parts, axis=1).ravel()
    f.write(flat[flat != 0].tobytes())
