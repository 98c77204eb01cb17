"""`quadrants.types.primitive_types`: the scalar dtypes and their groups."""

from ..core.types import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64

int8, int16, int32, int64 = i8, i16, i32, i64
uint1, uint8, uint16, uint32, uint64 = u1, u8, u16, u32, u64
float16, float32, float64 = f16, f32, f64
# As Quadrants' groups, Python's own scalar types included (a kernel parameter may be annotated with
# them), in the order Quadrants' sets iterate in
real_types = [f16, f32, f64, float]
integer_types = [i8, i16, i32, i64, u1, u8, u16, u32, u64, int, bool]
all_types = real_types + integer_types

__all__ = [
    "all_types",
    "f16",
    "f32",
    "f64",
    "float16",
    "float32",
    "float64",
    "i8",
    "i16",
    "i32",
    "i64",
    "int8",
    "int16",
    "int32",
    "int64",
    "integer_types",
    "real_types",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
    "uint1",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]  # fmt: skip
