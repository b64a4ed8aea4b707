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


class HotAssignmentLP:
    """One HiGHS instance kept across a sequence of assignment LPs (``max c @ x``, each job's
    columns summing to at most 1, ``capacity`` per type, ``0 <= x <= 1``), edited in place.

    Jobs that left are deleted (their row and columns), new jobs appended, every column's
    cost reset, and HiGHS re-solves from the basis and factorisation it kept (a hot start:
    with a cold solve's setup costing more than the solve on these problems, this is where the
    time goes).  The optimum's value is the cold solve's (the same LP, to HiGHS's tolerances),
    but where the LP has several optimal vertices HiGHS ends at the one its last basis leads
    to, so decisions differ from a cold solve's at ties.

    Columns are kept in HiGHS's order: each job's columns stay contiguous and in the order
    they were given (deletions keep order, additions append); ``col_job`` is each column's job
    (its index in ``rows``) and ``data[name]`` the caller's per-column arrays, kept alike."""

    def __init__(self, capacity: np.ndarray):
        _start_model(self, capacity)

    def sync(self, keys: list, columns) -> None:
        """Bring the model to the jobs ``keys``; ``columns(key)`` gives a job not yet in it its
        per-column arrays by name, "type" and "count" among them (a job's columns never change
        while it stays)."""
        h = self.highs
        gone_set = _gone(self, keys)
        if gone_set is not None:
            dead = np.flatnonzero(gone_set[self.col_job]).astype(np.int32)
            if dead.size:
                h.deleteCols(len(dead), dead)
            _drop_jobs(self, gone_set)
        new = [k for k in keys if k not in self.row_of]
        if not new:
            return
        jobs_a = _append_jobs(self, new, columns)
        m = len(jobs_a)
        types_a, counts_a = self.data["type"][-m:], self.data["count"][-m:]
        indices = np.empty(2 * m, dtype=np.int32)
        # rows: the type rows first, then the jobs; within a column, row indices ascending
        indices[0::2], indices[1::2] = types_a, jobs_a + self.n_types
        data = np.ones(2 * m)
        data[0::2] = counts_a
        h.addCols(m, np.zeros(m), np.zeros(m), np.ones(m), 2 * m, np.arange(0, 2 * m, 2, dtype=np.int32),
                  indices, data)
        self.col_job = np.concatenate([self.col_job, jobs_a])

    def solve(self, c_max: np.ndarray) -> tuple[np.ndarray, float] | None:
        """Re-solve with these column values (``max``, in column order); (x, minimised objective)."""
        h = self.highs
        n = len(c_max)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), -np.asarray(c_max, dtype=float))
        if not _run(h):
            return None
        self.hot_solves += 1
        return _solution(h), h.getInfo().objective_function_value



def _start_model(lp, capacity: np.ndarray) -> None:
    """A hot simplex model with one capacity row per GPU type and no jobs yet, in ``lp``."""
    h, opts = _BINDING  # type: ignore[misc]
    lp._h = h
    lp.highs = h._Highs()
    lp.highs.passOptions(opts)
    lp.highs.setOptionValue("presolve", "off")
    lp.highs.setOptionValue("solver", "simplex")
    cap = np.asarray(capacity, dtype=float)
    lp.n_types = len(cap)
    lp.highs.addRows(len(cap), np.full(len(cap), -h.kHighsInf), cap, 0, np.zeros(0, dtype=np.int32),
                     np.zeros(0, dtype=np.int32), np.zeros(0))
    lp.rows = []  # job keys, in row order (after the type rows)
    lp.row_of = {}
    lp.col_job = np.zeros(0, dtype=np.int64)  # row index (among jobs) of each column's job
    lp.data = {}  # the caller's per-column arrays ("type" and "count" among them)
    lp.hot_solves = 0


def _gone(lp, keys: list) -> np.ndarray | None:
    """Which of ``lp``'s job rows are not among ``keys`` (a mask over ``lp.rows``); None if none."""
    want = set(keys)
    gone = [i for i, k in enumerate(lp.rows) if k not in want]
    if not gone:
        return None
    gone_set = np.zeros(len(lp.rows), dtype=bool)
    gone_set[gone] = True
    return gone_set


def _drop_jobs(lp, gone_set: np.ndarray) -> np.ndarray:
    """Delete the ``gone_set`` job rows from ``lp``'s model (their columns already deleted) and their
    columns from ``lp.col_job`` / ``lp.data``; the mask of the columns kept."""
    rows = np.flatnonzero(gone_set).astype(np.int32) + lp.n_types
    lp.highs.deleteRows(len(rows), rows)
    keep = ~gone_set[lp.col_job]
    shift = np.cumsum(gone_set) - gone_set  # rows removed before each row
    lp.col_job = (lp.col_job - shift[lp.col_job])[keep]
    lp.data = {name: a[keep] for name, a in lp.data.items()}
    lp.rows = [k for k, g in zip(lp.rows, gone_set) if not g]
    lp.row_of = {k: i for i, k in enumerate(lp.rows)}
    return keep


def _append_jobs(lp, new: list, columns) -> np.ndarray:
    """Give each key in ``new`` a job row (at most one configuration) in ``lp``'s HiGHS model and
    append its columns' arrays (``columns(key)``) to ``lp.data``; the job row of each new column."""
    base = len(lp.rows)
    lp.highs.addRows(len(new), np.full(len(new), -lp._h.kHighsInf), np.ones(len(new)), 0,
                     np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    jobs, added = [], []
    for i, k in enumerate(new):
        d = columns(k)
        jobs.append(np.full(len(d["type"]), base + i, dtype=np.int64))
        added.append(d)
        lp.rows.append(k)
        lp.row_of[k] = base + i
    for name in added[0]:
        part = np.concatenate([d[name] for d in added])
        lp.data[name] = np.concatenate([lp.data[name], part]) if name in lp.data else part
    return np.concatenate(jobs)

PRICE_EPS = 1e-7  # HiGHS's dual feasibility tolerance: a column priced within it is not worth adding
DROP_BELOW = 0.25  # a column at zero priced this far below its job's best leaves the model


class PricedAssignmentLP:
    """``HotAssignmentLP``'s problem, with HiGHS holding only the columns LP pricing asks for
    (column generation; ours, not from any paper).

    Every job's full columns are kept here in arrays (``col_job``, ``data``, as
    ``HotAssignmentLP`` keeps them); the HiGHS model holds a subset (``mcol``: full column index
    of each model column), re-solved hot from its basis.  After each solve every column left out
    is priced with the optimum's duals (its value less its capacity row's price times its GPU
    count, less its job row's price); those above ``PRICE_EPS`` join and HiGHS re-solves, until
    none does.  The last solution is then an optimum of the whole LP (its duals are feasible for
    every column), with the whole LP's value; where the LP has several optimal vertices this can
    end at another one than a solve with every column (decisions differ at ties, as ``lp=hot``'s
    do from ``lp=cold``'s).  Columns at zero priced ``DROP_BELOW`` under their job's best leave
    the model (they are non-basic, so the basis stays valid), so the model stays a few columns a
    job instead of every configuration."""

    def __init__(self, capacity: np.ndarray):
        _start_model(self, capacity)  # col_job / data: the full columns, each job's contiguous
        self.mcol = np.zeros(0, dtype=np.int64)  # full index of each HiGHS column, in HiGHS's order
        self.in_model = np.zeros(0, dtype=bool)  # per full column
        self.lam = np.zeros(self.n_types)  # the last optimum's capacity prices (>= 0)
        self.mu = np.zeros(0)  # and job row prices, per row
        self.rounds = 0  # pricing rounds beyond the first solve
        self.model_cols = 0  # sum over solves of the model's columns (its mean size, with hot_solves)

    def sync(self, keys: list, columns) -> None:
        """As ``HotAssignmentLP.sync``: the jobs ``keys``, a new job's arrays from ``columns(key)``."""
        h = self.highs
        gone_set = _gone(self, keys)
        if gone_set is not None:
            dead = np.flatnonzero(gone_set[self.col_job][self.mcol]).astype(np.int32)
            if dead.size:
                h.deleteCols(len(dead), dead)
            keep = _drop_jobs(self, gone_set)
            new_index = np.cumsum(keep) - 1
            self.mcol = new_index[self.mcol[keep[self.mcol]]]
            self.in_model = self.in_model[keep]
            self.mu = self.mu[~gone_set]
        new = [k for k in keys if k not in self.row_of]
        if not new:
            return
        jobs_a = _append_jobs(self, new, columns)
        self.col_job = np.concatenate([self.col_job, jobs_a])
        self.in_model = np.concatenate([self.in_model, np.zeros(len(jobs_a), dtype=bool)])
        self.mu = np.concatenate([self.mu, np.zeros(len(new))])

    def _add(self, full: np.ndarray) -> None:
        m = len(full)
        types, counts = self.data["type"][full], self.data["count"][full]
        indices = np.empty(2 * m, dtype=np.int32)
        indices[0::2], indices[1::2] = types, self.col_job[full] + self.n_types
        data = np.ones(2 * m)
        data[0::2] = counts
        self.highs.addCols(m, np.zeros(m), np.zeros(m), np.ones(m), 2 * m,
                           np.arange(0, 2 * m, 2, dtype=np.int32), indices, data)
        self.mcol = np.concatenate([self.mcol, full])
        self.in_model[full] = True

    def _priced(self, c_max: np.ndarray) -> np.ndarray:
        return c_max - self.lam[self.data["type"]] * self.data["count"] - self.mu[self.col_job]

    def solve(self, c_max: np.ndarray) -> tuple[np.ndarray, float] | None:
        """Re-solve with these values of every column (``max``, in the full column order);
        (x over every column, minimised objective), or None if HiGHS fails."""
        h = self.highs
        # columns the last prices already call for (a new job's, at its row price 0) join first
        want = np.flatnonzero(~self.in_model & (self._priced(c_max) > PRICE_EPS))
        if want.size:
            self._add(want)
        while True:
            n = len(self.mcol)
            h.changeColsCost(n, np.arange(n, dtype=np.int32), -c_max[self.mcol])
            if not _run(h):
                return None
            sol = h.getSolution()
            duals = -np.asarray(sol.row_dual, dtype=float)
            self.lam, self.mu = duals[:self.n_types], duals[self.n_types:]
            rc = self._priced(c_max)
            want = np.flatnonzero(~self.in_model & (rc > PRICE_EPS))
            if not want.size:
                break
            self.rounds += 1
            self._add(want)
        self.hot_solves += 1
        self.model_cols += n
        xm = np.asarray(sol.col_value, dtype=float)
        x = np.zeros(len(self.col_job))
        x[self.mcol] = xm
        fun = h.getInfo().objective_function_value
        # columns at zero far below their job's best leave (non-basic: the basis stays valid)
        drop = np.flatnonzero((xm <= 0.0) & (rc[self.mcol] < -DROP_BELOW))
        if drop.size:
            h.deleteCols(len(drop), drop.astype(np.int32))
            self.in_model[self.mcol[drop]] = False
            self.mcol = np.delete(self.mcol, drop)
        return x, fun
