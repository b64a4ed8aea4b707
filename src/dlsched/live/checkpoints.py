"""Where checkpoints live and what the scheduler reads of them (no torch needed here).

The agent writes ``ckpt.pt`` (the state) and then a small ``ckpt.json``
sidecar (iteration, world size, segment), each by write-then-rename, so the
sidecar never names an iteration whose state is not fully on disk.  The
folder must be reachable from every node (one machine here; shared storage
on a real cluster).
"""

from __future__ import annotations

import json
from pathlib import Path

CHECKPOINT_FILE = "ckpt.pt"
CHECKPOINT_META = "ckpt.json"


def read_checkpoint_meta(checkpoint_dir: str | Path) -> dict | None:
    """The last checkpoint's iteration and world size, or None when there is none."""
    p = Path(checkpoint_dir) / CHECKPOINT_META
    try:
        return json.loads(p.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
