"""Gavel's LPs solved by HiGHS through its own Python binding, without ``linprog``'s wrapper (issue 21).

``scipy.optimize.linprog(method="highs")`` spends about as long in Python (input checks, a
sparse ``vstack``, an options manager, a per-column loop over the basis for the bound
multipliers) as HiGHS spends solving Gavel's small LPs, and importing ``scipy.optimize``
costs about 0.4 CPU s, a fifth of a whole Gavel run on Gavel's trace.  Here the model goes
straight to HiGHS's binding with the options ``linprog`` sets, so the solver sees the same
model and returns the same vertex: ``tests/crius/test_highs_lp.py`` checks the results
against ``linprog`` bit for bit, ties included.

The binding, first found of:
1. ``highspy`` (the HiGHS project's own package, pinned in pyproject.toml to 1.12.0, the
   HiGHS that scipy 1.17 bundles): costs about as much to import as numpy;
2. scipy's copy of the same binding, ``scipy.optimize._highspy._core`` (private to scipy,
   checked for the calls used here);
3. neither: ``linprog`` itself, so a missing or changed binding costs speed, never results.
1 and 2 gave identical solutions on all 628 LPs of an arena-philly Gavel run.

``WarmLP`` solves a sequence of such LPs, each from the last one's basis.

The form solved is the one Gavel's LP needs: ``max c @ x`` subject to ``A @ x <= b`` and
``0 <= x <= 1``, with ``A`` given column-wise (CSC arrays).
"""

from __future__ import annotations

import numpy as np


def _binding():
    """The HiGHS binding and the option object ``linprog(method="highs")`` would pass, or None."""
    for load in (_highspy, _scipy_copy):
        try:
            h = load()
            opts = h.HighsOptions()
            # exactly the non-default settings of scipy's _linprog_highs / _highs_wrapper
            opts.presolve = "on"
            opts.highs_debug_level = h.HighsDebugLevel.kHighsDebugLevelNone
            opts.log_to_console = False
            opts.output_flag = False
            opts.simplex_strategy = h.simplex_constants.SimplexStrategy.kSimplexStrategyDual
            h._Highs, h.HighsBasis, h.ObjSense.kMinimize, h.MatrixFormat.kColwise, h.HighsModelStatus.kOptimal  # used
        except (ImportError, AttributeError):
            continue
        return h, opts
    return None


def _highspy():
    import highspy._core as h
    return h


def _scipy_copy():
    from scipy.optimize._highspy import _core as h
    return h


_BINDING: tuple | None | bool = False  # False: not looked up yet


def binding_available() -> bool:
    global _BINDING
    if _BINDING is False:
        _BINDING = _binding()
    return _BINDING is not None


def binding():
    """The HiGHS binding in use (for models other than the box LP, e.g. Sia's MIP), or None."""
    return _BINDING[0] if binding_available() else None  # type: ignore[index]


def solve_box_lp(c_max: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 b: np.ndarray) -> np.ndarray | None:
    """``argmax c_max @ x`` s.t. ``A x <= b``, ``0 <= x <= 1`` (A in CSC form); None unless optimal."""
    if not binding_available():
        return _with_linprog(c_max, indptr, indices, data, b)
    highs = _model(c_max, indptr, indices, data, b)
    return _solution(highs) if _run(highs) else None


def solve_box_lp_value(c_max: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                       b: np.ndarray, presolve: bool = True, simplex: bool = False
                       ) -> tuple[np.ndarray, float] | None:
    """``solve_box_lp`` with the optimum's objective (``linprog``'s ``fun``: the minimised
    ``-c_max @ x`` as HiGHS sums it), ``presolve`` as ``linprog``'s option, and ``simplex``
    for ``method="highs-ds"`` (``linprog`` then names the simplex solver); None unless optimal."""
    if not binding_available():
        from scipy.optimize import linprog
        from scipy.sparse import csc_array

        a = csc_array((data, indices, indptr), shape=(len(b), len(c_max)))
        res = linprog(-np.asarray(c_max, dtype=float), A_ub=a, b_ub=b, bounds=(0.0, 1.0),
                      method="highs-ds" if simplex else "highs", options={"presolve": presolve})
        return None if res.x is None else (res.x, float(res.fun))
    h, base = _BINDING  # type: ignore[misc]
    highs = h._Highs()
    highs.passOptions(base)
    if not presolve:
        highs.setOptionValue("presolve", "off")
    if simplex:
        highs.setOptionValue("solver", "simplex")
    pass_box_model(highs, c_max, indptr, indices, data, b)
    if not _run(highs):
        return None
    return _solution(highs), highs.getInfo().objective_function_value


def assignment_columns(first_rows: np.ndarray, second_rows: np.ndarray, second_coeffs: np.ndarray):
    """CSC arrays (indptr, indices, data) of an assignment problem's matrix: column k holds 1 in row
    ``first_rows[k]`` (its job's "at most one" row) and ``second_coeffs[k]`` in row ``second_rows[k]``
    (a capacity row, below every job row): Gavel's LP and Sia's ILP alike."""
    n = len(first_rows)
    indices = np.empty(2 * n, dtype=np.int32)
    indices[0::2], indices[1::2] = first_rows, second_rows
    data = np.ones(2 * n)
    data[1::2] = second_coeffs
    return np.arange(0, 2 * n + 1, 2, dtype=np.int32), indices, data


def pass_box_model(highs, c_max, indptr, indices, data, b, integer: bool = False) -> None:
    """Hand ``highs`` the box problem ``max c_max @ x``, ``A x <= b``, ``0 <= x <= 1`` (A in CSC
    form), its columns integer if ``integer``: the arrays go in one call (filling a ``HighsLp``
    field by field, as ``linprog`` does, costs as much as a warm solve)."""
    h = _BINDING[0]  # type: ignore[index]
    n, m = len(c_max), len(b)
    kind = int(h.HighsVarType.kInteger) if integer else 0  # 0: continuous
    highs.passModel(n, m, len(data), int(h.MatrixFormat.kColwise), int(h.ObjSense.kMinimize), 0.0,
                    -np.asarray(c_max, dtype=float), np.zeros(n), np.ones(n),
                    np.full(m, -h.kHighsInf), np.asarray(b, dtype=float),
                    np.asarray(indptr, dtype=np.int32), np.asarray(indices, dtype=np.int32),
                    np.asarray(data, dtype=float), np.full(n, kind, dtype=np.int32))


def _model(c_max, indptr, indices, data, b):
    """A HiGHS instance holding the LP, with ``linprog``'s options."""
    h, opts = _BINDING  # type: ignore[misc]
    highs = h._Highs()
    highs.passOptions(opts)
    pass_box_model(highs, c_max, indptr, indices, data, b)
    return highs


def _run(highs) -> bool:
    h = _BINDING[0]  # type: ignore[index]
    return highs.run() != h.HighsStatus.kError and highs.getModelStatus() == h.HighsModelStatus.kOptimal


def _solution(highs) -> np.ndarray:
    return np.array(highs.getSolution().col_value)


def _with_linprog(c_max, indptr, indices, data, b) -> np.ndarray | None:
    from scipy.optimize import linprog
    from scipy.sparse import csc_array

    a = csc_array((data, indices, indptr), shape=(len(b), len(c_max)))
    res = linprog(-np.asarray(c_max, dtype=float), A_ub=a, b_ub=b, bounds=(0.0, 1.0), method="highs")
    return res.x if res.status == 0 else None


class WarmLP:
    """A sequence of related box LPs, each started from the last one's optimal basis (issue 21).

    Columns and rows carry keys (for Gavel: (job, type) and job, or ("type", t)); a key seen
    in the last solve starts with the status it ended with, a new column at its lower bound,
    a new row with its slack basic.  When jobs have left, the count of basic variables is off,
    so the basis is passed as *alien* and HiGHS repairs it before its dual simplex starts.

    The optimum's value is the one a cold solve reaches (the LP is the same; both are solved to
    HiGHS's tolerances, ``tests/crius/test_highs_lp.py``), but where the LP has several optimal
    vertices, a warm start tends to return the one nearest the last solution, a cold start
    another: decisions differ at ties (see ``gavel``'s docstring and docs/replay.md).
    Without a binding every solve is cold (``solve_box_lp``).
    """

    def __init__(self):
        self._cols: dict = {}
        self._rows: dict = {}
        self.warm_starts = 0

    def solve(self, col_keys: list, row_keys: list, c_max, indptr, indices, data, b) -> np.ndarray | None:
        if not binding_available():
            return solve_box_lp(c_max, indptr, indices, data, b)
        h = _BINDING[0]  # type: ignore[index]
        highs = _model(c_max, indptr, indices, data, b)
        if self._cols:
            lower, basic = h.HighsBasisStatus.kLower, h.HighsBasisStatus.kBasic
            basis = h.HighsBasis()
            basis.col_status = [self._cols.get(k, lower) for k in col_keys]
            basis.row_status = [self._rows.get(k, basic) for k in row_keys]
            basis.alien = True
            basis.valid = True
            if highs.setBasis(basis) != h.HighsStatus.kError:
                self.warm_starts += 1
        if not _run(highs):
            self._cols, self._rows = {}, {}  # start the next one cold
            return None
        basis = highs.getBasis()
        self._cols = dict(zip(col_keys, basis.col_status))
        self._rows = dict(zip(row_keys, basis.row_status))
        return _solution(highs)
