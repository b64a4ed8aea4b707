"""The papers' published figures the perf model is checked against, and stand-in models for them."""
