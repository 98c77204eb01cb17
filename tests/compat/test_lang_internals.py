"""The pieces of Quadrants' `quadrants.lang` internals that programs and tools reach for:
`_template_mapper.TemplateMapper` with `kernel_arguments.ArgMetadata`, and
`ast.symbol_resolver.ASTResolver` (ids and answers recorded from quadrants 1.3.3)."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang._template_mapper import TemplateMapper
from qdlab.lang.ast.symbol_resolver import ASTResolver
from qdlab.lang.kernel_arguments import ArgMetadata


@pytest.fixture(autouse=True)
def _cpu() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_template_mapper_ids_follow_the_features() -> None:
    args = (ArgMetadata(qd.template(), "t"), ArgMetadata(qd.types.ndarray(), "a"))
    mapper = TemplateMapper((*args, ArgMetadata(qd.f32, "s")), (0,))
    a32 = np.ones(3, np.float32)
    calls = [
        (1, a32, 0.5),
        (1, np.ones(4, np.float32), 2.0),  # another shape, another scalar: the same variant
        (2, a32, 0.5),  # another template value
        (1, np.ones((2, 2), np.float32), 0.5),  # another ndim
        (1, np.ones(3, np.int32), 0.5),  # another dtype
        (1, a32, 9.0),
    ]
    assert [mapper.lookup(False, c)[0] for c in calls] == [0, 0, 1, 2, 3, 0]
    x, y = qd.field(qd.i32, shape=2), qd.field(qd.i32, shape=2)
    fields = TemplateMapper((ArgMetadata(qd.template(), "f"),), (0,))
    assert [fields.lookup(False, (f,))[0] for f in (x, y, x)] == [0, 1, 0]


def test_template_mapper_refusals() -> None:
    mapper = TemplateMapper((ArgMetadata(qd.template(), "t"), ArgMetadata(qd.i32, "n")), (0,))
    with pytest.raises(ValueError, match="float"):
        mapper.lookup(True, (1.5, 1))
    assert mapper.lookup(False, (1.5, 1))[0] == 0
    with pytest.raises(TypeError, match=r"2 argument\(s\) needed but 1 provided"):
        mapper.lookup(False, (1,))


def test_ast_resolver() -> None:
    def node(text: str) -> ast.expr:
        return ast.parse(text, mode="eval").body

    scope = {"qd": qd, "kernel": qd.kernel, "other": object()}
    assert ASTResolver.resolve_to(node("qd.kernel"), qd.kernel, scope)
    assert ASTResolver.resolve_to(node("kernel"), qd.kernel, scope)
    assert ASTResolver.resolve_to(node("qd.lang.ops.atomic_add"), qd.atomic_add, scope)
    assert not ASTResolver.resolve_to(node("other"), qd.kernel, scope)
    assert not ASTResolver.resolve_to(node("qd.no_such.kernel"), qd.kernel, scope)
    assert not ASTResolver.resolve_to(node("(qd).kernel[0]"), qd.kernel, scope)
    assert ASTResolver.resolve_value(node("qd.lang.ops.atomic_max"), scope) is qd.atomic_max
