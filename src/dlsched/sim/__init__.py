"""Discrete-event, fluid-progress simulator."""

from dlsched.sim.engine import SimConfig, SimResult, Simulator

__all__ = ["SimConfig", "SimResult", "Simulator"]
