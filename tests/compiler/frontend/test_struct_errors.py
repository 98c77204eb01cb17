"""Bad struct arguments and bad uses of them: each a clear error naming the kernel, the member and
(for what the kernel's code does) the source line."""

# No `from __future__ import annotations`: the @qd.func annotations below must be real objects.
import dataclasses
import os

import numpy as np
import pytest

import qdlab as qd

OWN = os.path.dirname(qd.__file__) + os.sep
"""qdlab's package folder: a path in an error under it would be an internal frame (a test folder
named qdlab is not)."""

F32 = qd.types.NDArray[qd.f32, 1]


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@dataclasses.dataclass(frozen=True)
class S:
    x: F32
    n: qd.i32


@qd.data_oriented
class Holder:
    def __init__(self) -> None:
        self.x = qd.ndarray(qd.i32, 4)


@dataclasses.dataclass
class HoldsDataOriented:
    inner: Holder


@qd.kernel
def rebinds_member(s: S):
    s.x = s.x


@qd.kernel
def rebinds_scalar_member(s: S):
    s.n += 1


@qd.kernel
def rebinds_struct(s: S):
    s = 3  # noqa: F841 - the rebinding is the error under test


@qd.kernel
def reads_missing_member(s: S):
    s.x[0] = s.y


@qd.kernel
def statics_an_ndarray(s: S):
    n = qd.static(s.x.shape[0])  # noqa: F841 - the error under test


@qd.kernel
def uses_struct_as_number(s: S):
    s.x[0] = s + 1


@qd.kernel
def typed_data_oriented(s: HoldsDataOriented):
    s.inner.x[0] = 1


@qd.func
def takes_s(s: S):
    s.x[0] = 1.0


@qd.kernel
def passes_a_number_for_a_struct(s: S):
    takes_s(s.n)


@qd.func
def three(a: qd.i32, b: qd.i32, c: qd.i32) -> qd.i32:
    return a + b + c


@qd.kernel
def star_not_last(x: F32):
    x[0] = three(*(1, 2), 3)


@qd.dataclass
class Pt:
    x: qd.f32
    y: qd.f32


@qd.kernel
def too_many_members(s: S):
    Pt(1.0, 2.0, 3.0)


@qd.kernel
def unknown_member(s: S):
    Pt(z=1.0)


@qd.kernel
def struct_gets_a_number(s: S):
    p = Pt(1.0, 2.0)
    p = 3.0  # noqa: F841 - the error under test


@qd.dataclass
class Seg:
    a: Pt
    n: qd.i32


@qd.kernel
def updates_a_struct_member_whole(s: S):
    p = Seg(n=1)
    p.a += 1


@qd.kernel
def atomic_on_a_struct_member_whole(s: S):
    p = Seg(n=1)
    qd.atomic_add(p.a, 1)


def make() -> S:
    return S(np.zeros(4, np.float32), 4)


@pytest.mark.parametrize(
    ("kernel", "line", "cls", "words"),
    [
        (rebinds_member, "s.x = s.x", qd.QuadrantsSyntaxError, "member `s.x` of struct argument"),
        (rebinds_scalar_member, "s.n += 1", qd.QuadrantsSyntaxError, "member `s.n`"),
        (rebinds_struct, "s = 3", qd.QuadrantsSyntaxError, 'Kernel argument "s" is immutable'),
        (reads_missing_member, "s.y", qd.QuadrantsCompilationError, "has no member `y`"),
        (statics_an_ndarray, "s.x.shape[0]", qd.QuadrantsCompilationError, "qd.static needs"),
        (uses_struct_as_number, "s + 1", qd.QuadrantsTypeError, "cannot be used as a value"),
        (passes_a_number_for_a_struct, "takes_s(s.n)", qd.QuadrantsTypeError, "takes a S"),
        (star_not_last, "three(*(1, 2), 3)", qd.QuadrantsSyntaxError, "STARNOTLAST"),
        (too_many_members, "Pt(1.0, 2.0, 3.0)", qd.QuadrantsTypeError, "Pt has 2 members, not 3"),
        (unknown_member, "Pt(z=1.0)", qd.QuadrantsTypeError, "Pt has no member `z`"),
        (struct_gets_a_number, "p = 3.0", qd.QuadrantsTypeError, "`p` is a Pt; it cannot be given"),
        (updates_a_struct_member_whole, "p.a += 1", qd.QuadrantsTypeError, "`p.a` is a Pt local"),
        (atomic_on_a_struct_member_whole, "qd.atomic_add(p.a, 1)", qd.QuadrantsTypeError, "one by"),
    ],
)
def test_error_points_at_the_line(kernel: qd.Kernel, line: str, cls: type, words: str) -> None:
    arg = np.zeros(4, np.float32) if kernel is star_not_last else make()
    with pytest.raises(cls) as e:
        kernel(arg)
    assert words in str(e.value)
    assert e.value.loc.source_line.strip().endswith(line) or line in e.value.loc.source_line
    assert OWN not in str(e.value)  # no frame of qdlab's own source


def test_member_of_the_wrong_dtype_names_the_member() -> None:
    @qd.kernel
    def k(s: S):
        s.x[0] = 1.0

    with pytest.raises(TypeError, match="Expect element type f32 for argument s.x, but get i32"):
        k(S(qd.ndarray(qd.i32, 4), 4))
    with pytest.raises(qd.QuadrantsTypeError, match="`s.x` must be a qd.ndarray or a NumPy array"):
        k(S([1.0, 2.0], 4))  # type: ignore[arg-type]
    with pytest.raises(qd.QuadrantsTypeError, match="member `s.n` must be a number"):
        k(S(np.zeros(4, np.float32), "four"))  # type: ignore[arg-type]
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=r"argument `s` is of type int\."):
        k(3)  # type: ignore[arg-type]


def test_a_struct_of_another_type_in_quadrants_words() -> None:
    sphere = qd.types.struct(center=qd.math.vec3, radius=float)
    circle = qd.types.struct(center=qd.math.vec2, radius=float)

    @qd.kernel
    def foo(s: sphere):
        pass

    with pytest.raises(qd.QuadrantsRuntimeTypeError) as info:  # Quadrants' type and first words
        foo(circle(center=qd.math.vec2([1, 2]), radius=2.33))
    assert info.value.message == (
        "kernel `foo`: Argument <class 'qd.types.struct.Struct'> cannot be converted into required "
        "type Struct(center: VectorType[3, f32], radius: float): argument `s` is of type "
        "Struct(center: VectorType[2, f32], radius: float)."
    )


def test_a_data_oriented_member_of_a_dataclass_points_to_templates() -> None:
    with pytest.raises(Exception, match="data_oriented.*qd.template"):
        typed_data_oriented(HoldsDataOriented(Holder()))


def test_a_scalar_member_out_of_range() -> None:
    """As in Quadrants, an integer member wraps to its type's bits; past 64 bits it is refused."""

    @qd.kernel
    def k(s: S):
        s.x[0] = s.n

    x = np.zeros(4, np.float32)
    k(S(x, 2**40 + 5))
    assert x[0] == 5.0
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=f"`s.n` is {2**70}"):
        k(S(x, 2**70))


def test_a_template_that_cannot_be_described_compiles_each_time() -> None:
    class Opaque:
        def __init__(self) -> None:
            self.scale = 2.0
            self.lock = __import__("threading").Lock()  # no faithful fingerprint

    @qd.kernel
    def k(c: qd.template(), x: F32):
        for i in range(4):
            x[i] = c.scale

    x = np.zeros(4, np.float32)
    c = Opaque()
    k(c, x)
    c.scale = 3.0
    k(c, x)
    np.testing.assert_array_equal(x, [3.0] * 4)
