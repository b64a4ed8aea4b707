"""Crius's headlines over a grid: seeds x load x the settings that decide them.

Each headline the paper reports (sections 8.3-8.6) is one row per baseline it names,
in the paper's own metric (average JCT, average queuing time, average and peak cluster
throughput, finished jobs, deadline satisfactory ratio), with the paper's direction:
Crius lower in JCT and queuing, higher in throughput, finished jobs and deadline ratio;
the ablations (NA, NH) worse than Crius.  Our additions are separate rows, labelled:
the extra baselines (round-based Gavel, Sia) and the Cells ablation (``crius-dp``).

The grid (``experiments.grid``):

* seeds: on the testbed, which 244 consecutive jobs of the trace (window ``seed``) and
  the truth's seeded deviation; in the simulation, the truth's deviation and a seeded
  jitter of the arrivals (seed 0 is the trace as it is);
* load: arrivals compressed by x0.5, x1, x2 (``grid.scale_arrivals``) around the scenario's
  own rate.  The simulation's default, ``sim``, is centred on the authors' own arrival rate
  (the arena trace's arrivals as they are, as the authors' simulator replays them);
  ``sim-4x`` is the former default, the trace's arrivals compressed 4x (so x2 .. x8 the
  authors' rate), kept selectable by name (``dlsched reproduce crius-4x``,
  ``experiments/crius/sim_grid.py --scenario sim-4x``);
* settings: the testbed's iteration divisor (100, shipped; 30) and the cost setting
  (derived; the authors' constants), both of which decide who wins there; the
  simulation runs the trace's own iterations, so only the cost setting.

``--quick`` runs the testbed under derived costs only, with the paper's baselines and
the Cells ablation (a smaller grid that finishes in about a minute).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from dlsched.experiments import crius_scenarios as scenarios
from dlsched.experiments.crius import OWN_PAPER_ROWS
from dlsched.experiments.grid import (PCT_POSITIVE, RATIO_ABOVE_ONE, RATIO_BELOW_ONE, GridHeadline, GridPoint,
                                      GridResult, GridSpec, markdown, run_grid, scale_arrivals, to_headline)

DP_JOBS_CRIUS = "crius (on crius-dp's jobs)"  # a row of a grid point's runs: the ablation's reference
PAPER_BASELINES = {"fcfs": "FCFS", "gandiva": "Gandiva", "gavel-admit": "Gavel", "elasticflow-ls": "ElasticFlow-LS"}
OUR_BASELINES = {"gavel": "Gavel (round-based time-sharing)", "sia": "Sia"}
TESTBED_JOBS = 244
# the 1,280-GPU simulation's scenarios by name: the arena trace's arrivals divided by this factor.
# "sim" replays them at the authors' own rate; "sim-4x" compresses them 4x (the grid's centre before)
SIM_ARRIVALS = {"sim": 1.0, "sim-4x": 4.0}
DEFAULT_SIM = "sim"


@dataclass(frozen=True)
class Setting:
    iter_div: int | None  # testbed only: iterations divided by this to fit a 6-hour window
    costs: str  # "derived" or "authors" (experiments.crius.SETTINGS)


TESTBED_SETTINGS = {"div100/derived": Setting(100, "derived"), "div30/derived": Setting(30, "derived"),
                    "div100/authors": Setting(100, "authors"), "div30/authors": Setting(30, "authors")}
SIM_SETTINGS = {"derived": Setting(None, "derived"), "authors": Setting(None, "authors")}


def grid_spec(scenario: str, quick: bool) -> GridSpec:
    if scenario != "testbed" and scenario not in SIM_ARRIVALS:
        raise ValueError(f"unknown Crius scenario {scenario!r}: testbed, {', '.join(SIM_ARRIVALS)}")
    if scenario == "testbed":
        names = ("div100/derived", "div30/derived") if quick else tuple(TESTBED_SETTINGS)
    else:
        names = tuple(SIM_SETTINGS)
    return GridSpec(settings=names)


def policies(scenario: str, quick: bool) -> list[str]:
    pols = ["crius", *PAPER_BASELINES, "crius-dp"]
    if quick:
        return pols
    pols += list(OUR_BASELINES)
    if scenario in SIM_ARRIVALS:
        pols += ["crius-na", "crius-nh", "crius-ddl", "elasticflow", *EF_OWN_PAPER]
    return pols


# ---------------------------------------------------------------- the headlines

# The authors' simulator stops after one week (2,000 rounds) and compares JCT by padding each policy's
# finished JCTs with the largest finished JCT of any policy up to Crius's finished count
# (experiments.crius.HORIZON_S, padded_jct); our runs go on until every job finishes, so both are read
# from the same runs: finished jobs only mean something at the horizon.
AUTHORS_JCT = "average JCT at 1 week, unfinished padded (authors' plotter)"
AUTHORS_NOTE = "jobs finished by 2,000 rounds; each job short of Crius's count counts at the largest finished JCT"
FINISHED = "jobs finished by 1 week (2,000 rounds)"
AUTHORS_THR = "average cluster throughput over the rounds above 100 samples/s in 1 week (authors' plotter)"
AUTHORS_DSR = "deadline satisfactory ratio: jobs ended by their deadline within 1 week (authors' simulator)"
AUTHORS_DDL_NOTE = ("jobs finished by 2,000 rounds; each job ElasticFlow finishes short of Crius-DDL's count "
                    "counts at the largest finished JCT (the authors' plotter, only_ddl)")


DDL_PADDED = "h_padded_ddl_jct_h"  # a row's JCT in the authors' Crius-DDL comparison (padded_jct)
# Fig. 20's baseline rows: ElasticFlow as the Crius authors ran it (reject=wait, PAPER_RUN_OPTIONS), and
# as its own paper defines it (crius.OWN_PAPER_ROWS: reject=drop), shown beside it, labelled
EF_OWN_PAPER = {"elasticflow-drop": " (own paper: drop)"}
assert set(EF_OWN_PAPER) <= set(OWN_PAPER_ROWS)
DDL_BASELINES = {"elasticflow": "", **EF_OWN_PAPER}  # row -> suffix of its headlines' "vs ElasticFlow"
EF_DROP_NOTE = ("ElasticFlow with reject=drop (its own paper's admission control: a job whose share does not "
                "fit is dropped at once); the Crius authors ran reject=wait")


def _lower(ref, other):
    """Percent by which ``ref`` is below ``other`` (the paper's "X% lower")."""
    return None if ref is None or not other else (1 - ref / other) * 100


def _times(a, b):
    return None if a is None or not b else a / b


def grid_headlines(scenario: str, quick: bool = False) -> list[GridHeadline]:
    rows: list[GridHeadline] = []
    if scenario == "testbed":
        src = "Fig. 14, up to, best of four"
        figs = [("JCT", "avg_jct_h", "average JCT", 48.9, "%"), ("queuing", "avg_queue_h", "average queuing time", 71.0, "%"),
                ("avg throughput", "avg_thr", "average cluster throughput", 1.49, "x"),
                ("peak throughput", "peak_thr", "peak cluster throughput", 1.36, "x")]
        for word, _, metric, paper, unit in figs:
            for pol, label in PAPER_BASELINES.items():
                name = f"{word} {'lower than' if unit == '%' else 'vs'} {label}"
                rows.append(GridHeadline(scenario, name, paper, unit, metric,
                                         PCT_POSITIVE if unit == "%" else RATIO_ABOVE_ONE, src))
    else:
        for pol, label, paper in (("fcfs", "FCFS", 81.3), ("elasticflow-ls", "ElasticFlow-LS", 75.8),
                                  ("gandiva", "Gandiva", 80.1), ("gavel-admit", "Gavel", 66.4)):
            rows.append(GridHeadline(scenario, f"JCT lower than {label}", paper, "%", "average JCT", PCT_POSITIVE,
                                     "Fig. 17a", note="every job run out"))
            rows.append(GridHeadline(scenario, f"JCT lower than {label}, authors' metric", paper, "%", AUTHORS_JCT,
                                     PCT_POSITIVE, "Fig. 17a", note=AUTHORS_NOTE))
        for word, metric, paper, src in (("finished jobs", "finished jobs", 1.29, "Fig. 17b, up to"),
                                         ("avg throughput", "average cluster throughput", 1.54, "Fig. 17c, up to"),
                                         ("peak throughput", "peak cluster throughput", 1.57, "Fig. 17c, up to")):
            for label in PAPER_BASELINES.values():
                rows.append(GridHeadline(scenario, f"{word} vs {label}", paper, "x",
                                         FINISHED if word == "finished jobs" else metric, RATIO_ABOVE_ONE, src))
                if word == "avg throughput":
                    rows.append(GridHeadline(scenario, f"{word} vs {label}, authors' metric", paper, "x",
                                             AUTHORS_THR, RATIO_ABOVE_ONE, src))
        # section 8.6: each ablation against Crius in JCT, finished jobs, average and peak throughput
        for tag, jct, fin, avg, peak in (("NA", 2.54, 0.9131, 0.864, 0.859), ("NH", 3.53, 0.832, 0.827, 0.823)):
            rows += [GridHeadline(scenario, f"{tag}: JCT vs Crius", jct, "x", "average JCT", RATIO_ABOVE_ONE, "8.6",
                                  note="every job run out"),
                     GridHeadline(scenario, f"{tag}: JCT vs Crius, authors' metric", jct, "x", AUTHORS_JCT,
                                  RATIO_ABOVE_ONE, "8.6", note=AUTHORS_NOTE),
                     GridHeadline(scenario, f"{tag}: finished jobs vs Crius", fin, "x", FINISHED,
                                  RATIO_BELOW_ONE, "8.6"),
                     GridHeadline(scenario, f"{tag}: avg throughput vs Crius", avg, "x", "average cluster throughput",
                                  RATIO_BELOW_ONE, "8.6"),
                     GridHeadline(scenario, f"{tag}: avg throughput vs Crius, authors' metric", avg, "x",
                                  AUTHORS_THR, RATIO_BELOW_ONE, "8.6"),
                     GridHeadline(scenario, f"{tag}: peak throughput vs Crius", peak, "x", "peak cluster throughput",
                                  RATIO_BELOW_ONE, "8.6")]
        # Fig. 20: Crius-DDL against deadline-aware ElasticFlow, as the authors ran it and as its own paper
        for ef, tail in DDL_BASELINES.items():
            rows += _ddl_headlines(scenario, tail, EF_DROP_NOTE if ef != "elasticflow" else "")
    if not quick:
        for pol, label in OUR_BASELINES.items():
            rows.append(GridHeadline(scenario, f"JCT lower than {label}", 0.0, "%", "average JCT", PCT_POSITIVE,
                                     ours_label=True))
    rows += [GridHeadline(scenario, "Cells ablation: DP-only planning JCT vs Crius", 0.0, "x", "average JCT",
                          RATIO_ABOVE_ONE, ours_label=True,
                          note="crius-dp plans and runs data-parallel only; Crius re-run on the jobs "
                               "crius-dp runs, so both schedule the same work; > 1: the Cells help"),
             GridHeadline(scenario, "Cells ablation: jobs DP-only planning cannot run", 0.0, "jobs",
                          "unfinished jobs, DP-only minus Crius", PCT_POSITIVE, ours_label=True,
                          note="> 0: jobs only a pipeline or tensor plan fits in memory")]
    return rows


def _ddl_headlines(scenario: str, tail: str, why: str) -> list[GridHeadline]:
    """Fig. 20's rows against one ElasticFlow row; ``tail`` labels which (empty: as the Crius authors ran it)."""
    vs = f"ElasticFlow{tail}"

    def note(n: str = "") -> str:
        return "; ".join(x for x in (n, why) if x)
    return [GridHeadline(scenario, f"DDL: deadline ratio vs {vs}", 1.69, "x", "deadline satisfactory ratio",
                         RATIO_ABOVE_ONE, "Fig. 20", note=note("every job run out")),
            GridHeadline(scenario, f"DDL: deadline ratio vs {vs}, authors' metric", 1.69, "x", AUTHORS_DSR,
                         RATIO_ABOVE_ONE, "Fig. 20", note=note()),
            GridHeadline(scenario, f"DDL: JCT lower than {vs}", 33.1, "%", "average JCT", PCT_POSITIVE,
                         "Fig. 20", note=note("every job run out; finished jobs only")),
            GridHeadline(scenario, f"DDL: JCT lower than {vs}, authors' metric", 33.1, "%", AUTHORS_JCT,
                         PCT_POSITIVE, "Fig. 20", note=note(AUTHORS_DDL_NOTE)),
            GridHeadline(scenario, f"DDL: avg throughput vs {vs}", 1.72, "x", "average cluster throughput",
                         RATIO_ABOVE_ONE, "Fig. 20", note=note()),
            GridHeadline(scenario, f"DDL: avg throughput vs {vs}, authors' metric", 1.72, "x", AUTHORS_THR,
                         RATIO_ABOVE_ONE, "Fig. 20", note=note()),
            GridHeadline(scenario, f"DDL: peak throughput vs {vs}", 1.96, "x", "peak cluster throughput",
                         RATIO_ABOVE_ONE, "Fig. 20", note=note())]


def point_values(scenario: str, rows: dict) -> dict[str, float | None]:
    """Every headline's value from one grid point's runs (``experiments.crius.run_scenario`` rows)."""
    c = rows["crius"]
    out: dict[str, float | None] = {}
    for pol, label in PAPER_BASELINES.items():
        b = rows.get(pol)
        if b is None:  # a point run without this baseline (sim_grid.py --skip): no value, not a tie
            continue
        out[f"JCT lower than {label}"] = _lower(c["avg_jct_h"], b["avg_jct_h"])
        if scenario == "testbed":  # the testbed figure reports queuing; the simulation, finished jobs
            out[f"queuing lower than {label}"] = _lower(c["avg_queue_h"], b["avg_queue_h"])
        else:
            out[f"JCT lower than {label}, authors' metric"] = _lower(c.get("h_padded_jct_h"), b.get("h_padded_jct_h"))
            out[f"finished jobs vs {label}"] = _times(c.get("h_finished"), b.get("h_finished"))
        out[f"avg throughput vs {label}"] = _times(c["avg_thr"], b["avg_thr"])
        if scenario != "testbed":
            out[f"avg throughput vs {label}, authors' metric"] = _times(c.get("h_avg_thr"), b.get("h_avg_thr"))
        out[f"peak throughput vs {label}"] = _times(c["peak_thr"], b["peak_thr"])
    if scenario != "testbed":
        for v, tag in (("crius-na", "NA"), ("crius-nh", "NH")):
            if v in rows:
                out[f"{tag}: JCT vs Crius"] = _times(rows[v]["avg_jct_h"], c["avg_jct_h"])
                out[f"{tag}: JCT vs Crius, authors' metric"] = _times(rows[v].get("h_padded_jct_h"),
                                                                     c.get("h_padded_jct_h"))
                out[f"{tag}: finished jobs vs Crius"] = _times(rows[v].get("h_finished"), c.get("h_finished"))
                out[f"{tag}: avg throughput vs Crius"] = _times(rows[v]["avg_thr"], c["avg_thr"])
                out[f"{tag}: avg throughput vs Crius, authors' metric"] = _times(rows[v].get("h_avg_thr"),
                                                                                c.get("h_avg_thr"))
                out[f"{tag}: peak throughput vs Crius"] = _times(rows[v]["peak_thr"], c["peak_thr"])
        for ef, tail in DDL_BASELINES.items():
            if "crius-ddl" not in rows or ef not in rows:
                continue
            d, e, vs = rows["crius-ddl"], rows[ef], f"ElasticFlow{tail}"
            out[f"DDL: deadline ratio vs {vs}"] = _times(d["ddl_ratio"], e["ddl_ratio"])
            out[f"DDL: JCT lower than {vs}"] = _lower(d["avg_jct_h"], e["avg_jct_h"])
            out[f"DDL: avg throughput vs {vs}"] = _times(d["avg_thr"], e["avg_thr"])
            out[f"DDL: deadline ratio vs {vs}, authors' metric"] = _times(d.get("h_ddl_ratio"), e.get("h_ddl_ratio"))
            out[f"DDL: JCT lower than {vs}, authors' metric"] = _lower(d.get(DDL_PADDED), e.get(DDL_PADDED))
            out[f"DDL: avg throughput vs {vs}, authors' metric"] = _times(d.get("h_avg_thr"), e.get("h_avg_thr"))
            out[f"DDL: peak throughput vs {vs}"] = _times(d["peak_thr"], e["peak_thr"])
    for pol, label in OUR_BASELINES.items():
        if pol in rows:
            out[f"JCT lower than {label}"] = _lower(c["avg_jct_h"], rows[pol]["avg_jct_h"])
    if "crius-dp" in rows:
        d = rows["crius-dp"]
        same = rows.get(DP_JOBS_CRIUS, c)  # Crius on the jobs DP-only planning can run at all
        out["Cells ablation: DP-only planning JCT vs Crius"] = _times(d["avg_jct_h"], same["avg_jct_h"])
        out["Cells ablation: jobs DP-only planning cannot run"] = float(d["jobs"] - d["finished"]
                                                                        - (c["jobs"] - c["finished"]))
    return out


# ---------------------------------------------------------------- the workloads of a grid point

def jitter_arrivals(jobs, seed: int):
    """Seed 0: the trace as it is; else each arrival moved by up to half the median gap, seeded."""
    if seed == 0 or len(jobs) < 2:
        return list(jobs)
    times = sorted(j.submit_time for j in jobs)
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    w = gaps[len(gaps) // 2] / 2
    rng = random.Random(seed)
    t0 = times[0]
    out = [j.with_(submit_time=round(max(t0, j.submit_time + rng.uniform(-w, w)), 3)) for j in jobs]
    return sorted(out, key=lambda j: (j.submit_time, j.job_id))


def point_workload(scenario: str, p: GridPoint):
    """(cluster, jobs) of one grid point."""
    if scenario == "testbed":
        s = TESTBED_SETTINGS[p.setting]
        n = len(scenarios.read_arena())
        start = (p.seed * TESTBED_JOBS) % max(1, n - TESTBED_JOBS)  # disjoint windows of the trace
        cluster, jobs, _ = scenarios.testbed(iter_div=s.iter_div, start=start, ddl_scale=10.0)
    else:
        cluster, jobs, _ = scenarios.sim(compress=SIM_ARRIVALS[scenario], ddl_scale=10.0)
        jobs = jitter_arrivals(jobs, p.seed)
    return cluster, scale_arrivals(jobs, p.load)


def setting_of(scenario: str, name: str) -> Setting:
    return (TESTBED_SETTINGS if scenario == "testbed" else SIM_SETTINGS)[name]


def run_point(scenario: str, quick: bool, p: GridPoint, out: Path, progress=None,
              skip: tuple[str, ...] = (), h_jct: dict | None = None) -> tuple[dict, dict]:
    """One grid point: (its runs' rows as written to the grid's json, every headline's value there).

    The reference point (seed 0, load x1) of each setting also writes its runs under ``out``.
    ``skip``: policies left out (their headlines get no value at this point).  ``h_jct``, when given,
    receives each row's JCTs (h) finished by the horizon, so policies run later can join the point
    (``point_from_rows``) with the authors' padded JCT as one run of them all would give."""
    from dlsched.experiments.crius import run_scenario, table

    pols = [x for x in policies(scenario, quick) if x not in skip]
    cluster, jobs = point_workload(scenario, p)
    central = p.seed == 0 and p.load == 1.0
    where = out / (scenario if p.setting == grid_spec(scenario, quick).settings[0] else
                   f"{scenario}-{p.setting.replace('/', '-')}") if central else None
    costs = setting_of(scenario, p.setting).costs
    rows = run_scenario(scenario, cluster, jobs, pols, out=where, progress=progress, setting=costs, seed=p.seed)
    if "crius-dp" in rows:
        # the jobs DP-only planning cannot run (no data-parallel plan fits in memory) would free
        # their GPUs for the rest; the ablation compares both planners on the same jobs
        ran = set(rows["crius-dp"]["_jct"])
        same = [j for j in jobs if j.job_id in ran]
        rows[DP_JOBS_CRIUS] = (rows["crius"] if len(same) == len(jobs) else
                               run_scenario(scenario, cluster, same, ["crius"], progress=progress,
                                            setting=costs, seed=p.seed)["crius"])
    point, values = point_from_rows(scenario, p, rows, skip)
    if h_jct is not None:
        h_jct.update({k: r["_h_jct"] for k, r in rows.items() if "_h_jct" in r})
    if central:
        (out / f"{scenario}-{p.setting.replace('/', '-')}.md").write_text(table(f"{scenario} ({p.label()})", rows))
    return point, values


def point_from_rows(scenario: str, p: GridPoint, rows: dict, skip=()) -> tuple[dict, dict]:
    """A point's json and headline values from its runs' rows (each with its ``_h_jct`` list, which
    the authors' padded JCT compares across every row of the point)."""
    from dlsched.experiments.crius import padded_jct

    # the authors' JCT comparison at their horizon (run-out rows unchanged), over the policies they ran:
    # a row of ours (a baseline as its own paper defines it) neither gets it nor moves the largest JCT
    ours = tuple(OWN_PAPER_ROWS)
    padded_jct(rows, skip=(DP_JOBS_CRIUS, *ours))
    # and their Crius-DDL comparison: ElasticFlow padded up to Crius-DDL's finished count
    padded_jct(rows, ref="crius-ddl", skip=(DP_JOBS_CRIUS, *ours), key=DDL_PADDED, only=("crius-ddl", "elasticflow"))
    # ElasticFlow as its own paper defines it: padded as if the authors had run it in place of theirs
    # (the largest JCT over their policies with this row instead of their ElasticFlow)
    for ef in EF_OWN_PAPER:
        padded_jct(rows, ref="crius-ddl", skip=(DP_JOBS_CRIUS, "elasticflow", *(o for o in ours if o != ef)),
                   key=DDL_PADDED, only=(ef,))
    timing = ("wall_s", "cpu_s")  # the machine's, not the run's: kept out so the file is reproducible
    point = {"seed": p.seed, "load": p.load, "setting": p.setting, **({"skipped": list(skip)} if skip else {}),
             "rows": {k: {m: v for m, v in r.items() if m not in timing and not m.startswith("_")}
                      for k, r in rows.items()}}
    return point, point_values(scenario, rows)


def write_grid(scenario: str, results: list[GridResult], points_json: list[dict], out: Path) -> None:
    """The grid's json (headlines and every point's runs) and its markdown table under ``out``."""
    (out / f"{scenario}_grid.json").write_text(json.dumps(
        {"headlines": [r.as_dict() for r in results], "points": points_json}, indent=1, sort_keys=True,
        default=float) + "\n")
    (out / f"{scenario}_grid.md").write_text(markdown(results))


def run(scenario: str, quick: bool, out: Path, progress=None) -> list[GridResult]:
    """The scenario's grid; results of the reference point (seed 0, load x1) per setting under ``out``."""
    points_json = []

    def one(p: GridPoint):
        point, values = run_point(scenario, quick, p, out, progress)
        points_json.append(point)
        return values

    results = run_grid(grid_headlines(scenario, quick), one, grid_spec(scenario, quick))
    write_grid(scenario, results, points_json, out)
    return results


def collect(scenario: str, quick: bool, points_json: list[dict]) -> list[GridResult]:
    """The grid's headlines from points run separately (``run_point``'s json): only those points,
    in the grid's order; a point not run is absent, never guessed."""
    spec = grid_spec(scenario, quick)
    by_point = {GridPoint(d["seed"], float(d["load"]), d["setting"]): d for d in points_json}
    unknown = [p for p in by_point if p not in set(spec.points())]
    if unknown:
        raise ValueError(f"points outside the {scenario} grid: {', '.join(p.label() for p in unknown)}")
    results = [GridResult(h) for h in grid_headlines(scenario, quick)]
    for p in spec.points():
        if p in by_point:
            vals = point_values(scenario, by_point[p]["rows"])
            for r in results:
                if r.headline.name in vals:  # absent: a policy the point was run without
                    r.values[p] = vals[r.headline.name]
    return results


def scenario_names(quick: bool, sim: str = DEFAULT_SIM) -> list[str]:
    return ["testbed"] if quick else ["testbed", sim]


def runs(quick: bool, sim: str = DEFAULT_SIM) -> int:
    # + 1 per point: Crius on the jobs crius-dp runs (the Cells ablation's reference)
    return sum(grid_spec(s, quick).size * (len(policies(s, quick)) + 1) for s in scenario_names(quick, sim))


def reproduce(quick: bool, out: Path, progress=None, sim: str = DEFAULT_SIM):
    """``dlsched reproduce crius``: the headlines over the grid, as the registry's Headlines;
    ``sim`` names the simulation's scenario (``SIM_ARRIVALS``)."""
    total = runs(quick, sim)
    done = 0

    def step(pol, m):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, pol)
    heads = []
    for s in scenario_names(quick, sim):
        heads += [to_headline(r) for r in run(s, quick, out, step)]
    return heads
