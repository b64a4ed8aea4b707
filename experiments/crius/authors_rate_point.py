"""One simulation point at the authors' own arrival rate (the arena trace as it is: the ``sim``
grid's seed 0, load x1; ``sim-4x``'s load x0.25 gives the same jobs), the paper's baselines but
Gandiva, round-based Gavel and the ablations, with the run-out and the authors' one-week
figures (docs/crius.md, "Crius-NA and Crius-NH").  The whole grid around it:
``experiments/crius/sim_grid.py``.

    python experiments/crius/authors_rate_point.py derived|authors [OUT.json]
"""

import json, sys
from dlsched.experiments import crius_grid
from dlsched.experiments.crius import run_scenario, padded_jct
from dlsched.experiments.grid import GridPoint
setting = sys.argv[1]
p = GridPoint(0, 1.0, setting)
cluster, jobs = crius_grid.point_workload("sim", p)
rows = run_scenario("sim", cluster, jobs, ["crius", "fcfs", "gavel-admit", "elasticflow-ls", "gavel", "crius-na", "crius-nh"],
                    setting=crius_grid.setting_of("sim", setting).costs, seed=0)
padded_jct(rows)
c = rows["crius"]
for k, r in rows.items():
    lo = (1 - c["avg_jct_h"] / r["avg_jct_h"]) * 100
    lo_a = (1 - c["h_padded_jct_h"] / r["h_padded_jct_h"]) * 100 if r.get("h_padded_jct_h") else None
    print(f"{k}: JCT {r['avg_jct_h']:.1f} h, Crius lower by {lo:.1f}% (run out), {lo_a:.1f}% (authors'); "
          f"finished by 1 week {r['h_finished']} (Crius/it {c['h_finished']/max(1,r['h_finished']):.2f}x); "
          f"avg thr {r['avg_thr']:.0f}, 1-week avg thr {r['h_avg_thr']:.0f}; cpu {r['cpu_s']:.1f}")
if len(sys.argv) > 2:
    json.dump({k: {m: v for m, v in r.items() if not m.startswith('_')} for k, r in rows.items()},
          open(sys.argv[2], "w"), indent=1, default=float)
