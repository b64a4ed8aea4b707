"""The 1,280-GPU Crius simulation grid (section 8.4, scenario ``sim``), one point at a time.

``dlsched reproduce crius`` runs this grid inside the full reproduction (after the testbed's),
all 18 points in one process.  This script runs the same points (``crius_grid.run_point``, the
same code and so the same figures) one per process, so a long grid can be spread over time or
machines, and collects whatever points have finished into the grid's table and verdicts:

    python experiments/crius/sim_grid.py point --seed 0 --load 1 --setting derived --out DIR
    python experiments/crius/sim_grid.py points --setting derived --out DIR   # its 9 points in turn
    python experiments/crius/sim_grid.py collect --out DIR
    python experiments/crius/sim_grid.py points --setting authors --skip gandiva,sia --out DIR
    python experiments/crius/sim_grid.py points --setting authors --add crius-ddl,elasticflow --out DIR
    python experiments/crius/sim_grid.py points --setting authors --add elasticflow-drop --out DIR

``--scenario`` names the arrival rate (``crius_grid.SIM_ARRIVALS``): ``sim`` (default) centres
the grid on the authors' own rate, ``sim-4x`` on the trace compressed 4x (the former default,
``dlsched reproduce crius-4x``).  Keep one scenario per ``--out``.

``point`` writes ``DIR/points/<seed>-x<load>-<setting>.json`` (the point's runs, as the grid's json
holds them, its headline values, each run's CPU seconds and each run's JCTs finished by the
authors' horizon; ``--skip`` leaves policies out, whose rows then get no value at that point, so
their verdicts stand over fewer points).  ``--add`` runs only the named policies (or labelled rows such as ``elasticflow-drop``,
``crius.OWN_PAPER_ROWS``) at points already
written that lack one of them and puts them into those points (replacing rows of the same name), recomputing the
authors' padded JCT over every row, as one run of them all would.  ``collect`` writes
``DIR/<scenario>_grid.json`` and ``DIR/<scenario>_grid.md`` from the points present and lists which
points are missing: a verdict over fewer than the grid's points says so in its count (e.g.
``reproduced (9/9)`` over the derived half).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dlsched.experiments import crius_grid
from dlsched.experiments.grid import GridPoint, markdown

def _point_file(out: Path, p: GridPoint) -> Path:
    return out / "points" / f"{p.seed}-x{p.load:g}-{p.setting}.json"


def run_one(scenario: str, p: GridPoint, out: Path, skip: tuple[str, ...] = ()) -> Path:
    cpu: dict[str, float] = {}
    c0 = time.process_time()
    h_jct: dict = {}
    point, values = crius_grid.run_point(scenario, False, p, out, _progress(p, cpu), skip, h_jct)
    return _write(out, p, point, values, cpu, round(time.process_time() - c0, 1), h_jct)


def add_policies(scenario: str, p: GridPoint, out: Path, pols: list[str]) -> Path:
    """Run ``pols`` at a point already written and put their rows into it."""
    from dlsched.experiments.crius import run_scenario

    dest = _point_file(out, p)
    d = json.loads(dest.read_text())
    if "h_jct" not in d:
        raise SystemExit(f"{dest}: written without the horizon JCTs, so rows cannot be added to it; "
                         f"run the point again")
    cpu = dict(d["cpu_s"])
    c0 = time.process_time()
    cluster, jobs = crius_grid.point_workload(scenario, p)
    new = run_scenario(scenario, cluster, jobs, pols, progress=_progress(p, cpu),
                       setting=crius_grid.setting_of(scenario, p.setting).costs, seed=p.seed)
    rows = {k: {**r, "_h_jct": d["h_jct"][k]} for k, r in d["point"]["rows"].items() if k not in new}
    rows.update(new)
    skip = [x for x in d["point"].get("skipped", []) if x not in new]
    point, values = crius_grid.point_from_rows(scenario, p, rows, tuple(skip))
    h_jct = {k: r["_h_jct"] for k, r in rows.items() if "_h_jct" in r}
    return _write(out, p, point, values, cpu, round(d["cpu_s_total"] + time.process_time() - c0, 1), h_jct)


def _progress(p: GridPoint, cpu: dict):
    def progress(pol, m):
        cpu[pol] = round(m["cpu_s"], 1)
        print(f"  {p.label()}: {pol} done ({m['cpu_s']:.1f} CPU s)", file=sys.stderr, flush=True)
    return progress


def _write(out: Path, p: GridPoint, point: dict, values: dict, cpu: dict, total: float, h_jct: dict) -> Path:
    dest = _point_file(out, p)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps({"point": point, "values": values, "cpu_s": cpu, "cpu_s_total": total,
                                "h_jct": h_jct}, indent=1, sort_keys=True, default=float) + "\n")
    return dest


def collect(scenario: str, out: Path) -> str:
    files = sorted((out / "points").glob("*.json"))
    points = [json.loads(f.read_text())["point"] for f in files]
    results = crius_grid.collect(scenario, False, points)
    done = {GridPoint(d["seed"], float(d["load"]), d["setting"]) for d in points}
    missing = [p for p in crius_grid.grid_spec(scenario, False).points() if p not in done]
    crius_grid.write_grid(scenario, results, sorted(points, key=lambda d: (d["setting"], d["load"], d["seed"])), out)
    lines = [f"{scenario}: {len(done)} of {len(done) + len(missing)} points run"]
    if missing:
        lines.append("not run: " + "; ".join(p.label() for p in missing))
    return "\n".join(lines) + "\n\n" + markdown(results)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    one = sub.add_parser("point", help="run one grid point")
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--load", type=float, required=True)
    many = sub.add_parser("points", help="run a setting's points in turn, skipping those already written")
    col = sub.add_parser("collect", help="the grid's table from the points run so far")
    for p in (one, many, col):
        p.add_argument("--scenario", choices=sorted(crius_grid.SIM_ARRIVALS), default=crius_grid.DEFAULT_SIM,
                       help="the arrival rate: sim = the authors' own (default), sim-4x = compressed 4x")
        p.add_argument("--out", type=Path, required=True)
    for p in (one, many):
        p.add_argument("--setting", choices=sorted(crius_grid.SIM_SETTINGS), required=True)
        p.add_argument("--skip", default="", help="policies to leave out, comma-separated (e.g. gandiva,sia: "
                       "the expensive ones); their rows get no value at the point")
        p.add_argument("--add", default="", help="policies to run at points already written and put into them "
                       "(comma-separated); points not yet written are left alone")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        print(collect(a.scenario, a.out), end="")
        return 0
    a.out.mkdir(parents=True, exist_ok=True)
    if a.cmd == "point":
        pts = [GridPoint(a.seed, a.load, a.setting)]
    else:
        pts = [p for p in crius_grid.grid_spec(a.scenario, False).points() if p.setting == a.setting]
    add = [x for x in a.add.split(",") if x]
    skip = tuple(x for x in a.skip.split(",") if x)
    for p in pts:
        written = _point_file(a.out, p).exists()
        if add:
            if written and not set(add) <= set(json.loads(_point_file(a.out, p).read_text())["point"]["rows"]):
                print(f"wrote {add_policies(a.scenario, p, a.out, add)}", file=sys.stderr, flush=True)
            continue
        if a.cmd == "points" and written:
            continue
        print(f"wrote {run_one(a.scenario, p, a.out, skip)}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
