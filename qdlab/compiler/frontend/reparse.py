"""A function's AST, parsed again only where its text changed since the last parse of it.

Editing one loop of a 50-loop kernel and running it again parses the whole function (~2 ms, a
tenth of the edit). `parse` keeps the latest tree of each function (by its `def` line) and, when
the new text differs from that one's only inside whole top-level statements of its body, parses
those lines alone and puts the tree together from the statements before and after them (shared:
the compiler only reads ASTs) and the new ones. The result is what `ast.parse` gives, node for
node and position for position; wherever that is not certain, the whole text is parsed:

- the changed lines must start after the header (decorators, `def`, parameters) and after the
  line the body starts on, and must not share a line with a kept statement (`a = 1; b = 2`);
- they are parsed as the body of an `if 1:`: any text that does not stand alone as statements at
  the body's indentation (a clause such as `else:` continuing a kept statement, an open bracket or
  string closed in the kept lines, a line more indented than the body) fails there, or parses to
  statements at another column, and the whole text is parsed;
- when lines were added or removed, the statements after the change are parsed again too (their
  positions moved); a function with a decorated statement in its body is always parsed whole.

`tests/compiler/frontend/test_reparse.py` compares `parse` with `ast.parse` on random edits.
"""

from __future__ import annotations

import ast
import copy
import threading
from collections import OrderedDict

LIMIT = 64
"""Functions whose latest tree is kept."""

_latest: OrderedDict[str, tuple[list[str], ast.FunctionDef]] = OrderedDict()
_lock = threading.Lock()
stats = {"whole": 0, "partial": 0, "same": 0}
"""Parses since the process started, by how they were made (tests read them)."""


def parse(text: str) -> ast.FunctionDef:
    """The function defined by `text` (dedented, its decorators first): as `ast.parse(text)`
    gives it. SyntaxError as `ast.parse` raises it."""
    lines = text.splitlines(keepends=True)
    head = _def_line(lines)
    with _lock:
        base = _latest.get(head) if head is not None else None
    tree = None
    if base is not None and base[0] == lines:
        tree, stats["same"] = base[1], stats["same"] + 1
    elif base is not None:
        tree = _partial(base[0], base[1], lines)
        stats["partial"] += tree is not None
    if tree is None:
        nodes = ast.parse(text).body
        if not nodes or not isinstance(nodes[0], ast.FunctionDef):
            raise SyntaxError("not a function definition")
        tree, stats["whole"] = nodes[0], stats["whole"] + 1
    if head is not None:
        with _lock:
            _latest[head] = (lines, tree)
            _latest.move_to_end(head)
            while len(_latest) > LIMIT:
                _latest.popitem(last=False)
    return tree


def _def_line(lines: list[str]) -> str | None:
    for line in lines:
        if line.startswith(("def ", "async def ")):
            return line
    return None


def _partial(old: list[str], tree: ast.FunctionDef, new: list[str]) -> ast.FunctionDef | None:
    """`tree` (parsed from `old`) made over for `new`, or None when that is not certain."""
    body = tree.body
    if not body or body[0].lineno <= tree.lineno:
        return None
    if any(getattr(s, "decorator_list", None) for s in body):
        return None
    n = min(len(old), len(new))
    p = 0
    while p < n and old[p] == new[p]:
        p += 1
    s = 0
    while s < n - p and old[-1 - s] == new[-1 - s]:
        s += 1
    if p < body[0].lineno - 1:  # the header (or the body's first line) changed
        return None
    delta = len(new) - len(old)
    # Kept before: statements wholly in the first p lines, with no later one on their last line.
    a = 0
    while a < len(body) and end_line(body[a]) <= p:
        a += 1
    while a > 0 and a < len(body) and body[a].lineno == body[a - 1].end_lineno:
        a -= 1
    # Kept after (only when no line moved): statements wholly in the last s lines.
    b = len(body)
    if delta == 0:
        b = a
        while b < len(body) and body[b].lineno - 1 < len(old) - s:
            b += 1
        while b < len(body) and b > a and body[b].lineno == body[b - 1].end_lineno:
            b += 1
    start = end_line(body[a - 1]) if a else body[0].lineno - 1
    end = body[b].lineno - 1 if b < len(body) else len(new)
    if start >= end:
        return None
    try:
        region = ast.parse("if 1:\n" + "".join(new[start:end])).body
    except SyntaxError:
        return None
    if len(region) != 1 or not isinstance(region[0], ast.If):
        return None
    fresh = region[0].body
    col = body[0].col_offset
    if any(st.col_offset != col for st in fresh):
        return None
    for st in fresh:
        ast.increment_lineno(st, start - 1)
    out = copy.copy(tree)
    out.body = body[:a] + fresh + body[b:]
    last = out.body[-1]
    out.end_lineno, out.end_col_offset = last.end_lineno, last.end_col_offset
    return out


def end_line(node: ast.stmt) -> int:
    """The last line of a parsed statement (the parser always sets it)."""
    assert node.end_lineno is not None
    return node.end_lineno
