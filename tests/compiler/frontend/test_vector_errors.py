"""Bad vector and matrix input: each error names the kernel, points at the line, column and caret,
and says the shapes involved (the issue's list: `vec3 + vec2`, `@` of mismatched shapes, an
out-of-range static index, `cross` of non-3-vectors, a NumPy argument of the wrong trailing shape;
and the neighbours of those).

Each case is a kernel below and a row: the line it must point at (a snippet unique from the
kernel's `def` on), the text the caret must sit under, a part of the message, and the class.
"""

# ruff: noqa: F841 - the kernels below are wrong on purpose

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import qdlab as qd

OWN = os.path.dirname(qd.__file__) + os.sep
"""qdlab's package folder: a path in an error under it would be an internal frame (a test folder
named qdlab is not)."""

Vec3 = qd.types.NDArray[qd.math.vec3, 1]
F32 = qd.types.NDArray[qd.f32, 1]


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.kernel
def adds_vec3_and_vec2(a: Vec3):
    for i in a:
        w = qd.Vector([1.0, 2.0])
        a[i] = a[i] + w


@qd.kernel
def matmul_mismatch(a: Vec3):
    m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
    a[0] = m @ a[0]


@qd.kernel
def static_index_out_of_range(a: Vec3):
    v = a[0]
    a[1][0] = v[3]


@qd.kernel
def cross_of_4_vectors(a: Vec3):
    u = qd.math.vec4(1.0)
    a[0] = u.cross(u).xyz


@qd.kernel
def matrix_with_one_index(a: Vec3):
    m = qd.math.mat3(1.0)
    a[0] = m[1]


@qd.kernel
def vector_with_two_indices(a: Vec3):
    v = a[0]
    a[1][0] = v[0, 1]


@qd.kernel
def swizzle_past_the_end(a: Vec3):
    b = qd.math.vec2(1.0, 2.0)
    b.z = 3.0


@qd.kernel
def slice_with_a_variable(a: Vec3, k: qd.i32):
    v = a[0]
    a[1] = v[k:]


@qd.kernel
def vector_into_scalar_array(a: F32):
    v = qd.math.vec3(1.0)
    a[0] = v


@qd.kernel
def assigns_vec2_to_vec3(a: Vec3):
    v = a[0]
    v = qd.math.vec2(0.0, 1.0)


@qd.kernel
def stores_wrong_shape(a: Vec3):
    a[0] = [1.0, 2.0]


@qd.kernel
def trace_of_non_square(a: Vec3):
    m = qd.Matrix([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    a[0][0] = m.trace()


@qd.kernel
def negative_index(a: Vec3):
    a[0] = a[1][0:-1].sum() * a[0]


@qd.kernel
def volatile_load_of_a_local(a: Vec3):
    v = a[0]
    a[1] = qd.volatile_load(v)


@qd.kernel
def atomic_on_a_literal(a: Vec3):
    qd.atomic_min([3.0, 2.0, 1.0], a[0])


@qd.func
def takes_vec3(v: qd.math.vec3):
    return v.sum()


@qd.kernel
def passes_a_vec2_for_a_vec3(a: Vec3):
    a[0][0] = takes_vec3(qd.Vector([1.0, 2.0]))


@qd.func
def takes_vec2_array(b: qd.types.ndarray(dtype=qd.math.vec2, ndim=1)):
    b[0] = [1.0, 2.0]


@qd.kernel
def passes_a_vec3_array_for_vec2s(a: Vec3):
    takes_vec2_array(a)


@qd.kernel
def casts_a_vector_with_a_type(a: Vec3):
    a[0] = qd.f32(a[1])


@qd.kernel
def transposes_a_vector(a: Vec3):
    a[0] = a[1] @ a[2].transpose()


@qd.kernel
def assigns_an_entry_of_an_argument(v: qd.math.vec3) -> qd.f32:
    v[0] = 1.0
    return v[0]


@qd.kernel
def assigns_a_static_name(a: Vec3):
    n = qd.static(3)
    for i in a:
        n = n + 1


CASES = [
    (
        negative_index,
        "a[0] = a[1][0:-1]",
        "a[1][0:-1]",
        "Negative indices are not supported in Quadrants kernels.",
        qd.QdSyntaxError,
    ),
    (
        volatile_load_of_a_local,
        "a[1] = qd.volatile_load(v)",
        "qd.volatile_load(v)",
        "function-scope local arrays are not visible to other threads",
        qd.QdTypeError,
    ),
    (
        atomic_on_a_literal,
        "qd.atomic_min([3.0",
        "qd.atomic_min(",
        "cannot use a non-writable target as the first operand of 'atomic_min'",
        qd.QdSyntaxError,
    ),
    (
        passes_a_vec2_for_a_vec3,
        "takes_vec3(qd.Vector([1.0, 2.0]))",
        "takes_vec3(",
        "Argument v of type VectorType[3, f32] is expected to be a Matrix with n 3, but got 2.",
        qd.QdSyntaxError,
    ),
    (
        passes_a_vec3_array_for_vec2s,
        "takes_vec2_array(a)",
        "takes_vec2_array(a)",
        (
            "Invalid value for argument b - required element type: VectorType[2, f32], but "
            "[Tensor (3) f32] is provided"
        ),
        qd.QdCompileValueError,
    ),
    (
        casts_a_vector_with_a_type,
        "a[0] = qd.f32(a[1])",
        "qd.f32(a[1])",
        "A primitive type cannot decorate an expression with a compound type.",
        qd.QdSyntaxError,
    ),
    (
        adds_vec3_and_vec2,
        "a[i] = a[i] + w",
        "a[i] + w",
        "unsupported operand shapes for `+`: a vec3 (3,) and a vec2 (2,)",
        qd.QdTypeError,
    ),
    (
        matmul_mismatch,
        "a[0] = m @ a[0]",
        "m @ a[0]",
        "dimension mismatch between (2, 2) and (3,) for matrix multiplication",
        qd.QdTypeError,
    ),
    (
        static_index_out_of_range,
        "a[1][0] = v[3]",
        "v[3]",
        "index 3 is out of range for `v`, a vec3 (indices 0 to 2)",
        qd.QdTypeError,
    ),
    (
        cross_of_4_vectors,
        "a[0] = u.cross(u).xyz",
        "u.cross(u)",
        "cross() takes two 3-vectors (or two 2-vectors), not shapes (4,) and (4,)",
        qd.QdTypeError,
    ),
    (
        matrix_with_one_index,
        "a[0] = m[1]",
        "m[1]",
        "Expected 2 indices, got 1: `m` is a 3x3 matrix",
        qd.QdTypeError,
    ),
    (
        vector_with_two_indices,
        "a[1][0] = v[0, 1]",
        "v[0, 1]",
        "Expected 1 indices, got 2: `v` is a vec3",
        qd.QdTypeError,
    ),
    (
        swizzle_past_the_end,
        "b.z = 3.0",
        "b.z",
        "vec2 only has attributes=('x', 'y'), got=('z',)",
        qd.QdSyntaxError,
    ),
    (
        slice_with_a_variable,
        "a[1] = v[k:]",
        "v[k:]",
        "Quadrants does not support variables in slice now",
        qd.QdSyntaxError,
    ),
    (
        vector_into_scalar_array,
        "a[0] = v",
        "a[0] = v",
        "a vec3 of f32 cannot be used as a scalar here",
        qd.QdTypeError,
    ),
    (
        assigns_vec2_to_vec3,
        "v = qd.math.vec2(0.0, 1.0)",
        "v = qd",
        "`v` is a vec3 (shape (3,)); it cannot be given a value of shape (2,)",
        qd.QdTypeError,
    ),
    (
        stores_wrong_shape,
        "a[0] = [1.0, 2.0]",
        "a[0] = [",
        "cannot assign '[Tensor (2) f32]' to '[Tensor (3) f32]'",
        qd.QdTypeError,
    ),
    (
        trace_of_non_square,
        "a[0][0] = m.trace()",
        "m.trace()",
        "expected a square matrix, got shape (3, 2)",
        qd.QdTypeError,
    ),
    (
        transposes_a_vector,
        "a[0] = a[1] @ a[2].transpose()",
        "a[2].transpose()",
        "`transpose()` cannot apply to a vector",
        qd.QdTypeError,
    ),
    (
        assigns_a_static_name,
        "n = n + 1",
        "n = n + 1",
        "`n` was bound at compile time by `qd.static(...)` and cannot be assigned",
        qd.QdSyntaxError,
    ),
    (
        assigns_an_entry_of_an_argument,
        "v[0] = 1.0",
        "v[0] = 1.0",
        'Kernel argument "v" is immutable in the kernel',
        qd.QdSyntaxError,
    ),
]


def assert_points_at(exc: qd.QdError, kernel: qd.Kernel, snippet: str, caret_at: str) -> None:
    lines, first = inspect.getsourcelines(kernel.fn)
    k = next(k for k, line in enumerate(lines) if snippet in line)
    line, lineno = lines[k], first + k
    col = line.index(caret_at, line.index(snippet))
    assert exc.loc is not None
    assert (exc.loc.kernel, exc.loc.lineno, exc.loc.col) == (kernel.name, lineno, col)
    text = str(exc).splitlines()
    assert text[0] == f"{kernel.name} (test_vector_errors.py, line {lineno}, col {col + 1}):"
    frame, shown, caret, *cause = text[1:]
    assert frame == f'File "{inspect.getsourcefile(kernel.fn)}", line {lineno}, in {kernel.name}:'
    assert shown == line.rstrip("\n")  # as written, as in a Python traceback
    assert caret.index("^") == col and set(caret.strip()) == {"^"}
    assert shown[col:].startswith(caret_at)
    assert cause == [exc.message]
    assert OWN not in str(exc)  # no frame of qdlab's own source


def argument(ann: object) -> object:
    """A value for a parameter of the kernels above."""
    if isinstance(ann, qd.lang.MatrixType):
        return qd.Vector([0.0, 0.0, 0.0])
    if isinstance(ann, qd.lang.ArrayAnnotation):
        return np.zeros((4, 3) if isinstance(ann.dtype, qd.lang.MatrixType) else 4, np.float32)
    return 1


@pytest.mark.parametrize(
    "kernel, snippet, caret_at, message, cls", CASES, ids=[c[0].name for c in CASES]
)
def test_vector_error_points_at_the_line(
    kernel: qd.Kernel, snippet: str, caret_at: str, message: str, cls: type
) -> None:
    args = [argument(a) for a in kernel.annotations]
    with pytest.raises(qd.QdError) as info:
        kernel(*args)
    exc = info.value
    assert type(exc) is cls
    assert message in exc.message
    assert_points_at(exc, kernel, snippet, caret_at)


@qd.kernel
def takes_vec3s(p: Vec3):
    for i in p:
        p[i] *= 2.0


def test_numpy_argument_with_wrong_trailing_shape_points_at_the_annotation() -> None:
    with pytest.raises(qd.QdValueError) as info:
        takes_vec3s(np.zeros((8, 4), np.float32))
    exc = info.value
    assert "kernel `takes_vec3s`: Invalid value for argument p - required element_shape=(3,)" in (
        exc.message
    )
    assert "argument `p` has shape (8, 4)" in exc.message
    assert "its last 1 axes must be (3,)" in exc.message
    assert exc.loc is not None and exc.loc.source_line.strip() == "def takes_vec3s(p: Vec3):"
    assert exc.loc.source_line[exc.loc.col :].startswith("Vec3")


def test_qd_ndarray_of_another_element_type_is_named() -> None:
    with pytest.raises(
        qd.QdValueError,
        match=r"required element type: VectorType\[3, f32\], but "
        r"MatrixType\[3,3, f32\] is provided",
    ):
        takes_vec3s(qd.ndarray(qd.math.mat3, 8))
