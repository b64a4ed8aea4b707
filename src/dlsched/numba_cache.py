"""Compiling a numba kernel with its machine code cached on disk, for kernels outside ``dlsched.network``.

With no writable place (no writable ``__pycache__`` beside the module, nor a user cache directory)
numba refuses ``cache=True`` at decoration; the kernel then compiles afresh in each process.  Kept
apart from ``network.fluid_kernel``'s copy so that a kernel elsewhere does not import the network
package (networkx: about 0.7 s).
"""

from __future__ import annotations

from numba import njit


def compiled(fn):
    """``fn`` compiled, its machine code cached on disk where numba finds a writable place."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError:
        return njit(fn)
