"""Speeds that come from measurements: a peer's replayed tables, and the ground truth engines run at."""
