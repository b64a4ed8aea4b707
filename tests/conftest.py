"""Shared fixtures; the shared data folder is reached through ../shared from the repo root."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED} (expected beside the repository)")
    return SHARED


def pytest_addoption(parser):
    parser.addoption("--fuzz-cases", type=int, default=None,
                     help="cases per input kind in tests/fuzz (default 120, about a minute in all; "
                          "2000 for the long run)")
    parser.addoption("--fuzz-seed", type=int, default=None, help="seed of tests/fuzz (default 2026)")
