"""One LP solved by HiGHS through scipy's bundled binding, without ``linprog``'s wrapper (issue 21).

``scipy.optimize.linprog(method="highs")`` spends about as long in Python (input checks, a
sparse ``vstack``, an options manager, a per-column loop over the basis for the bound
multipliers) as HiGHS spends solving Gavel's small LPs.  Here the model goes to the same
HiGHS (``scipy.optimize._highspy._core``, the binding ``linprog`` itself uses) with the
options ``linprog`` sets, so the solver sees the same model and returns the same vertex:
the results are identical, which ``tests/crius/test_highs_lp.py`` checks against
``linprog`` on random LPs and on Gavel's.

Why scipy's binding and not the ``highspy`` package: no new dependency, and it is the very
solver build the results were measured with (a separately built HiGHS could pick another
vertex among tied optima and move schedules).  The binding is private to scipy; where it is
missing or has another shape (scipy older than 1.15 had a Cython wrapper) ``solve_box_lp``
falls back to ``linprog`` itself, so an upgrade costs speed, never correctness.

The form solved is the one Gavel's LP needs: ``max c @ x`` subject to ``A @ x <= b`` and
``0 <= x <= 1``, with ``A`` given column-wise (CSC arrays).
"""

from __future__ import annotations

import numpy as np


def _binding():
    """The HiGHS binding and the option object ``linprog(method="highs")`` would pass, or None."""
    try:
        from scipy.optimize._highspy import _core as h
        opts = h.HighsOptions()
        # exactly the non-default settings of scipy's _linprog_highs / _highs_wrapper
        opts.presolve = "on"
        opts.highs_debug_level = h.HighsDebugLevel.kHighsDebugLevelNone
        opts.log_to_console = False
        opts.output_flag = False
        opts.simplex_strategy = h.simplex_constants.SimplexStrategy.kSimplexStrategyDual
        h._Highs, h.HighsLp, h.MatrixFormat.kColwise, h.HighsModelStatus.kOptimal  # the API used below
    except (ImportError, AttributeError):
        return None
    return h, opts


_BINDING: tuple | None | bool = False  # False: not looked up yet


def binding_available() -> bool:
    global _BINDING
    if _BINDING is False:
        _BINDING = _binding()
    return _BINDING is not None


def solve_box_lp(c_max: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 b: np.ndarray) -> np.ndarray | None:
    """``argmax c_max @ x`` s.t. ``A x <= b``, ``0 <= x <= 1`` (A in CSC form); None unless optimal."""
    if not binding_available():
        return _with_linprog(c_max, indptr, indices, data, b)
    h, opts = _BINDING  # type: ignore[misc]
    n, m = len(c_max), len(b)
    lp = h.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = m
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.col_cost_ = -np.asarray(c_max, dtype=float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.full(m, -h.kHighsInf)
    lp.row_upper_ = np.asarray(b, dtype=float)
    lp.a_matrix_.start_ = indptr
    lp.a_matrix_.index_ = indices
    lp.a_matrix_.value_ = data
    highs = h._Highs()
    highs.passOptions(opts)
    if highs.passModel(lp) == h.HighsStatus.kError or highs.run() == h.HighsStatus.kError \
            or highs.getModelStatus() != h.HighsModelStatus.kOptimal:
        return None
    return np.array(highs.getSolution().col_value)


def _with_linprog(c_max, indptr, indices, data, b) -> np.ndarray | None:
    from scipy.optimize import linprog
    from scipy.sparse import csc_array

    a = csc_array((data, indices, indptr), shape=(len(b), len(c_max)))
    res = linprog(-np.asarray(c_max, dtype=float), A_ub=a, b_ub=b, bounds=(0.0, 1.0), method="highs")
    return res.x if res.status == 0 else None
