"""Compiling a numba kernel with its machine code cached on disk: the one rule every kernel uses.

With no writable place (no writable ``__pycache__`` beside the module, nor a user cache directory)
numba refuses ``cache=True`` at decoration; the kernel then compiles afresh in each process.  A
top-level module, so that a kernel outside ``dlsched.network`` does not import the network
package (networkx: about 0.7 s).
"""

from __future__ import annotations

from numba import njit


def compiled(fn, signature=None, **options):
    """``fn`` compiled (for ``signature`` alone, if given; ``options`` as ``njit`` takes them), its
    machine code cached on disk where numba finds a writable place."""
    first = () if signature is None else (signature,)
    try:
        return njit(*first, cache=True, **options)(fn)
    except RuntimeError:
        return njit(*first, **options)(fn)
