"""`quadrants.types.enums`: the enumerations Quadrants programs name (`qd.Layout.SOA`, ...).

In Quadrants they come from its C++ core; here they are Python enums with the same members. A
field's layout (`layout=qd.Layout.SOA` on `qd.field`, `qd.Vector.field`, a struct's `.field`)
decides where its components sit in memory and never a value, so qdlab's fields accept it and lay
every field out one way.
"""

from __future__ import annotations

import enum

from ..core.fields import AutodiffMode, Layout, SNodeGradType


class BoundaryMode(enum.Enum):
    UNSAFE = 0
    CLAMP = 1


class Format(enum.Enum):
    """`qd.Format`: Quadrants' texel formats, with its members' values (qdlab has no textures;
    the names are there for programs that name them)."""

    unknown = 0
    r8 = 1
    rg8 = 2
    rgba8 = 3
    rgba8srgb = 4
    bgra8 = 5
    bgra8srgb = 6
    r8u = 7
    rg8u = 8
    rgba8u = 9
    r8i = 10
    rg8i = 11
    rgba8i = 12
    r16 = 13
    rg16 = 14
    rgb16 = 15
    rgba16 = 16
    r16u = 17
    rg16u = 18
    rgb16u = 19
    rgba16u = 20
    r16i = 21
    rg16i = 22
    rgb16i = 23
    rgba16i = 24
    r16f = 25
    rg16f = 26
    rgb16f = 27
    rgba16f = 28
    r32u = 29
    rg32u = 30
    rgb32u = 31
    rgba32u = 32
    r32i = 33
    rg32i = 34
    rgb32i = 35
    rgba32i = 36
    r32f = 37
    rg32f = 38
    rgb32f = 39
    rgba32f = 40
    depth16 = 41
    depth24stencil8 = 42
    depth32f = 43


class DeviceCapability:
    """`qd.DeviceCapability`: the names of the SPIR-V device capabilities a Vulkan or Metal device
    reports, as Quadrants spells them (strings; qdlab runs no SPIR-V backend, so nothing reports
    them here)."""

    spirv_version_1_3 = "spirv_version=66304"
    spirv_version_1_4 = "spirv_version=66560"
    spirv_version_1_5 = "spirv_version=66816"
    spirv_has_int8 = "spirv_has_int8"
    spirv_has_int16 = "spirv_has_int16"
    spirv_has_int64 = "spirv_has_int64"
    spirv_has_float16 = "spirv_has_float16"
    spirv_has_float64 = "spirv_has_float64"
    spirv_has_atomic_int64 = "spirv_has_atomic_int64"
    spirv_has_atomic_float16 = "spirv_has_atomic_float16"
    spirv_has_atomic_float16_add = "spirv_has_atomic_float16_add"
    spirv_has_atomic_float16_minmax = "spirv_has_atomic_float16_minmax"
    spirv_has_atomic_float = "spirv_has_atomic_float"
    spirv_has_atomic_float_add = "spirv_has_atomic_float_add"
    spirv_has_atomic_float_minmax = "spirv_has_atomic_float_minmax"
    spirv_has_atomic_float64 = "spirv_has_atomic_float64"
    spirv_has_atomic_float64_add = "spirv_has_atomic_float64_add"
    spirv_has_atomic_float64_minmax = "spirv_has_atomic_float64_minmax"
    spirv_has_variable_ptr = "spirv_has_variable_ptr"
    spirv_has_physical_storage_buffer = "spirv_has_physical_storage_buffer"
    spirv_has_subgroup_basic = "spirv_has_subgroup_basic"
    spirv_has_subgroup_vote = "spirv_has_subgroup_vote"
    spirv_has_subgroup_arithmetic = "spirv_has_subgroup_arithmetic"
    spirv_has_subgroup_ballot = "spirv_has_subgroup_ballot"
    spirv_has_non_semantic_info = "spirv_has_non_semantic_info"
    spirv_has_no_integer_wrap_decoration = "spirv_has_no_integer_wrap_decoration"


def to_boundary_enum(boundary: str) -> BoundaryMode:
    if boundary == "clamp":
        return BoundaryMode.CLAMP
    if boundary == "unsafe":
        return BoundaryMode.UNSAFE
    raise ValueError(f"Invalid boundary argument: {boundary}. Valid options: 'unsafe', 'clamp'")


__all__ = [
    "AutodiffMode",
    "BoundaryMode",
    "DeviceCapability",
    "Format",
    "Layout",
    "SNodeGradType",
    "to_boundary_enum",
]
