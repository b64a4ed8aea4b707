"""Dally: delay scheduling over network tiers, its network-sensitive priority and timer auto-tuner."""
