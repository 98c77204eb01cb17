"""`print_kernel(parse(text)) == text`: the parser reads back everything the printer writes."""

from __future__ import annotations

import pytest
from oracle_ir import cases, lower

import qdlab as qd
from qdlab.compiler import pipeline, split
from qdlab.compiler.codegen.targets import CPU
from qdlab.compiler.ir.parser import ParseError, parse
from qdlab.compiler.ir.printer import print_kernel
from qdlab.compiler.ir.verify import verify
from qdlab.compiler.passes import run_passes
from qdlab.host import state

qd.init(arch=qd.cpu, offline_cache=False)
CASES = cases()


def round_trip(text: str, with_locs: bool = False) -> None:
    kernel = parse(text)
    verify(kernel)
    assert print_kernel(kernel, with_locs=with_locs) == text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_oracle_kernel_round_trips(case: object) -> None:
    kernel = lower(case)
    round_trip(print_kernel(kernel))
    round_trip(print_kernel(kernel, with_locs=True), with_locs=True)
    run_passes(kernel)
    round_trip(print_kernel(kernel))
    round_trip(print_kernel(kernel, with_locs=True), with_locs=True)
    for c in split.constructs(kernel):  # the texts the construct cache keys hash
        prepared = pipeline.prepare(split.slice_kernel(kernel, c), state.config(), CPU)
        round_trip(prepared.text)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_passes_on_parsed_ir_match_the_pipeline(case: object) -> None:
    """The simplify passes do the same to parsed text as to the frontend's own IR; verify after each
    pass."""
    kernel = lower(case)
    parsed = parse(print_kernel(kernel))
    run_passes(kernel)
    run_passes(parsed, on_pass=lambda name, k: verify(k))
    assert print_kernel(parsed) == print_kernel(kernel)


EVERYTHING = """\
kernel sample(x: ndarray<f32, 2, clamp, grad>, n: i32, out: ndarray<i64, 1>) -> (f32, i32) {
  %x = arg {index=0} : ndarray<f32, 2, clamp, grad>
  %n = arg {index=1} : i32
  %out = arg {index=2} : ndarray<i64, 1>
  %0 = const {value=0} : i32
  %1 = const {value=-inf} : f32
  %2 = const {value=nan} : f32
  %3 = const {value=1e-07} : f32
  %total = alloca : local<f32>
  local_store %total, %1
  for %0, %n {loop_name='outer', parallel=False} (%i: i32) {
    %4 = load %x, %i, %i {grad=True} : f32
    %5 = cmp %4, %3 {pred='gt'} : u1
    if %5 {
      print %i, %4 {parts=['i = ', None, ", x's {braces} = ", None]}
      break
    } else {
      local_atomic %total, %4 {op='max'}
      continue
    }
  }
  loop {
    %6 = random {site=1} : f32
    %7 = volatile_load %x, %0, %0 {grad=False} : f32
    %8 = cmp %6, %7 {pred='lt'} : u1
    assert %8 {line='k (cell line 3, col 5):\\n    assert x\\n    ^', message='it\\'s "fine"'}
    break
  }
  %9 = cast %n : i64
  %10 = atomic %out, %0, %9 {grad=False, op='add'} : i64
  %total.1 = local_load %total : f32
  return %total.1, %n
}
"""


def test_every_op_and_attribute_kind_round_trips() -> None:
    round_trip(EVERYTHING)


def test_locations_round_trip() -> None:
    text = (
        "kernel k(a: ndarray<f32, 1>) {\n  %a = arg {index=0} : ndarray<f32, 1>  // line 3\n"
        "  %0 = const {value=0} : i32  // line 4\n  %1 = shape %a {axis=0} : i32  // line 4\n"
        "  for %0, %1 {parallel=True} (%i: i32) {  // line 4\n"
        "    %2 = const {value=1.0} : f32  // line 5\n"
        "    store %a, %i, %2 {grad=False}  // line 5\n  }\n}\n"
    )
    kernel = parse(text)
    assert [op.loc.lineno for op in kernel.walk()] == [3, 4, 4, 4, 5, 5]  # type: ignore[union-attr]
    assert print_kernel(kernel, with_locs=True) == text


@pytest.mark.parametrize(
    "text, message",
    [
        ("kernel k() {\n  %0 = frobnicate : i32\n}\n", "unknown op"),
        ("kernel k() {\n  %0 = binop %1, %1 {op='add'} : i32\n}\n", "used before it is defined"),
        (
            "kernel k() {\n  %0 = const {value=1} : i32\n  %0 = const {value=2} : i32\n}\n",
            "defined twice",
        ),
        ("kernel k() {\n  %0 = const {value=1} : q32\n}\n", "unknown type"),
        ("kernel k() {\n  %0 = const {value=1} : i32\n", "missing `}`"),
        ("kern k() {\n}\n", "expected a kernel header"),
    ],
)
def test_malformed_text_is_refused(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse(text)
