"""Source lines in the code views: LLVM IR and assembly rows that know the line they came from,
assembly filtered as Compiler Explorer filters it, and none of it in binaries or cache keys."""

from __future__ import annotations

import re

import qdlab as qd
from qdlab.viz.listing import asm_rows, diff, llvm_rows, text_of


def test_llvm_rows_map_instructions_to_their_source_lines(K) -> None:
    c = qd.explain(K.three_loops).constructs[0]  # lines 26-27: `for i in range(n)`, `y[i] = ...`
    rows = llvm_rows(c.stage("llvm_optimized_lines"))
    lines = {r.line for r in rows if r.line}
    assert {26, 27} <= lines <= {25, 26, 27}
    assert any(r.line == 27 and "fmul" in r.text for r in rows)  # x[i] * 2.0 is line 27
    assert not any("!dbg" in r.text or "DILocation" in r.text for r in rows)
    assert "!dbg" not in c.stage("llvm") and "!dbg" not in c.stage("llvm_optimized")
    emitted = text_of(llvm_rows(c.stage("llvm_lines")))
    assert emitted.strip() == c.stage("llvm").strip()  # the same IR, less its debug locations


def test_assembly_is_filtered_and_mapped(K) -> None:
    c = qd.explain(K.three_loops).constructs[0]
    text = c.stage("asm_lines")
    full, filtered = asm_rows(text, filtered=False), asm_rows(text)
    assert len(full) == len(text.splitlines()) and len(filtered) < len(full) / 1.5
    for r in filtered:
        body = r.text.strip()
        assert not body.startswith((".", "#")) or body.endswith(":"), r.text
    labels = [r.text.strip()[:-1] for r in filtered if r.text.strip().endswith(":")]
    code = "\n".join(r.text for r in filtered if not r.text.strip().endswith(":"))
    for label in labels:
        assert not label.startswith(".") or re.search(rf"{re.escape(label)}\b", code)
    assert {r.line for r in filtered if r.line} >= {26, 27}
    assert any(r.line == 27 and re.search(r"\bv?(add|mul)[sp]s\b", r.text) for r in filtered)
    assert ".loc" not in c.stage("asm")  # the plain stage, like the cached binary, has no lines


def test_moving_code_keeps_keys_and_moves_the_lines(tmp_path) -> None:
    """The cache key hashes the qdlab IR without locations: a kernel moved down two lines reuses
    every construct, and its views name the new lines."""
    body = (
        "import qdlab as qd\n{pad}\n@qd.kernel\n"
        "def moved(x: qd.types.NDArray[qd.f32, 1]):\n"
        "    for i in range(x.shape[0]):\n        x[i] = x[i] * 3.0\n"
    )
    import importlib.util

    keys, lines = [], []
    for k, pad in enumerate(("", "\n\n")):
        path = tmp_path / f"moved{k}.py"
        path.write_text(body.format(pad=pad))
        spec = importlib.util.spec_from_file_location(f"moved{k}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        r = qd.explain(module.moved)
        keys.append(r.constructs[0].cache_key)
        lines.append({x.line for x in asm_rows(r.constructs[0].stage("asm_lines")) if x.line})
        if k:
            assert r.constructs[0].status == "reused"
    assert keys[0] == keys[1]
    assert lines == [{5, 6}, {7, 8}]


def test_diff_ignores_key_derived_names() -> None:
    a = "define @qd_0123456789abcdef01234567_t0() {\n  ret 0\n}"
    b = "define @qd_fedcba9876543210fedcba98_t0() {\n  ret 1\n}"
    d = diff(a, b)
    assert "-  ret 0" in d and "+  ret 1" in d and "-define" not in d
    assert diff(a, a.replace("0123456789abcdef01234567", "fedcba9876543210fedcba98")) == ""
