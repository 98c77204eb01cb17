"""`reparse.parse` gives what `ast.parse` gives, node for node and position for position, after any
edit of a function it parsed before: the statements it keeps from the last parse, the ones it
parses alone and the positions it moves must add up to the whole parse, or it parses the whole."""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdlab.compiler.frontend import reparse

STATEMENTS = [
    "    x = 1\n",
    "    y = x * 2 + 1.5\n",
    "    for i in range(n):\n        a[i] = i * 2\n",
    (
        "    for i in range(n):\n        if i > 2:\n            a[i] = 1\n        else:\n"
        "            a[i] = 2\n"
    ),
    "    z = (1 +\n         2)\n",
    "    w = [1,\n         2,\n    ]\n",
    "    if x:\n        pass\n    elif y:\n        pass\n    else:\n        x = 3\n",
    "    a = 1; b = 2\n",
    "    # a comment\n",
    "\n",
    '    s = """one\ntwo"""\n',
    "    t = 1 + \\\n        2\n",
    "    while x < 3:\n        x += 1\n",
    "    try:\n        x = 1\n    finally:\n        x = 2\n",
    "    return x\n",
]
TRICKY = [
    "    else:\n",
    "        q = 9\n",
    "    (\n",
    "    )\n",
    '    """\n',
    "    \\\n",
    "    # changed\n",
    "\n",
    "    a = 3; b = 4\n",
    "\tx = 1\n",
    "    x = 2\n",
    "    for j in range(3):\n",
    "    y = x * 2 + 2.5\n",
    "def g():\n",
    "    @deco\n",
    "  x = 1\n",
    "    x = 1  # trailing\n",
]
HEADERS = ["def f(n, a):\n", "@dec\ndef f(n,\n      a):\n", 'def f(n, a):\n    """doc"""\n']


def whole(text: str) -> str | None:
    try:
        nodes = ast.parse(text).body
    except SyntaxError:
        return None
    if not nodes or not isinstance(nodes[0], ast.FunctionDef):
        return None
    return ast.dump(nodes[0], include_attributes=True)


def ours(text: str) -> str | None:
    try:
        return ast.dump(reparse.parse(text), include_attributes=True)
    except SyntaxError:
        return None


edits = st.lists(
    st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.integers(0, 10**6),
        st.sampled_from(STATEMENTS + TRICKY),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(HEADERS),
    st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=8),
    st.lists(edits, min_size=1, max_size=3),
)
def test_every_edit_parses_as_the_whole_text_does(header, body, rounds) -> None:
    text = header + "".join(body)
    assert ours(text) == whole(text)
    for round_ in rounds:  # edits one after another, each parsed against the one before
        lines = text.splitlines(keepends=True)
        for kind, where, line in round_:
            k = len(lines) and where % (len(lines) + (kind == "insert"))
            if kind == "replace" and lines:
                lines[k] = line
            elif kind == "insert":
                lines.insert(k, line)
            elif lines:
                del lines[k]
        text = "".join(lines)
        assert ours(text) == whole(text), text


def test_an_edit_inside_one_loop_parses_that_loop_alone() -> None:
    loops = [f"    for i in range(n):\n        a[i] = i * {k}\n" for k in range(30)]
    first = "def kern(n, a):\n" + "".join(loops)
    reparse.parse(first)
    loops[12] = "    for i in range(n):\n        a[i] = i * 12.5\n"
    edited = "def kern(n, a):\n" + "".join(loops)
    before = dict(reparse.stats)
    tree = reparse.parse(edited)
    assert reparse.stats["partial"] == before["partial"] + 1
    assert ast.dump(tree, include_attributes=True) == whole(edited)
    assert reparse.parse(edited) is tree  # the same text again: the same tree
