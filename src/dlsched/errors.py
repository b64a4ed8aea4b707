"""Errors raised on bad user input.

Every error about a file names the file, the line (1-based, when the format
has lines) and the field, so a user can go straight to the problem.
"""

from __future__ import annotations


class DlschedError(Exception):
    """Base class of every error dlsched raises on purpose."""


class InputError(DlschedError, ValueError):
    """A problem in something the user gave: a trace row, a YAML spec, a CLI value."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.file = file
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if file is not None:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ": ".join([", ".join(where)]) + ": " if where else ""
        super().__init__(prefix + message)


class UnknownNameError(InputError):
    """An unknown model, GPU type, policy or cluster name; lists the known ones."""

    def __init__(self, kind: str, name: str, known, **where):
        known = sorted(known)
        super().__init__(f"unknown {kind} '{name}'{did_you_mean(name, known)}; known: {', '.join(known)}", **where)
        self.name = name
        self.known = known


def did_you_mean(name: str, known) -> str:
    """" (did you mean 'x'?)" for the closest known name (a typo), or ""."""
    import difflib  # on an error only: start-up stays cheap

    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class InfeasibleJobError(InputError):
    """A job that can never run on the cluster (more GPUs than exist, no such GPU type...)."""


class InvariantError(DlschedError, AssertionError):
    """The simulator found its own state inconsistent (debug mode)."""
