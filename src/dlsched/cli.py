"""The ``dlsched`` command line: parses arguments and hands off to ``dlsched.commands``.

Each subcommand lives in its own module under ``dlsched.commands`` with two
functions, ``add_parser(subparsers)`` and ``run(args) -> int``; add the module
name to ``COMMANDS`` to expose it.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dlsched import __version__
from dlsched.errors import DlschedError
from dlsched.threads import single_threaded_blas

LIVE_EXTRAS = ("ray", "torch")  # the optional "live" extra; only the live commands need it
LIVE_COMMANDS = ("serve", "submit", "status", "cancel", "run")  # the others simulate or report in-process
COMMANDS = ["simulate", "compare", "policies", "perf", "net", "serve", "submit", "status", "cancel", "report",
            "reproduce", "run"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlsched",
        description="Schedule deep-learning training jobs on GPU clusters (simulated or live). "
                    "With no subcommand, runs the embedded default simulation.")
    parser.add_argument("--version", action="version", version=f"dlsched {__version__}")
    parser.add_argument("--data", metavar="DIR",
                        help="the reference data folder (traces, topologies) for every command; may be given "
                             "anywhere on the line (default: $DLSCHED_DATA, else ../shared or ./shared from the "
                             "working directory)")
    sub = parser.add_subparsers(dest="command")
    for name in COMMANDS:
        importlib.import_module(f"dlsched.commands.{name}").add_parser(sub)
    return parser


def _with_default_command(argv: list[str]) -> list[str]:
    """Options without a subcommand (``dlsched --jobs 50``) mean ``simulate``."""
    if not argv:
        return ["simulate"]
    if argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        return ["simulate", *argv]
    if argv[0] == "perf" and len(argv) > 1 and argv[1] in ("calibrate", "validate"):
        return [f"perf-{argv[1]}", *argv[2:]]  # `perf MODEL N` keeps its positional form
    return argv


def split_data_option(argv: list[str]) -> tuple[str | None, list[str]]:
    """(``--data DIR`` wherever it is given, the rest): a global setting, so it may follow a subcommand."""
    data, rest = None, []
    it = iter(argv)
    for a in it:
        if a == "--data":
            data = next(it, None)
            if data is None:
                raise SystemExit("dlsched: error: argument --data: expected one argument")
        elif a.startswith("--data="):
            data = a.split("=", 1)[1]
        else:
            rest.append(a)
    return data, rest


# Commands that end by writing files and hold nothing an exit handler must release: run as the
# process itself, they leave without freeing their objects one by one.  A million-job run holds
# some ten million (specs, states, records, their dicts), and freeing them took 4-5 s of its exit.
FAST_EXIT_COMMANDS = ("simulate",)


def main(argv: list[str] | None = None) -> int:
    entry = argv is None  # the process's own command line (console script, ``python -m dlsched.cli``)
    argv = sys.argv[1:] if argv is None else argv
    data, argv = split_data_option(list(argv))
    if data is not None:
        from dlsched import shared_data

        before = shared_data.chosen()
        shared_data.set_data_dir(data)
        try:
            return _main(argv, data, entry)
        finally:  # main() called in-process (tests, scripts) leaves the setting as it found it
            shared_data.set_data_dir(before)
    return _main(argv, data, entry)


def _exit_now(rc: int) -> None:
    """End the process with ``rc`` once everything written is flushed, skipping the interpreter's
    teardown (the run's objects freed one by one); the outputs are already closed."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def _main(argv: list[str], data: str | None, entry: bool = False) -> int:
    parser = build_parser()
    args = parser.parse_args(_with_default_command(argv))
    # recorded in provenance.json: the exact command to re-run
    args.argv = (["--data", data] if data is not None else []) + _with_default_command(argv)
    if args.command not in LIVE_COMMANDS:
        single_threaded_blas()  # start-up CPU that no simulation gains from (dlsched.threads)
    try:
        rc = int(args.func(args) or 0)
        # not under a profiler or tracer (cProfile, coverage): they write their results at exit
        if (entry and rc == 0 and args.command in FAST_EXIT_COMMANDS and data is None
                and sys.getprofile() is None and sys.gettrace() is None):
            _exit_now(rc)
        return rc
    except DlschedError as e:
        print(f"dlsched: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in LIVE_EXTRAS:
            raise
        print(f"dlsched: error: {args.command} needs the live runtime's packages ({e.name} is missing); "
              f"install them with: pip install -e \".[live]\"", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dlsched: interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # a path the user gave that the system refuses (too long, no permission, full disk)
        from dlsched.inputfile import describe_os_error

        print(f"dlsched: error: {describe_os_error(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
