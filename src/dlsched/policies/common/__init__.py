"""Pieces several policies share: preemption for priority schedulers, re-planning and profiling costs."""
