"""Each simplify pass on IR text: parse, run the one pass, verify, and compare the printed result.

One row per case: the pass, what the case shows, the text before and the text after. The pass must
also report a change exactly when the text changed, and have nothing left to do when run again.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from qdlab.compiler import ir
from qdlab.compiler.ir.parser import parse
from qdlab.compiler.ir.printer import print_kernel
from qdlab.compiler.ir.verify import verify
from qdlab.compiler.passes import (
    EliminateCommonSubexpressions,
    EliminateDeadCode,
    FoldConstants,
    ForwardStores,
    LowerPowers,
    PromoteLocals,
    run_passes,
)


@dataclass
class Case:
    name: str
    pass_cls: type
    shows: str
    before: str
    after: str


CASES = [
    Case(
        "fold_wrap",
        FoldConstants,
        "i32 arithmetic wraps as generated code does; comparisons and casts of constants fold too",
        """\
kernel k(out: ndarray<i32, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %0 = const {value=2147483647} : i32
  %1 = const {value=1} : i32
  %2 = binop %0, %1 {op='add'} : i32
  %3 = cmp %2, %1 {pred='lt'} : u1
  %4 = cast %3 : i32
  %5 = const {value=0} : i32
  store %out, %5, %2 {grad=False}
  store %out, %1, %4 {grad=False}
}
""",
        """\
kernel k(out: ndarray<i32, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %0 = const {value=2147483647} : i32
  %1 = const {value=1} : i32
  %2 = const {value=-2147483648} : i32
  %3 = const {value=1} : u1
  %4 = const {value=1} : i32
  %5 = const {value=0} : i32
  store %out, %5, %2 {grad=False}
  store %out, %1, %4 {grad=False}
}
""",
    ),
    Case(
        "fold_divide_toward_zero",
        FoldConstants,
        "i32/i64 `//` and `%` of constants round toward zero, as Quadrants folds them; i16 floors",
        """\
kernel k(out: ndarray<i32, 1>, w: ndarray<i64, 1>, h: ndarray<i16, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %w = arg {index=1} : ndarray<i64, 1>
  %h = arg {index=2} : ndarray<i16, 1>
  %0 = const {value=-7} : i32
  %1 = const {value=2} : i32
  %2 = binop %0, %1 {op='floordiv'} : i32
  %3 = binop %0, %1 {op='mod'} : i32
  %4 = const {value=-9223372036854775808} : i64
  %5 = const {value=-1} : i64
  %6 = binop %4, %5 {op='floordiv'} : i64
  %7 = const {value=-7} : i16
  %8 = const {value=2} : i16
  %9 = binop %7, %8 {op='floordiv'} : i16
  store %out, %1, %2 {grad=False}
  store %out, %1, %3 {grad=False}
  store %w, %5, %6 {grad=False}
  store %h, %8, %9 {grad=False}
}
""",
        """\
kernel k(out: ndarray<i32, 1>, w: ndarray<i64, 1>, h: ndarray<i16, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %w = arg {index=1} : ndarray<i64, 1>
  %h = arg {index=2} : ndarray<i16, 1>
  %0 = const {value=-7} : i32
  %1 = const {value=2} : i32
  %2 = const {value=-3} : i32
  %3 = const {value=-1} : i32
  %4 = const {value=-9223372036854775808} : i64
  %5 = const {value=-1} : i64
  %6 = const {value=-9223372036854775808} : i64
  %7 = const {value=-7} : i16
  %8 = const {value=2} : i16
  %9 = binop %7, %8 {op='floordiv'} : i16
  store %out, %1, %2 {grad=False}
  store %out, %1, %3 {grad=False}
  store %w, %5, %6 {grad=False}
  store %h, %8, %9 {grad=False}
}
""",
    ),
    Case(
        "forward_stores",
        ForwardStores,
        "a local's last constant store reaches its loads in straight-line code and `if` branches "
        "(folding what it completes), not in a loop",
        """\
kernel k(out: ndarray<i32, 1>, c: u1) {
  %out = arg {index=0} : ndarray<i32, 1>
  %c = arg {index=1} : u1
  %x = alloca : local<i32>
  %0 = const {value=-7} : i32
  local_store %x, %0
  %1 = local_load %x : i32
  %2 = const {value=2} : i32
  %3 = binop %1, %2 {op='floordiv'} : i32
  local_store %x, %3
  if %c {
    %4 = local_load %x : i32
    store %out, %2, %4 {grad=False}
  }
  %5 = const {value=0} : i32
  %6 = const {value=4} : i32
  for %5, %6 {parallel=False} (%i: i32) {
    %7 = local_load %x : i32
    store %out, %i, %7 {grad=False}
  }
}
""",
        """\
kernel k(out: ndarray<i32, 1>, c: u1) {
  %out = arg {index=0} : ndarray<i32, 1>
  %c = arg {index=1} : u1
  %x = alloca : local<i32>
  %0 = const {value=-7} : i32
  local_store %x, %0
  %1 = const {value=2} : i32
  %2 = const {value=-3} : i32
  local_store %x, %2
  if %c {
    store %out, %1, %2 {grad=False}
  }
  %3 = const {value=0} : i32
  %4 = const {value=4} : i32
  for %3, %4 {parallel=False} (%i: i32) {
    %5 = local_load %x : i32
    store %out, %i, %5 {grad=False}
  }
}
""",
    ),
    Case(
        "fold_f32",
        FoldConstants,
        "f32 constants fold in f32 (0.1 + 0.2 rounds to the nearest f32), negation included",
        """\
kernel k(out: ndarray<f32, 1>) {
  %out = arg {index=0} : ndarray<f32, 1>
  %0 = const {value=0.1} : f32
  %1 = const {value=0.2} : f32
  %2 = binop %0, %1 {op='add'} : f32
  %3 = unary %2 {fn='neg'} : f32
  %4 = const {value=0} : i32
  store %out, %4, %3 {grad=False}
}
""",
        """\
kernel k(out: ndarray<f32, 1>) {
  %out = arg {index=0} : ndarray<f32, 1>
  %0 = const {value=0.1} : f32
  %1 = const {value=0.2} : f32
  %2 = const {value=0.30000001192092896} : f32
  %3 = const {value=-0.30000001192092896} : f32
  %4 = const {value=0} : i32
  store %out, %4, %3 {grad=False}
}
""",
    ),
    Case(
        "fold_keeps",
        FoldConstants,
        "integer division by zero, float-to-int casts, sqrt and anything reading memory stay",
        """\
kernel k(out: ndarray<i32, 1>, f: ndarray<f32, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %f = arg {index=1} : ndarray<f32, 1>
  %0 = const {value=7} : i32
  %1 = const {value=0} : i32
  %2 = binop %0, %1 {op='floordiv'} : i32
  %3 = const {value=2.5} : f32
  %4 = cast %3 : i32
  %5 = unary %3 {fn='sqrt'} : f32
  %6 = load %out, %1 {grad=False} : i32
  %7 = binop %6, %0 {op='add'} : i32
  store %out, %1, %2 {grad=False}
  store %out, %0, %4 {grad=False}
  store %out, %1, %7 {grad=False}
  store %f, %1, %5 {grad=False}
}
""",
        """\
kernel k(out: ndarray<i32, 1>, f: ndarray<f32, 1>) {
  %out = arg {index=0} : ndarray<i32, 1>
  %f = arg {index=1} : ndarray<f32, 1>
  %0 = const {value=7} : i32
  %1 = const {value=0} : i32
  %2 = binop %0, %1 {op='floordiv'} : i32
  %3 = const {value=2.5} : f32
  %4 = cast %3 : i32
  %5 = unary %3 {fn='sqrt'} : f32
  %6 = load %out, %1 {grad=False} : i32
  %7 = binop %6, %0 {op='add'} : i32
  store %out, %1, %2 {grad=False}
  store %out, %0, %4 {grad=False}
  store %out, %1, %7 {grad=False}
  store %f, %1, %5 {grad=False}
}
""",
    ),
    Case(
        "lower_powers",
        LowerPowers,
        "a float to a constant power is multiplied out by squaring (1 / that for a negative one), "
        "to 0.5 a sqrt, a power of two to a float an exp2; a power to 1.5 or a run-time int stays",
        """\
kernel k(x: ndarray<f32, 1>, n: i32, y: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %n = arg {index=1} : i32
  %y = arg {index=2} : f32
  %0 = const {value=0} : i32
  %1 = load %x, %0 {grad=False} : f32
  %2 = const {value=3} : i32
  %3 = binop %1, %2 {op='pow'} : f32
  %4 = const {value=-2.0} : f32
  %5 = binop %1, %4 {op='pow'} : f32
  %6 = const {value=0.5} : f32
  %7 = binop %1, %6 {op='pow'} : f32
  %8 = const {value=1.5} : f32
  %9 = binop %1, %8 {op='pow'} : f32
  %10 = binop %1, %n {op='pow'} : f32
  %11 = const {value=8.0} : f32
  %12 = binop %11, %y {op='pow'} : f32
  %13 = binop %11, %2 {op='pow'} : f32
  store %x, %0, %3 {grad=False}
  store %x, %0, %5 {grad=False}
  store %x, %0, %7 {grad=False}
  store %x, %0, %9 {grad=False}
  store %x, %0, %10 {grad=False}
  store %x, %0, %12 {grad=False}
  store %x, %0, %13 {grad=False}
}
""",
        """\
kernel k(x: ndarray<f32, 1>, n: i32, y: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %n = arg {index=1} : i32
  %y = arg {index=2} : f32
  %0 = const {value=0} : i32
  %1 = load %x, %0 {grad=False} : f32
  %2 = const {value=3} : i32
  %3 = binop %1, %1 {op='mul'} : f32
  %4 = binop %1, %3 {op='mul'} : f32
  %5 = const {value=-2.0} : f32
  %6 = binop %1, %1 {op='mul'} : f32
  %7 = const {value=1.0} : f32
  %8 = binop %7, %6 {op='truediv'} : f32
  %9 = const {value=0.5} : f32
  %10 = unary %1 {fn='sqrt'} : f32
  %11 = const {value=1.5} : f32
  %12 = binop %1, %11 {op='pow'} : f32
  %13 = binop %1, %n {op='pow'} : f32
  %14 = const {value=8.0} : f32
  %15 = const {value=3.0} : f32
  %16 = binop %y, %15 {op='mul'} : f32
  %17 = unary %16 {fn='exp2'} : f32
  %18 = const {value=64.0} : f32
  %19 = const {value=512.0} : f32
  store %x, %0, %4 {grad=False}
  store %x, %0, %8 {grad=False}
  store %x, %0, %10 {grad=False}
  store %x, %0, %12 {grad=False}
  store %x, %0, %13 {grad=False}
  store %x, %0, %17 {grad=False}
  store %x, %0, %19 {grad=False}
}
""",
    ),
    Case(
        "dce_pure",
        EliminateDeadCode,
        "unused pure ops go; a load is not pure and stays",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = binop %s, %s {op='mul'} : f32
  %2 = binop %1, %s {op='add'} : f32
  %3 = load %x, %0 {grad=False} : f32
  store %x, %0, %s {grad=False}
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = load %x, %0 {grad=False} : f32
  store %x, %0, %s {grad=False}
}
""",
    ),
    Case(
        "dce_local",
        EliminateDeadCode,
        "a local that is never read goes with its stores and reductions",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %unused = alloca : local<f32>
  local_store %unused, %s
  %0 = const {value=0} : i32
  %1 = shape %x {axis=0} : i32
  for %0, %1 {parallel=True} (%i: i32) {
    %2 = load %x, %i {grad=False} : f32
    local_atomic %unused, %2 {op='add'}
    %3 = binop %2, %s {op='mul'} : f32
  }
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %0 = const {value=0} : i32
  %1 = shape %x {axis=0} : i32
  for %0, %1 {parallel=True} (%i: i32) {
    %2 = load %x, %i {grad=False} : f32
  }
}
""",
    ),
    Case(
        "cse_block",
        EliminateCommonSubexpressions,
        "equal pure ops merge, constants included; loads never merge",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = const {value=0} : i32
  %2 = binop %s, %s {op='mul'} : f32
  %3 = binop %s, %s {op='mul'} : f32
  %4 = binop %s, %s {op='add'} : f32
  %5 = load %x, %0 {grad=False} : f32
  %6 = load %x, %1 {grad=False} : f32
  %7 = binop %2, %3 {op='add'} : f32
  %8 = binop %5, %6 {op='add'} : f32
  %9 = binop %7, %8 {op='add'} : f32
  %10 = binop %9, %4 {op='add'} : f32
  store %x, %1, %10 {grad=False}
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = binop %s, %s {op='mul'} : f32
  %2 = binop %s, %s {op='add'} : f32
  %3 = load %x, %0 {grad=False} : f32
  %4 = load %x, %0 {grad=False} : f32
  %5 = binop %1, %1 {op='add'} : f32
  %6 = binop %3, %4 {op='add'} : f32
  %7 = binop %5, %6 {op='add'} : f32
  %8 = binop %7, %2 {op='add'} : f32
  store %x, %0, %8 {grad=False}
}
""",
    ),
    Case(
        "cse_nested",
        EliminateCommonSubexpressions,
        "an op in a loop reuses the equal one before the loop; sibling branches do not share",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = shape %x {axis=0} : i32
  %2 = binop %s, %s {op='mul'} : f32
  for %0, %1 {parallel=True} (%i: i32) {
    %3 = binop %s, %s {op='mul'} : f32
    %4 = cmp %i, %0 {pred='eq'} : u1
    if %4 {
      %5 = const {value=2.0} : f32
      store %x, %i, %5 {grad=False}
    } else {
      %6 = const {value=2.0} : f32
      %7 = binop %3, %6 {op='mul'} : f32
      store %x, %i, %7 {grad=False}
    }
  }
  store %x, %0, %2 {grad=False}
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=0} : i32
  %1 = shape %x {axis=0} : i32
  %2 = binop %s, %s {op='mul'} : f32
  for %0, %1 {parallel=True} (%i: i32) {
    %3 = cmp %i, %0 {pred='eq'} : u1
    if %3 {
      %4 = const {value=2.0} : f32
      store %x, %i, %4 {grad=False}
    } else {
      %5 = const {value=2.0} : f32
      %6 = binop %2, %5 {op='mul'} : f32
      store %x, %i, %6 {grad=False}
    }
  }
  store %x, %0, %2 {grad=False}
}
""",
    ),
    Case(
        "promote_once",
        PromoteLocals,
        "a local stored once at the top of its block becomes that value, keeping the local's name",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=2.0} : f32
  %1 = binop %s, %0 {op='mul'} : f32
  %scale = alloca : local<f32>
  local_store %scale, %1
  %2 = const {value=0} : i32
  %3 = shape %x {axis=0} : i32
  for %2, %3 {parallel=True} (%i: i32) {
    %4 = load %x, %i {grad=False} : f32
    %scale.1 = local_load %scale : f32
    %5 = binop %4, %scale.1 {op='mul'} : f32
    store %x, %i, %5 {grad=False}
  }
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=2.0} : f32
  %scale = binop %s, %0 {op='mul'} : f32
  %1 = const {value=0} : i32
  %2 = shape %x {axis=0} : i32
  for %1, %2 {parallel=True} (%i: i32) {
    %3 = load %x, %i {grad=False} : f32
    %4 = binop %3, %scale {op='mul'} : f32
    store %x, %i, %4 {grad=False}
  }
}
""",
    ),
    Case(
        "promote_keeps",
        PromoteLocals,
        "a local stored twice, or stored only in a nested block, stays a local",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %acc = alloca : local<f32>
  local_store %acc, %s
  local_store %acc, %s
  %flag = alloca : local<f32>
  %0 = const {value=0} : i32
  %1 = cmp %0, %0 {pred='eq'} : u1
  if %1 {
    local_store %flag, %s
  } else {
  }
  %acc.1 = local_load %acc : f32
  %flag.1 = local_load %flag : f32
  %2 = binop %acc.1, %flag.1 {op='add'} : f32
  store %x, %0, %2 {grad=False}
}
""",
        """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %acc = alloca : local<f32>
  local_store %acc, %s
  local_store %acc, %s
  %flag = alloca : local<f32>
  %0 = const {value=0} : i32
  %1 = cmp %0, %0 {pred='eq'} : u1
  if %1 {
    local_store %flag, %s
  } else {
  }
  %acc.1 = local_load %acc : f32
  %flag.1 = local_load %flag : f32
  %2 = binop %acc.1, %flag.1 {op='add'} : f32
  store %x, %0, %2 {grad=False}
}
""",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pass(case: Case) -> None:
    kernel = parse(case.before)
    verify(kernel)
    assert print_kernel(kernel) == case.before
    changed = case.pass_cls().run(kernel)
    verify(kernel)
    assert print_kernel(kernel) == case.after
    assert changed == (case.after != case.before)
    assert not case.pass_cls().run(kernel)
    verify(kernel)
    assert print_kernel(kernel) == case.after


def test_names_are_the_documented_ones() -> None:
    passes = (
        PromoteLocals(),
        FoldConstants(),
        LowerPowers(),
        EliminateCommonSubexpressions(),
        EliminateDeadCode(),
    )
    assert [p.name for p in passes] == [
        "promote-locals",
        "fold-constants",
        "lower-powers",
        "eliminate-common-subexpressions",
        "eliminate-dead-code",
    ]


def test_the_simplify_pipeline_on_text() -> None:
    """All passes together, verified after each: the promoted, folded, merged, pruned kernel."""
    kernel = parse(PIPELINE_BEFORE)
    seen: list[str] = []

    def check(name: str, k: object) -> None:
        verify(k)  # type: ignore[arg-type]
        seen.append(name)

    run_passes(kernel, on_pass=check)
    assert print_kernel(kernel) == PIPELINE_AFTER
    assert seen[:6] == [
        "promote-locals",
        "forward-stores",
        "fold-constants",
        "lower-powers",
        "eliminate-common-subexpressions",
        "eliminate-dead-code",
    ]


PIPELINE_BEFORE = """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %s = arg {index=1} : f32
  %0 = const {value=2.0} : f32
  %1 = const {value=3.0} : f32
  %2 = binop %0, %1 {op='mul'} : f32
  %k = alloca : local<f32>
  local_store %k, %2
  %3 = const {value=0} : i32
  %4 = shape %x {axis=0} : i32
  for %3, %4 {parallel=True} (%i: i32) {
    %5 = load %x, %i {grad=False} : f32
    %k.1 = local_load %k : f32
    %6 = binop %5, %k.1 {op='mul'} : f32
    %k.2 = local_load %k : f32
    %7 = binop %5, %k.2 {op='mul'} : f32
    %8 = binop %6, %7 {op='add'} : f32
    %9 = binop %8, %s {op='sub'} : f32
    store %x, %i, %8 {grad=False}
  }
}
"""

PIPELINE_AFTER = """\
kernel k(x: ndarray<f32, 1>, s: f32) {
  %x = arg {index=0} : ndarray<f32, 1>
  %k = const {value=6.0} : f32
  %0 = const {value=0} : i32
  %1 = shape %x {axis=0} : i32
  for %0, %1 {parallel=True} (%i: i32) {
    %2 = load %x, %i {grad=False} : f32
    %3 = binop %2, %k {op='mul'} : f32
    %4 = binop %3, %3 {op='add'} : f32
    store %x, %i, %4 {grad=False}
  }
}
"""


def test_forward_stores_walks_shared_subexpressions_once() -> None:
    """A stored value whose operands share subexpressions (an adjoint of Genesis' convex-convex
    narrow phase: 64 s in this pass) is settled once per value, not once per path to it."""
    depth = 16
    chain = "\n".join(f"  %v{i + 1} = binop %v{i}, %v{i} {{op='mul'}} : f32" for i in range(depth))
    kernel = parse(f"""\
kernel k(out: ndarray<f32, 1>, a: f32, n: i32) {{
  %out = arg {{index=0}} : ndarray<f32, 1>
  %v0 = arg {{index=1}} : f32
  %n = arg {{index=2}} : i32
{chain}
  %x = alloca : local<f32>
  %z = const {{value=0}} : i32
  for %z, %n {{parallel=False}} (%i: i32) {{
    local_store %x, %v{depth}
    %l = local_load %x : f32
    store %out, %i, %l {{grad=False}}
  }}
}}
""")
    visits = []

    class Counting(ForwardStores):
        def settle(self, v: ir.Value) -> ir.Value:
            visits.append(v)
            return super().settle(v)

    Counting().run(kernel)
    verify(kernel)
    assert len(visits) <= 2 * depth + 2  # each value, reached by two paths; not 2**depth
