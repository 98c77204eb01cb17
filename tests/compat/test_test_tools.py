"""`qdlab._test_tools`, the helpers Quadrants' own tests import from `quadrants._test_tools`:
re-init on the same arch, kernels loaded from source text, values built from a dataclass's
annotations, `textwrap2.dedent`, `warn_once`; and a kernel's `__qualname__`, which errors about
its arguments name."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

import qdlab as qd
from qdlab._test_tools import dataclass_test_tools, qd_init_same_arch, textwrap2, warnings_helper
from qdlab._test_tools.load_kernel_string import load_kernel_from_string


def test_init_same_arch_keeps_the_arch_and_takes_options() -> None:
    qd.init(arch=qd.cpu)
    arch = qd.cfg.arch
    qd_init_same_arch(debug=True)
    assert qd.cfg.arch == arch and qd.cfg.debug
    qd_init_same_arch()
    assert not qd.cfg.debug


def test_kernel_from_source_text() -> None:
    qd.init(arch=qd.cpu)
    src = (
        "import qdlab as qd\n\n@qd.kernel\n"
        "def tt_loaded_k(a: qd.types.NDArray[qd.i32, 1]):\n    a[1] = 7\n"
    )
    a = qd.ndarray(qd.i32, (3,))
    with load_kernel_from_string(src, "tt_loaded_k") as k:
        k(a)
    assert a.to_numpy().tolist() == [0, 7, 0]


@dataclasses.dataclass
class Inner:
    a: qd.types.NDArray[qd.i32, 2]
    b: qd.Template


@dataclasses.dataclass
class Outer:
    c: qd.types.ndarray(qd.f32, ndim=1)
    d: qd.template()
    inner: Inner


def test_build_struct_from_annotations() -> None:
    qd.init(arch=qd.cpu)
    s = dataclass_test_tools.build_struct(Outer)
    assert isinstance(s.c, qd.ScalarNdarray) and s.c.shape == (10,) and s.c.dtype == qd.f32
    assert isinstance(s.d, qd.Field) and s.d.shape == (10,) and s.d.dtype == qd.i32
    assert s.inner.a.shape == (10, 10) and isinstance(s.inner.b, qd.Field)
    built = dataclass_test_tools.build_obj_tuple_from_type_dict({"x": Inner, "y": qd.Template})
    assert isinstance(built[0], Inner) and isinstance(built[1], qd.Field)
    with pytest.raises(TypeError, match="no value to build"):
        dataclass_test_tools.build_obj_tuple_from_type_dict({"x": int})


def test_dedent_and_warn_once() -> None:
    assert textwrap2.dedent(4, "    a\n      b\n") == "a\n  b\n"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            warnings_helper.warn_once("tt38 once")
    assert [str(w.message) for w in seen] == ["tt38 once"]


def test_argument_error_names_the_kernel_by_qualname() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def takes_vec2(a: qd.types.NDArray[qd.types.vector(2, qd.i32), 2]):
        pass

    assert takes_vec2.__qualname__.endswith("<locals>.takes_vec2")
    assert takes_vec2.__module__ == __name__
    with pytest.raises(ValueError, match=takes_vec2.__qualname__):
        takes_vec2(qd.Matrix.ndarray(2, 3, qd.i32, shape=(4, 7)))
