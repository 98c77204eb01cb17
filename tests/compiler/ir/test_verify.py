"""`verify` refuses a use before its definition or outside its scope, at the top level and in
nested blocks (it grows one set of visible values per block)."""

from __future__ import annotations

import pytest

from qdlab.compiler import ir
from qdlab.compiler.ir.verify import VerifyError, verify
from qdlab.core.types import f32, i32


def const(v: int) -> ir.Const:
    return ir.Const([], i32, {"value": v})


def loop(begin: ir.Value, end: ir.Value) -> ir.For:
    return ir.For([begin, end], None, {"parallel": False}, [ir.Block([ir.Value(i32, "i")])])


def test_values_in_order_verify() -> None:
    k = ir.Kernel("k", [], [])
    a, b = const(0), const(4)
    k.body.append(a)
    k.body.append(b)
    f = loop(a.result, b.result)
    k.body.append(f)
    f.regions[0].append(ir.BinOp([a.result, f.regions[0].args[0]], i32, {"op": "add"}))
    verify(k)


def test_a_use_before_its_definition_is_refused() -> None:
    k = ir.Kernel("k", [], [])
    a = const(1)
    k.body.append(ir.BinOp([a.result, a.result], i32, {"op": "add"}))
    k.body.append(a)
    with pytest.raises(VerifyError, match="before its definition"):
        verify(k)


def test_a_value_of_one_block_is_not_visible_in_its_sibling() -> None:
    k = ir.Kernel("k", [], [])
    a, b = const(0), const(4)
    k.body.append(a)
    k.body.append(b)
    first, second = loop(a.result, b.result), loop(a.result, b.result)
    k.body.append(first)
    k.body.append(second)
    inner = ir.BinOp([a.result, b.result], i32, {"op": "add"})
    first.regions[0].append(inner)
    second.regions[0].append(ir.BinOp([inner.result, a.result], i32, {"op": "add"}))
    with pytest.raises(VerifyError, match="outside its scope"):
        verify(k)
    k2 = ir.Kernel("k2", [], [])
    c = const(2)
    k2.body.append(c)
    k2.body.append(const(3))
    after = loop(c.result, c.result)
    k2.body.append(after)
    later = const(5)
    after.regions[0].append(ir.BinOp([c.result, later.result], i32, {"op": "add"}))
    k2.body.append(later)  # defined after the loop that uses it
    with pytest.raises(VerifyError, match="before its definition"):
        verify(k2)


def test_each_op_kind_is_checked() -> None:
    k = ir.Kernel("k", [], [])
    k.body.append(ir.Break())
    with pytest.raises(VerifyError, match="outside a loop"):
        verify(k)
    k = ir.Kernel("k", [], [])
    a = const(0)
    k.body.append(a)
    k.body.append(ir.Load([a.result, a.result], f32, {}))
    with pytest.raises(VerifyError, match="on a non-array"):
        verify(k)
    k = ir.Kernel("k", [], [])
    a, b = const(0), ir.Const([], f32, {"value": 1.0})
    k.body.append(a)
    k.body.append(b)
    k.body.append(ir.BinOp([a.result, b.result], i32, {"op": "add"}))
    with pytest.raises(VerifyError, match="mixes"):
        verify(k)
    k = ir.Kernel("k", [], [])
    a, b = const(0), const(4)
    k.body.append(a)
    k.body.append(b)
    f = loop(a.result, b.result)
    k.body.append(f)
    f.regions[0].append(ir.Break())
    verify(k)  # inside a loop it is fine
