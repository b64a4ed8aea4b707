"""Communication policies by name (``--comm``), with one line each for ``dlsched policies``."""

from __future__ import annotations

from typing import Callable

from dlsched.comm.base import CommPolicy, usable_levels
from dlsched.comm.cassini import Cassini
from dlsched.comm.crux import crux_full, crux_ps, crux_ps_pa
from dlsched.comm.ecmp import Ecmp
from dlsched.comm.sincronia import Sincronia
from dlsched.comm.taccl import Taccl
from dlsched.comm.varys import Varys

_LEVELLED: dict[str, tuple[Callable[..., CommPolicy], str]] = {
    "crux": (crux_full, "CRUX (SIGCOMM '24): path selection, priorities P=kI, DAG compression to K levels"),
    "crux-ps": (crux_ps, "CRUX ablation: path selection only"),
    "crux-ps-pa": (crux_ps_pa, "CRUX ablation: path selection and priority assignment, uncompressed (a level per job)"),
    "sincronia": (Sincronia, "Sincronia (SIGCOMM '18): BSSI order, exponential level classes"),
    "varys": (Varys, "Varys (SIGCOMM '14): smallest effective bottleneck first, MADD rates"),
    "cassini": (Cassini, "CASSINI (NSDI '24): compatible jobs staggered onto distinct levels"),
    "taccl": (Taccl, "TACCL* (NSDI '23, as CRUX extends it): least-congested paths, longer distance first"),
}
_PLAIN: dict[str, tuple[Callable[..., CommPolicy], str]] = {
    "ecmp": (Ecmp, "ECMP hashing, no priorities (the default fabric)"),
}

COMM_POLICIES = sorted([*_LEVELLED, *_PLAIN])


def describe(name: str) -> str:
    return {**_LEVELLED, **_PLAIN}[name][1]


def make_comm_policy(name: str, levels: int = 8, reserved: int = 2, seed: int = 0) -> CommPolicy:
    if name in _PLAIN:
        return _PLAIN[name][0]()
    if name not in _LEVELLED:
        raise ValueError(f"unknown communication policy {name!r}; known: {', '.join(COMM_POLICIES)}")
    usable_levels(levels, reserved)  # refuse a fabric with no level left before the run starts
    factory = _LEVELLED[name][0]
    if name.startswith("crux"):
        return factory(levels=levels, reserved=reserved, seed=seed)
    return factory(levels=levels, reserved=reserved)
