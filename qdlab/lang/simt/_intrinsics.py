"""What the `qd.simt` modules share: the current arch's name (their intrinsics refuse it) and
which archs lower through SPIR-V."""

from __future__ import annotations

from ...host import state


def arch() -> str:
    """The arch `qd.init` chose (`"cpu"`, `"cuda"`)."""
    return state.config().arch


def arch_uses_spv(arch: object) -> bool:
    """Whether `arch` lowers through SPIR-V (Vulkan, Metal), as Quadrants' helper answers."""
    return getattr(arch, "name", str(arch)) in ("vulkan", "metal")
