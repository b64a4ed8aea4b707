"""The Python API: runs from a notebook or a script, results as pandas data frames.

    import dlsched
    run = dlsched.simulate(cluster="crius-testbed", policy="fcfs", jobs=100)
    run.summary["avg_jct"], run.jobs.head(), run.series.tail()

Keywords are the ``dlsched simulate`` flags, underscored (``--fit-requests`` is ``fit_requests``,
``--out-format`` is ``out_format``); a run is described by a ``RunSpec`` and built by
``dlsched.run`` exactly as the command line builds it, so the same keywords give the same
``jobs.csv`` byte for byte.  Errors in what is given are ``dlsched.errors.InputError`` naming the
keyword (or file, line and field).
"""

from __future__ import annotations

import inspect
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlsched import defaults as D
from dlsched.errors import InputError
from dlsched.perf.default import DEFAULT_PERF
from dlsched.run.spec import DEFAULT_CLUSTER, RunSpec


@dataclass
class Results:
    """One run's results: ``jobs`` (one row per job) and ``series`` (cluster state over time) as
    pandas data frames, ``summary`` the headline figures, ``params`` what produced them."""

    summary: dict
    params: dict
    jobs: Any  # pandas.DataFrame
    series: Any  # pandas.DataFrame
    path: Path | None = None  # the results folder, when the run wrote (or was read from) one

    @property
    def spec(self) -> RunSpec | None:
        """The run's specification (None for results written without one, e.g. a live run)."""
        doc = self.params.get("spec")
        return None if doc is None else RunSpec.from_dict(doc)

    @property
    def policy(self) -> str:
        return str(self.params.get("policy", ""))

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"Results(policy={self.policy!r}, jobs={len(self.jobs)}{where})"


@dataclass
class Comparison:
    """Several policies' results on the same cluster and jobs, by policy name."""

    runs: dict[str, Results] = field(default_factory=dict)
    path: Path | None = None

    def __getitem__(self, policy: str) -> Results:
        return self.runs[policy]

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def table(self):
        """One row per policy, one column per summary figure (a pandas data frame)."""
        import pandas as pd

        return pd.DataFrame({name: r.summary for name, r in self.runs.items()}).T


def make_spec(*, cluster: str | dict = DEFAULT_CLUSTER, placement: str = "packed", policy: str = "fcfs",
         option: list[str] | tuple[str, ...] = (), options: dict | None = None,
         trace: str | None = None, format: str = "auto", jobs: int | None = None, days: float | None = None,
         arrival_rate: float = 1.0, workload: str | None = None, load: float | None = None,
         time_scale: float | None = None, skip_bad_rows: bool = False, fit_requests: bool = False, seed: int = 0,
         perf: str = DEFAULT_PERF, tier_profile: str | None = None, throughputs: str | None = None,
         network: str = "off", comm: str | None = None, comm_levels: int = 8, comm_reserved: int = 2,
         charge_self_collisions: bool = False, start_overhead: float = D.START_OVERHEAD_S,
         restore_base: float = D.RESTORE_BASE_S, restore_per_gb: float = D.RESTORE_S_PER_GB,
         checkpoint_interval: float | None = D.CHECKPOINT_INTERVAL_S, max_time: float | None = None,
         debug: bool = False) -> RunSpec:
    """The ``RunSpec`` the keywords describe; ``option``: ``KEY=VALUE`` texts as ``--option``,
    ``options``: typed values ({"round_s": 60.0}); both are checked against the policy."""
    if not isinstance(policy, str):
        raise InputError(f"policy must be a policy name, got {policy!r}", field="policy")
    if isinstance(option, str):
        option = [option]
    typed = _policy_options(list(option), options, [policy])[policy]
    doc = {"workload": {"trace": None if trace is None else str(trace), "format": format, "jobs": jobs, "days": days,
                        "skip_bad_rows": skip_bad_rows, "fit_requests": fit_requests,
                        "arrival_rate": arrival_rate, "name": workload, "load": load, "time_scale": time_scale},
           "cluster": {"name": cluster if isinstance(cluster, dict) else str(cluster), "placement": placement},
           "policy": {"name": policy, "options": typed},
           "perf": {"model": perf, "tier_profile": tier_profile,
                    "throughputs": None if throughputs is None else str(throughputs)},
           "network": {"model": network, "comm": comm, "comm_levels": comm_levels, "comm_reserved": comm_reserved,
                       "charge_self_collisions": charge_self_collisions},
           "engine": {"start_overhead": start_overhead, "restore_base": restore_base,
                      "restore_per_gb": restore_per_gb, "checkpoint_interval": checkpoint_interval,
                      "max_time": max_time, "debug": debug},
           "seed": seed}
    return RunSpec.from_dict(doc)  # each value type-checked, errors naming its field


_SPEC_DEFAULTS = {k: p.default for k, p in inspect.signature(make_spec).parameters.items()}


def simulate(*, out: str | Path | None = None, out_format: str = "csv",
             spec: RunSpec | dict | str | Path | None = None, links: str = "summary", **keywords) -> Results:
    """Simulate one policy (the ``dlsched simulate`` command); keywords as ``make_spec``.

    ``spec``: a ``RunSpec``, its dict, or a results folder / summary.json to rerun (then no other
    run keyword may be given).  ``out``: also write the results folder there, as CSV or
    (``out_format="parquet"``) Parquet tables; ``links``: links.csv's form under the flow network, as
    ``--links`` (summary, full or none)."""
    from dlsched.run.execute import execute

    run_spec = _resolve(spec, keywords)
    if out is not None:
        from dlsched.run.preflight import check_out_dir

        check_out_dir(str(out), option="out")  # before the run, not after it
    with tempfile.TemporaryDirectory(prefix="dlsched-") as scratch:
        folder = Path(out) if out is not None else Path(scratch) / "run"
        execute(run_spec, folder, out_format=out_format, links=links)
        results = load_results(folder)
    if out is None:
        results.path = None
    return results


def compare(*, policies: list[str] | tuple[str, ...] = ("fcfs", "fcfs-backfill"), out: str | Path | None = None,
            out_format: str = "csv", option: list[str] | tuple[str, ...] = (), options: dict | None = None,
            links: str = "summary", **keywords) -> Comparison:
    """Each policy on the same cluster and jobs (the ``dlsched compare`` command).

    ``option``: ``KEY=VALUE`` (to every policy declaring KEY) or ``POLICY.KEY=VALUE`` texts;
    ``options``: typed values by policy name ({"tiresias": {"round_s": 60.0}})."""
    from dlsched.policies.registry import policy_entry, used_options
    from dlsched.run.build import build_policy, prepare
    from dlsched.run.execute import execute, write_compare

    if isinstance(policies, str):  # "fcfs,tiresias", as --policies
        policies = [n.strip() for n in policies.split(",") if n.strip()]
    names = list(dict.fromkeys(policies))
    if not names or not all(isinstance(n, str) and n for n in names):
        raise InputError(f"policies must be a list of policy names, got {policies!r}", field="policies")
    if "policy" in keywords:
        raise InputError("compare takes policies=[...], not policy=", field="policy")
    typed = _policy_options(list(option), None, names)
    for name, given in (options or {}).items():
        if name not in typed:
            raise InputError(f"options for {name!r}, which is not among the policies {names}", field="options")
        typed[name].update(_policy_options([], given, [name])[name])
    base = _resolve(None, keywords)
    specs = [base.with_policy(n, typed[n]) for n in names]
    for s in specs:  # a bad name or option fails before any job is read
        build_policy(s.policy)
    if out is not None:
        from dlsched.run.preflight import check_out_dir

        for n in ["", *names]:
            check_out_dir(str(Path(out) / (policy_entry(n).label if n else "")), option="out")
    prep = prepare(base)
    with tempfile.TemporaryDirectory(prefix="dlsched-") as scratch:
        root = Path(out) if out is not None else Path(scratch) / "compare"
        summaries = {}
        for s in specs:  # each in a folder named by its label (a plugin's own short name)
            label = policy_entry(s.policy.name).label
            run = execute(s, root / label, prepared=prep, out_format=out_format, links=links)
            summaries[label] = run.result.summary
        write_compare(root, prep, names, {n: used_options(n, typed[n]) for n in names}, summaries)
        result = load_results(root)
    if out is None:
        result.path = None
        for r in result.runs.values():
            r.path = None
    return result


def load_results(path: str | Path) -> Results | Comparison:
    """A results folder written by ``simulate`` (CSV or Parquet), or a ``compare`` root (each
    policy's folder)."""
    from dlsched.report.frames import read_frame, table_path
    from dlsched.report.io import results_dirs

    root = Path(path)
    dirs = results_dirs(root)
    runs = {}
    for d in dirs:
        jobs, series = table_path(d, "jobs"), table_path(d, "series")
        summary_path = d / "summary.json"
        try:
            doc = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
        except json.JSONDecodeError as e:
            raise InputError(f"not JSON: {e.msg}", file=str(summary_path), line=e.lineno) from None
        import pandas as pd

        r = Results(doc.get("summary", {}), doc.get("params", {}), read_frame(jobs),
                    read_frame(series) if series else pd.DataFrame(), d)
        runs[r.policy or d.name] = r
    if dirs == [root]:
        return next(iter(runs.values()))
    return Comparison(runs, root)


def _resolve(given, keywords: dict) -> RunSpec:
    unknown = sorted(set(keywords) - set(_SPEC_DEFAULTS))
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(_SPEC_DEFAULTS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(f"unknown keyword {unknown[0]!r}{hint}", field=unknown[0])
    if given is None:
        return make_spec(**keywords)
    if keywords:
        raise InputError(f"spec= describes the whole run; drop {', '.join(sorted(keywords))} (or drop spec=)",
                         field="spec")
    if isinstance(given, RunSpec):
        return given
    if isinstance(given, dict):
        return RunSpec.from_dict(given)
    from dlsched.run.params import read_spec

    return read_spec(given)


def _policy_options(pairs: list[str], typed: dict | None, names: list[str]) -> dict[str, dict]:
    from dlsched.run.options import policy_options

    chosen = policy_options(pairs, names)
    if typed:
        if len(names) != 1:
            raise InputError("options= for several policies must be keyed by policy name", field="options")
        if not isinstance(typed, dict):
            raise InputError(f"options must be a dict of option values, got {typed!r}", field="options")
        from dlsched.policies.registry import make_policy

        make_policy(names[0], **typed)  # checks each name and value against the policy's declaration
        chosen[names[0]] = {**chosen[names[0]], **typed}
    return chosen
