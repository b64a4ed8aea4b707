"""The two-job strict-priority replay behind CRUX's correction factors, compiled (numba).

``correction._moved`` steps two jobs through 20 iterations of the longer one on a grid of 1/200 of the
shorter: up to hundreds of thousands of steps per pair when the iterations differ a lot, which in
Python was a third of a path-choosing run's time on the Lingjun fabric.  Plain float adds, subtracts,
minima and comparisons in the same order as the Python loop it replaces (kept as the test oracle in
``tests/crux/test_comm_policies.py``), compiled without ``fastmath``, so the results are the same bits.
Imported on the first correction factor, so start-up does not load numba.
"""

from __future__ import annotations

import numpy as np

from dlsched.network.fluid_kernel import _compiled


def _replay(it0: float, comm0: float, start0: float, it1: float, comm1: float, start1: float,
            first: int, dt: float, steps: int) -> tuple[float, float]:
    it = np.array([it0, it1])
    comm = np.array([comm0, comm1])
    start = np.array([start0, start1])
    phase = np.zeros(2)  # time into the current iteration
    left = np.zeros(2)  # communication seconds still to send this iteration
    started = np.zeros(2, dtype=np.bool_)
    moved = np.zeros(2)
    for _ in range(steps):
        free = dt
        for k in range(2):
            i = first if k == 0 else 1 - first  # the job served first, then the other
            if not started[i] and phase[i] >= start[i] - 1e-12:
                started[i], left[i] = True, comm[i]
            if started[i] and left[i] > 0 and free > 0:
                send = min(left[i], free)
                left[i] -= send
                moved[i] += send
                free -= send
        for i in range(2):
            phase[i] += dt
            # the iteration ends once its computation time has passed and its communication is sent
            if started[i] and left[i] <= 1e-12 and phase[i] >= it[i] - 1e-12:
                phase[i], started[i] = 0.0, False
    return moved[0], moved[1]


replay = _compiled(_replay)
