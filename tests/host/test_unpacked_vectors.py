"""`qd.types.vector(n, dtype, unpacked=True)` as a `@qd.dataclass` member: stored as n scalar
members `_r0` ... (the struct's `members`, `_unpacked_groups`), `obj.r[i]` with `i` known while
compiling reads and writes `obj._r<i>` on struct locals, nested structs and struct fields' elements;
a runtime index, an index out of range, a value, field or ndarray of the type itself, and a member
name that two members would share are refused as in Quadrants. Values recorded from Quadrants
1.3.3 on the same program."""

import importlib.util
import re

import pytest

import qdlab as qd


def test_members_groups_and_accesses_as_quadrants() -> None:
    qd.init(arch=qd.cpu)

    @qd.dataclass
    class Inner:
        r: qd.types.vector(3, qd.i32, unpacked=True)
        w: qd.f32

    @qd.dataclass
    class Outer:
        inner: Inner
        s: qd.types.vector(2, qd.f32, unpacked=True)

    assert sorted(Outer.members) == ["_s0", "_s1", "inner"]
    assert sorted(Inner.members) == ["_r0", "_r1", "_r2", "w"]
    assert Inner._unpacked_groups["r"][:2] == (3, qd.i32)
    of = Outer.field(shape=(3,))
    out = qd.field(qd.f32, shape=(4,))

    @qd.kernel
    def k(o: qd.template()):
        for n in range(3):
            for i in qd.static(range(3)):
                of[n].inner.r[i] = n * 10 + i
            of[n].s[1] = 0.5 * n
            of[n].s[0] = -1.0
        t = Outer()
        for i in qd.static(range(3)):
            t.inner.r[i] = of[2].inner.r[2 - i]
        t.s[0] = 2.5
        o[0] = t.inner.r[0] + t.inner.r[2] * t.s[0]
        o[1] = of[1].s[1] + of[2].inner.r[2]
        o[2] = t.s[1]

    k(out)
    assert out.to_numpy().tolist() == [72.0, 22.5, 0.0, 0.0]


@qd.dataclass
class Tile:
    r: qd.types.vector(4, qd.f32, unpacked=True)


@pytest.mark.parametrize(
    "body,words",
    [
        ("    j = 1\n    t.r[j] = 1.0\n", "requires a python-int index"),
        ("    t.r[4] = 1.0\n", "out of bounds: r[4] (count=4)"),
        ("    o[0] = t.r[-1]\n", "out of bounds: r[-1]"),
    ],
)
def test_indices_not_known_or_out_of_range_are_refused_at_the_line(tmp_path, body, words) -> None:
    qd.init(arch=qd.cpu)
    path = tmp_path / "case.py"
    path.write_text(
        "import qdlab as qd\n\n\n@qd.kernel\ndef k(o: qd.template()):\n    t = TILE()\n" + body
    )
    spec = importlib.util.spec_from_file_location("unpacked_case", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    mod.TILE = Tile  # type: ignore[attr-defined]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    with pytest.raises(qd.QuadrantsSyntaxError, match=re.escape(words)) as e:
        mod.k(qd.field(qd.f32, shape=1))
    loc = e.value.loc
    assert loc.filename == str(path) and loc.lineno == 6 + body.count("\n")


def test_the_type_itself_is_only_a_members_type() -> None:
    t = qd.types.vector(4, qd.f32, unpacked=True)
    for make in (lambda: t(1.0, 2.0, 3.0, 4.0), lambda: t.field(shape=8), lambda: t.ndarray(8)):
        with pytest.raises(qd.QuadrantsSyntaxError, match="unpacked=True") as e:
            make()
        assert "@qd.dataclass" in str(e.value)


def test_a_member_name_two_members_would_share_is_refused() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="unpacked vector field 'r'.*'_r0'"):

        @qd.dataclass
        class Before:
            _r0: qd.f32
            r: qd.types.vector(4, qd.f32, unpacked=True)

    with pytest.raises(qd.QuadrantsSyntaxError, match="'_r2'.*unpacked=True"):

        @qd.dataclass
        class After:
            r: qd.types.vector(4, qd.f32, unpacked=True)
            _r2: qd.f32
