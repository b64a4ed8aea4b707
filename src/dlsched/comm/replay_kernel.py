"""The two-job strict-priority replay behind CRUX's correction factors, compiled (numba).

``correction._moved`` steps two jobs through 20 iterations of the longer one on a grid of 1/200 of the
shorter: up to hundreds of thousands of steps per pair when the iterations differ a lot, which in
Python was a third of a path-choosing run's time on the Lingjun fabric.  Plain float adds, subtracts,
minima and comparisons in the same order as the Python loop it replaces (kept as the test oracle in
``tests/crux/test_comm_policies.py``), compiled without ``fastmath``, so the results are the same bits.
Imported on the first correction factor, so start-up does not load numba.
"""

from __future__ import annotations

from dlsched.network.fluid_kernel import _compiled


def _replay(it0: float, comm0: float, start0: float, it1: float, comm1: float, start1: float,
            first: int, dt: float, steps: int) -> tuple[float, float]:
    phase0 = phase1 = 0.0  # time into the current iteration
    left0 = left1 = 0.0  # communication seconds still to send this iteration
    started0 = started1 = False
    moved0 = moved1 = 0.0
    for _ in range(steps):
        free = dt
        for k in range(2):
            if (k == 0) == (first == 0):  # job 0's turn
                if not started0 and phase0 >= start0 - 1e-12:
                    started0, left0 = True, comm0
                if started0 and left0 > 0 and free > 0:
                    send = min(left0, free)
                    left0 -= send
                    moved0 += send
                    free -= send
            else:
                if not started1 and phase1 >= start1 - 1e-12:
                    started1, left1 = True, comm1
                if started1 and left1 > 0 and free > 0:
                    send = min(left1, free)
                    left1 -= send
                    moved1 += send
                    free -= send
        phase0 += dt
        # the iteration ends once its computation time has passed and its communication is sent
        if started0 and left0 <= 1e-12 and phase0 >= it0 - 1e-12:
            phase0, started0 = 0.0, False
        phase1 += dt
        if started1 and left1 <= 1e-12 and phase1 >= it1 - 1e-12:
            phase1, started1 = 0.0, False
    return moved0, moved1


replay = _compiled(_replay)
