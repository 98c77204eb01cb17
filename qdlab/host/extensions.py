"""`qd.extension` and the capability checks: which optional features a backend has.

Quadrants code asks `qd.is_extension_enabled(qd.extension.adstack)` to choose what to expect, and
names extensions in test decorators. The answers are qdlab's own, for the target the active
`qd.init` chose: both of qdlab's targets have 64-bit types (`data64`), kernel `assert`
(`assertion`, with `debug=True`) and gradients through loops nested in loops (`adstack`, enabled as
in Quadrants only under `qd.init(ad_stack_experimental_enabled=True)`); the CPU has quantised
types (`quant`, `quant_basic`) and sparse SNodes (`sparse`: pointer, bitmasked, dynamic); neither
has hash SNodes, meshes, block-local storage or external functions.
"""

from __future__ import annotations

import enum

from . import archs, state


class Extension(enum.Enum):
    """Quadrants' extension names (`qd.extension.adstack`...)."""

    sparse = "sparse"
    quant = "quant"
    quant_basic = "quant_basic"
    data64 = "data64"
    adstack = "adstack"
    bls = "bls"
    assertion = "assertion"
    extfunc = "extfunc"
    mesh = "mesh"


SUPPORTED = {"cuda": {Extension.data64, Extension.assertion, Extension.adstack}}
SUPPORTED["cpu"] = SUPPORTED["cuda"] | {Extension.quant, Extension.quant_basic, Extension.sparse}


def is_extension_supported(arch: object, ext: Extension) -> bool:
    """Whether qdlab's backend for `arch` (any Quadrants arch name) has `ext`."""
    name = getattr(arch, "name", arch)
    if name in ("x64", "arm64", "cpu"):
        target = "cpu"
    elif name == "cuda":
        target = "cuda"
    else:
        return False  # an arch qdlab has no backend for
    return ext in SUPPORTED[target]


def is_extension_enabled(ext: Extension) -> bool:
    """Whether the active target has `ext`; `adstack` also needs `ad_stack_experimental_enabled`."""
    config = state.config()
    supported = is_extension_supported(archs.arch_of(config.arch), ext)
    return supported and (ext != Extension.adstack or config.ad_stack_experimental_enabled)
