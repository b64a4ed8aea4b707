"""Files and folders of the live runtime readable by their owner alone.

The state store holds job files' paths, errors and timings, and checkpoints hold model
weights: another user of a shared machine has no business reading either, so folders are
created 0700 and files 0600 whatever the process's umask.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str | Path) -> Path:
    """Create ``path`` (and missing parents) owner-only; tighten it if it exists and is ours."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    _tighten(path, DIR_MODE)
    return path


def private_file(path: str | Path) -> Path:
    """Create ``path`` empty and owner-only if missing, else tighten it (contents untouched)."""
    path = Path(path)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
    _tighten(path, FILE_MODE)
    return path


def write_private(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a new owner-only file (for write-then-rename)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, data)
    finally:
        os.close(fd)


def _tighten(path: Path, mode: int) -> None:
    st = path.stat()
    if st.st_uid == os.geteuid() and st.st_mode & 0o777 != mode:
        os.chmod(path, mode)
