"""One BLAS thread for the simulation commands (dlsched.threads), never against the user's choice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _child(code: str, **env) -> str:
    e = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    e.update(env, PYTHONPATH=SRC)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_set_before_numpy_loads_and_not_after():
    probe = ("import os\nfrom dlsched.threads import single_threaded_blas as s\n"
             "print(s(), os.environ.get('OPENBLAS_NUM_THREADS'), s())")
    assert _child(probe) == "True 1 False"
    assert _child("import numpy\n" + probe) == "False None False"  # the pool exists already


def test_the_users_count_wins():
    probe = "import os\nfrom dlsched.threads import single_threaded_blas as s\nprint(s(), os.environ['OPENBLAS_NUM_THREADS'])"
    assert _child(probe, OPENBLAS_NUM_THREADS="4") == "False 4"


def test_simulation_commands_ask_for_it_and_live_ones_do_not():
    probe = ("import os, sys\nfrom dlsched import cli\n"
             "def stop(args): print(args.command, os.environ.get('OPENBLAS_NUM_THREADS')); return 0\n"
             "cli.build_parser_orig = cli.build_parser\n"
             "def parser():\n    p = cli.build_parser_orig()\n    p.set_defaults(func=stop)\n"
             "    for a in p._subparsers._group_actions[0].choices.values(): a.set_defaults(func=stop)\n"
             "    return p\n"
             "cli.build_parser = parser\nsys.exit(cli.main(sys.argv[1:]))")
    e = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    e["PYTHONPATH"] = SRC
    run = lambda *argv: subprocess.run([sys.executable, "-c", probe, *argv], env=e, capture_output=True,
                                       text=True, check=True).stdout.strip()
    assert run("simulate") == "simulate 1"
    assert run("status") == "status None"
