"""The three compile paths every result must agree on, and a runner over them."""

from __future__ import annotations

import qdlab as qd

PATHS = {
    "split": {},
    "whole": {"per_offload": False},
    "reference_fallbacks": {"split_carried": False},
}


def on_every_path(run) -> dict[str, object]:
    """`run()` under each path's settings (a fresh in-memory cache each), by path name."""
    out = {}
    for name, options in PATHS.items():
        qd.init(arch=qd.cpu, offline_cache=False, **options)
        out[name] = run()
    return out
