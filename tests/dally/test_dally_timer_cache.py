"""The delay tuner's remembered answers: a recorded wait changes the timer, counts stay per evaluation."""

from __future__ import annotations

import math

from dlsched.policies.dally.tuner import DelayTuner


def _fresh_value(waits):
    mean = math.fsum(waits) / len(waits)
    if len(waits) < 2:
        return mean
    return mean + 2.0 * math.sqrt(math.fsum((x - mean) ** 2 for x in waits) / (len(waits) - 1))


def test_a_recorded_wait_is_seen_by_the_next_timer_and_every_evaluation_is_counted():
    t = DelayTuner({"machine": 7.0, "rack": 9.0}, history_n=3)
    assert t.timer("rack", 4, 0.0) == 9.0 and t.timer("rack", 4, 1.0) == 9.0
    waits = []
    for i, w in enumerate([5.0, 1.0, 8.0, 2.0]):
        t.record("rack", 4, float(i), w)
        waits = (waits + [w])[-3:]
        assert t.timer("rack", 4, float(i)) == _fresh_value(waits)
        assert t.timer("rack", 4, float(i)) == _fresh_value(waits)
    t.count("rack", 5, 2)  # answers given to many jobs at once
    c = t.counts["rack"]
    assert (c.evaluations, c.fallbacks) == (2 + 8 + 5, 2 + 2)
    assert t.answer("machine", 4, 0.0) == (7.0, True) and t.counts["machine"].evaluations == 0


def test_a_time_window_is_applied_at_every_answer():
    t = DelayTuner({"machine": 7.0, "rack": 9.0}, history_n=None, history_s=10.0)
    t.record("machine", 2, 0.0, 3.0)
    assert t.timer("machine", 2, 5.0) == 3.0
    assert t.timer("machine", 2, 11.0) == 7.0  # the wait left the window: the default again
