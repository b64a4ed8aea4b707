"""Gandiva: reactive node allocation, introspective packing, migration, grow-shrink, and plain
round-robin time-slicing after it (``timeslice``)."""
