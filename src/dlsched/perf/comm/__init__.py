"""Communication time: alpha-beta collectives, gradient synchronisation, measured per-tier overheads."""
