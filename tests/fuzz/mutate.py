"""Seeded mutations of input files: what a careless editor, a wrong tool or a hostile user writes."""

from __future__ import annotations

import random

# values dropped in where a value was: extremes, wrong types, hostile text
TOKENS = [b"-1", b"0", b"1e-300", b"1e309", b"-0", b"nan", b"inf", b"-inf", b".inf", b"''", b"[]", b"{}", b"~",
          b"yes", b"0x10", b"9" * 40, b"x" * 300, b"1e12", b"3.5", b"!!python/object:os.system ls", b"&a [*a]",
          b"*nope", b"'\xff\xfe'", b"\x00", b"\"\\u0000\"", b"<!--<script>", b"{a: {b: [[[[]]]]}}",
          b"|\n  multi\n  line", b"H100", b"A100", b"resnet50", b"2017-10-03 10:00:00", b"1.3B", b"\"a,b\"",
          b"\"", b"\xef\xbb\xbf", b"\r\n", b"../../../../etc/passwd", b"/dev/zero"]


def _lines(b: bytearray) -> list[bytes]:
    return bytes(b).split(b"\n")


def mutate(rng: random.Random, data: bytes, csv: bool) -> bytes:
    """One to three edits of ``data``; CSV files also get column-aware edits."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(11 if csv else 8)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:  # flip a byte to anything (non-UTF-8 included)
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif op == 1:  # insert random bytes
            b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == 2:  # truncate
            del b[pos:]
        elif op == 3:  # a value replaced by a token
            sep = b"," if csv else b": "
            cut = b.find(sep, pos)
            if cut >= 0:
                start = cut + len(sep)
                ends = [i for i in (b.find(b",", start), b.find(b"\n", start)) if i >= 0]
                b[start:min(ends or [len(b)])] = rng.choice(TOKENS)
        elif op == 4:  # delete a line
            lines = _lines(b)
            del lines[rng.randrange(len(lines))]
            b = bytearray(b"\n".join(lines))
        elif op == 5:  # duplicate a line (duplicate keys, jobs, rows)
            lines = _lines(b)
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            b = bytearray(b"\n".join(lines))
        elif op == 6:  # nest deeply
            depth = rng.choice([5, 70, 900])
            b[pos:pos] = (b"[" * depth + b"]" * depth) if rng.random() < 0.5 else \
                b"".join(b"\n" + b"  " * i + b"k:" for i in range(depth)) + b" 1\n"
        elif op == 7:  # a whole line replaced by a token
            lines = _lines(b)
            lines[rng.randrange(len(lines))] = rng.choice(TOKENS)
            b = bytearray(b"\n".join(lines))
        elif op == 8:  # a header column named twice
            lines = _lines(b)
            cols = lines[0].split(b",")
            lines[0] = b",".join(cols + [rng.choice(cols)])
            b = bytearray(b"\n".join(lines))
        elif op == 9:  # a row cut short or made long
            lines = _lines(b)
            i = rng.randrange(1, len(lines)) if len(lines) > 1 else 0
            cells = lines[i].split(b",")
            lines[i] = b",".join(cells[:rng.randrange(len(cells) + 1)] if rng.random() < 0.5 else cells + [b"7"])
            b = bytearray(b"\n".join(lines))
        else:  # a header name misspelt (two letters swapped)
            lines = _lines(b)
            cols = lines[0].split(b",")
            j = rng.randrange(len(cols))
            c = bytearray(cols[j])
            if len(c) > 2:
                k = rng.randrange(len(c) - 1)
                c[k], c[k + 1] = c[k + 1], c[k]
            cols[j] = bytes(c)
            lines[0] = b",".join(cols)
            b = bytearray(b"\n".join(lines))
    return bytes(b)
