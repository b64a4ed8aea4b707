"""Where the shared data folder (traces the experiments read, never copied into the repo) lives."""

from __future__ import annotations

import os
from pathlib import Path

# src/dlsched/experiments/shared.py -> the repository root is three folders up; shared sits beside it
_BESIDE_REPO = Path(__file__).resolve().parents[3].parent / "shared"


def shared_dir() -> Path:
    """``$DLSCHED_SHARED`` when set (an installed package has no repository beside it), else ../shared."""
    env = os.environ.get("DLSCHED_SHARED")
    return Path(env) if env else _BESIDE_REPO
