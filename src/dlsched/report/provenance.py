"""``provenance.json``: what produced a results directory (config, package version, git commit, seed).

Kept out of ``summary.json`` on purpose: the commit and the time change run
to run, and ``summary.json`` stays byte-identical for the same inputs and seed.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from dlsched import __version__

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def git_commit(where: Path = _PACKAGE_DIR) -> dict | None:
    """``{"commit", "dirty"}`` of the repository holding the package, or None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def provenance(config: dict, seed: int | None, argv: list[str] | None = None) -> dict:
    doc = {"dlsched_version": __version__, "git": git_commit(), "python": sys.version.split()[0],
           "platform": platform.platform(), "seed": seed, "config": config,
           "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if argv is not None:
        doc["argv"] = list(argv)
        doc["rerun"] = "dlsched " + " ".join(_quote(a) for a in argv)
        doc["cwd"] = os.getcwd()  # relative paths in argv (traces, plugin files) resolve from here
    from dlsched.registry import loaded_plugins

    plugins = loaded_plugins()
    if plugins:  # how to load each one again: file (with its sha256), module or installed distribution
        doc["plugins"] = plugins
    return doc


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def write_provenance(out_dir, config: dict, seed: int | None, argv: list[str] | None = None) -> Path:
    path = Path(out_dir) / "provenance.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(provenance(config, seed, argv), indent=2, sort_keys=True, default=str) + "\n")
    return path


def args_config(args) -> dict:
    """An argparse namespace as plain data (the handler function and the argv copy left out)."""
    return {k: v for k, v in sorted(vars(args).items()) if k not in ("func", "argv")}
