"""Where the reference data folder (``shared``: traces, topologies, papers' tables) lives.

The folder is never shipped in the package and never looked up from the package's own location:
an installed package (``pip install .``) sits in site-packages, far from any checkout.  It is found,
first match wins, from

1. the ``--data DIR`` global setting (``set_data_dir``),
2. the environment variable ``DLSCHED_DATA``,
3. the working directory: ``./../shared`` (a checkout beside the folder, as in /work), ``./shared``.

The package's own data (cluster specs, fitted parameters, small tables) is read with
``importlib.resources`` instead, wherever the package is installed.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "DLSCHED_DATA"
_chosen: Path | None = None


def set_data_dir(path: str | os.PathLike | None) -> None:
    """Use ``path`` as the data folder for this process (None: back to the environment and cwd)."""
    global _chosen
    _chosen = None if path is None else Path(path)


def chosen() -> Path | None:
    """The folder ``set_data_dir`` chose (None: none chosen)."""
    return _chosen


def candidates(cwd: Path | None = None, env: dict | None = None) -> list[tuple[Path, str]]:
    """Each place the folder may be, in order, with where the choice came from."""
    env = os.environ if env is None else env
    if _chosen is not None:
        return [(_chosen, "--data")]
    if env.get(ENV):
        return [(Path(env[ENV]), ENV)]
    here = Path.cwd() if cwd is None else cwd
    return [(here.parent / "shared", "../shared"), (here / "shared", "./shared")]


def shared_dir(cwd: Path | None = None, env: dict | None = None) -> Path:
    """The data folder: the first candidate that is a directory, else the first candidate (so a
    missing file's error names where it was looked for)."""
    places = candidates(cwd, env)
    for path, _ in places:
        if path.is_dir():
            return path
    return places[0][0]


def where_to_set() -> str:
    """A hint for an error naming a missing data file."""
    return f"give the data folder with --data DIR or {ENV}, or run from a checkout beside it (../shared)"
