"""Checks every input file passes before it is parsed: it exists, is a file, is plain text.

Trace readers and YAML loaders share them, so a directory, a missing file or a
compressed or UTF-16 file gets the same clear message whatever it was meant to be.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from dlsched.errors import InputError

_ARCHIVES = (b"PK\x03\x04", b"BZh", b"\xfd7zXZ")


def read_head(path: Path, source: str, what: str, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a readable, uncompressed, 8-bit text file; else an InputError.

    ``what`` names the expected kind of file in the message ("trace file", "YAML file").
    """
    path = Path(path)
    check_regular_file(path, source, what)
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


def check_regular_file(path: Path, source: str, what: str) -> os.stat_result:
    """``path``'s status, if it is a regular file; else an InputError saying what it is.

    Checked before opening: opening a FIFO blocks until a writer appears (a hang, not an
    error), and a device or socket is never a file of ours.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", file=_short(source)) from None
    except OSError as e:
        raise InputError(_os_reason(e), file=_short(source)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"is a directory, not a {what}", file=source)
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else \
            "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise InputError(f"is {kind}, not a {what}", file=source)
    return st


def _os_reason(e: OSError) -> str:
    if e.errno == errno.ENAMETOOLONG:
        return "file name too long (the system allows 255 bytes per name, 4,096 per path)"
    return f"cannot read: {e.strerror or e}"


def _short(source: str, keep: int = 120) -> str:
    """A path shortened for a message: an over-long name would bury the reason."""
    text = str(source)
    return text if len(text) <= keep else f"{text[:keep // 2]}...{text[-keep // 2:]} ({len(text)} characters)"


def describe_os_error(e: OSError) -> str:
    """An OSError about a user's path as one line: the path (shortened) and the reason."""
    where = e.filename if e.filename is not None else ""
    return f"{_short(os.fsdecode(where))}: {_os_reason(e).removeprefix('cannot read: ')}" if where else \
        _os_reason(e).removeprefix("cannot read: ")
