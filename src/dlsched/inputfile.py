"""Checks every input file passes before it is parsed: it exists, is a file, is plain text.

Trace readers and YAML loaders share them, so a directory, a missing file or a
compressed or UTF-16 file gets the same clear message whatever it was meant to be.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.errors import InputError

_ARCHIVES = (b"PK\x03\x04", b"BZh", b"\xfd7zXZ")


def read_head(path: Path, source: str, what: str, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a readable, uncompressed, 8-bit text file; else an InputError.

    ``what`` names the expected kind of file in the message ("trace file", "YAML file").
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"is a directory, not a {what}", file=source)
    try:
        with open(path, "rb") as f:
            head = f.read(size)
    except FileNotFoundError:
        raise InputError("no such file", file=source) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=source) from None
    if head.startswith(b"\x1f\x8b"):
        raise InputError("gzip-compressed; decompress it first (gunzip)", file=source)
    if head.startswith(_ARCHIVES):
        raise InputError("a compressed archive; extract it first", file=source)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("UTF-16 text; convert it to UTF-8", file=source)
    return head
