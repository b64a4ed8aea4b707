"""Per-kind defaults of a node's intra-node link, shared by the schema and the plain shipped specs."""

from __future__ import annotations

# Default per-direction bandwidth (GB/s) and latency (us) of one GPU's intra-node link.
# NVSwitch: A100 NVLink3 600 GB/s bidirectional = 300 GB/s per direction (A100 data sheet).
# NVLink (no switch, V100 hybrid cube mesh): 300 GB/s aggregate but a ring uses ~2 links,
#   so ~100 GB/s per direction is what a ring sees.
# PCIe: Gen3 x16 = 15.75 GB/s theoretical, ~12 GB/s achieved; cross-socket traffic goes
#   over QPI/UPI and through host memory, ~8 GB/s achieved for GPU peer copies.
INTRA_DEFAULTS: dict[str, dict[str, float]] = {
    "nvswitch": {"bandwidth_GBps": 300.0, "latency_us": 2.0},
    "nvlink": {"bandwidth_GBps": 100.0, "latency_us": 2.0},
    "pcie": {"bandwidth_GBps": 12.0, "latency_us": 5.0, "cross_socket_GBps": 8.0,
             "cross_socket_latency_us": 8.0, "host_bridge_GBps": 10.0},
}


def intra_value(intra, key: str) -> float:
    """``intra``'s own figure for ``key``, else its kind's default (a bandwidth or a latency)."""
    own = getattr(intra, key, None)
    if own is not None:
        return float(own)
    defaults = INTRA_DEFAULTS[intra.kind]
    return float(defaults.get(key, defaults["bandwidth_GBps" if "GBps" in key else "latency_us"]))
