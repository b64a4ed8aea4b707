"""The Crius reproduction's workloads; they live in the package (``dlsched.experiments.crius_scenarios``)
so that ``dlsched reproduce crius`` runs them too.  Kept here for the scripts beside it."""

from dlsched.experiments.crius_scenarios import (  # noqa: F401
    ARENA, arena_available, read_arena, sim, testbed, tiled)
