"""Thread pools that numerical libraries start in a simulator's process.

numpy's OpenBLAS starts one thread per core when numpy is imported, and on a
2-core machine those threads cost about 0.06-0.08 CPU s of every process's
start-up (``python -c 'import numpy'``: 0.20-0.22 CPU s against 0.13-0.14
with one thread), while the simulator's arrays (a few thousand elements: GPU
occupancy, per-node counts, LP columns) never gain from a BLAS thread pool.
The simulation commands therefore ask for one BLAS thread unless the user set
a count; the live commands leave the environment alone (their training runs
in worker processes that inherit it).
"""

from __future__ import annotations

import os
import sys

BLAS_THREADS_VAR = "OPENBLAS_NUM_THREADS"


def single_threaded_blas() -> bool:
    """Ask OpenBLAS for one thread, before numpy is imported; True if it took effect.

    A count the user already set wins, and once numpy is loaded its pool exists, so
    nothing is changed then.
    """
    if "numpy" in sys.modules or BLAS_THREADS_VAR in os.environ:
        return False
    os.environ[BLAS_THREADS_VAR] = "1"
    return True
