"""Arguments shared by the live-runtime commands (serve, submit, status, cancel)."""

from __future__ import annotations

import argparse
import os

DEFAULT_STATE = ".dlsched"


def add_state_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", default=os.environ.get("DLSCHED_STATE", DEFAULT_STATE),
                   help=f"scheduler state directory (SQLite + checkpoints; default $DLSCHED_STATE or "
                        f"{DEFAULT_STATE})")


def open_store(path: str, must_exist: bool = False):
    from pathlib import Path

    from dlsched.errors import InputError
    from dlsched.live.store import Store

    if must_exist and not (Path(path) / "state.sqlite").exists():
        raise InputError("no scheduler state here (start `dlsched serve` or `dlsched submit` first)",
                         file=str(path))
    return Store(path)


def known_capacity(path: str):
    """The GPUs of the cluster a service on this state ran on, or None before its first start."""
    from pathlib import Path

    from dlsched.live.capacity import Capacity
    from dlsched.live.raycluster import ClusterLayout

    if not (Path(path) / "state.sqlite").exists():
        return None
    store = open_store(path)
    try:
        text = store.layout_json()
    finally:
        store.close()
    return None if text is None else Capacity.of_layout(ClusterLayout.from_json(text))
