"""Checks made before a run starts, so that no run is lost at the end.

A results path that cannot become a directory is refused at once with the reason: found after
the run, the whole run would be lost.  The memory a run's jobs would need is checked by
``dlsched.memory``, where they are generated or read.
"""

from __future__ import annotations

import os
from pathlib import Path

from dlsched.errors import InputError


def check_out_dir(path: str, option: str = "--out") -> None:
    """``path`` exists as a writable directory, or can be created as one."""
    p = Path(path)
    probe = p
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        what = "names an existing file" if probe == p else f"is inside {probe}, which is a file"
        raise InputError(f"{path} {what}; give a directory for the results", field=option)
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"cannot write results under {probe} (permission denied)", field=option)
