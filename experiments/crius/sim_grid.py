"""The 1,280-GPU Crius simulation grid (section 8.4, scenario ``sim``), one point at a time.

``dlsched reproduce crius`` runs this grid inside the full reproduction (after the testbed's),
all 18 points in one process.  This script runs the same points (``crius_grid.run_point``, the
same code and so the same figures) one per process, so a long grid can be spread over time or
machines, and collects whatever points have finished into the grid's table and verdicts:

    python experiments/crius/sim_grid.py point --seed 0 --load 1 --setting derived --out DIR
    python experiments/crius/sim_grid.py points --setting derived --out DIR   # its 9 points in turn
    python experiments/crius/sim_grid.py collect --out DIR
    python experiments/crius/sim_grid.py points --setting authors --skip gandiva,sia --out DIR

``point`` writes ``DIR/points/<seed>-x<load>-<setting>.json`` (the point's runs, as the grid's json
holds them, its headline values and each run's CPU seconds; ``--skip`` leaves policies out, whose
rows then get no value at that point, so their verdicts stand over fewer points).  ``collect`` writes ``DIR/sim_grid.json``
and ``DIR/sim_grid.md`` from the points present and lists which points are missing: a verdict over
fewer than the grid's points says so in its count (e.g. ``reproduced (9/9)`` over the derived half).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dlsched.experiments import crius_grid
from dlsched.experiments.grid import GridPoint, markdown

SCENARIO = "sim"


def _point_file(out: Path, p: GridPoint) -> Path:
    return out / "points" / f"{p.seed}-x{p.load:g}-{p.setting}.json"


def run_one(p: GridPoint, out: Path, skip: tuple[str, ...] = ()) -> Path:
    cpu: dict[str, float] = {}

    def progress(pol, m):
        cpu[pol] = round(m["cpu_s"], 1)
        print(f"  {p.label()}: {pol} done ({m['cpu_s']:.1f} CPU s)", file=sys.stderr, flush=True)

    c0 = time.process_time()
    point, values = crius_grid.run_point(SCENARIO, False, p, out, progress, skip)
    dest = _point_file(out, p)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps({"point": point, "values": values, "cpu_s": cpu,
                                "cpu_s_total": round(time.process_time() - c0, 1)},
                               indent=1, sort_keys=True, default=float) + "\n")
    return dest


def collect(out: Path) -> str:
    files = sorted((out / "points").glob("*.json"))
    points = [json.loads(f.read_text())["point"] for f in files]
    results = crius_grid.collect(SCENARIO, False, points)
    done = {GridPoint(d["seed"], float(d["load"]), d["setting"]) for d in points}
    missing = [p for p in crius_grid.grid_spec(SCENARIO, False).points() if p not in done]
    crius_grid.write_grid(SCENARIO, results, sorted(points, key=lambda d: (d["setting"], d["load"], d["seed"])), out)
    lines = [f"{len(done)} of {len(done) + len(missing)} points run"]
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
    for p in (one, many):
        p.add_argument("--setting", choices=sorted(crius_grid.SIM_SETTINGS), required=True)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--skip", default="", help="policies to leave out, comma-separated (e.g. gandiva,sia: "
                       "the expensive ones); their rows get no value at the point")
    col = sub.add_parser("collect", help="the grid's table from the points run so far")
    col.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        print(collect(a.out), end="")
        return 0
    a.out.mkdir(parents=True, exist_ok=True)
    if a.cmd == "point":
        pts = [GridPoint(a.seed, a.load, a.setting)]
    else:
        pts = [p for p in crius_grid.grid_spec(SCENARIO, False).points() if p.setting == a.setting]
    for p in pts:
        if a.cmd == "points" and _point_file(a.out, p).exists():
            continue
        skip = tuple(x for x in a.skip.split(",") if x)
        print(f"wrote {run_one(p, a.out, skip)}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
