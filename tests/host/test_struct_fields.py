"""Struct fields as a user meets them: declaring (`S.field`, `qd.Struct.field`, nested structs,
`root.dense(...).place`), host access (members as fields, element views, dicts), kernels over
members and elements, template arguments sharing constructs, a new process served from the
manifest, lifetime and errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def types() -> tuple:
    inner = qd.types.struct(c=qd.i32, d=qd.math.vec2)
    outer = qd.types.struct(a=qd.f32, v=qd.math.vec3, m=qd.math.mat2, flag=bool, inner=inner)
    return inner, outer


def test_declare_and_host_access() -> None:
    inner, outer = types()
    s = outer.field(shape=(3, 2))
    assert s.shape == (3, 2) and s.keys == ["a", "v", "m", "flag", "inner"]
    assert s.v.shape == (3, 2) and s.v.n == 3 and s.m.to_numpy().shape == (3, 2, 2, 2)
    assert s.inner.d.to_numpy().shape == (3, 2, 2) and s.inner.c.dtype == qd.i32
    s[1, 0] = outer(a=1.5, v=qd.Vector([1, 2, 3]), flag=True, inner=inner(c=4))
    e = s[1, 0]
    assert e.a == 1.5 and list(e.v) == [1, 2, 3] and e.flag == 1 and e.inner.c == 4
    e.a = 9  # a view: writes the field
    s[2, 1].inner.c = -3
    s[0, 1] = outer(a=2.0)
    d = s.to_numpy()
    assert sorted(d) == ["a", "flag", "inner", "m", "v"] and sorted(d["inner"]) == ["c", "d"]
    assert d["a"][1, 0] == 9 and d["a"][0, 1] == 2 and d["inner"]["c"][2, 1] == -3
    assert d["flag"].dtype == np.bool_ and d["flag"][1, 0]
    d["a"][:] = 5  # a copy
    assert s.a[1, 0] == 9
    d["inner"]["c"] = np.arange(6, dtype=np.int32).reshape(3, 2)
    s.from_numpy(d)
    np.testing.assert_array_equal(s.inner.c.to_numpy(), np.arange(6).reshape(3, 2))
    with pytest.raises(KeyError):
        s.from_numpy({"a": np.zeros((3, 2))})
    s.fill(2)
    assert (s.v.to_numpy() == 2).all() and (s.inner.c.to_numpy() == 2).all()
    t = outer.field(shape=(3, 2))
    t.copy_from(s)
    assert t.m[2, 1][0, 1] == 2
    with pytest.raises(qd.QdIndexError):
        s[5000, 0]  # (past the padding and the slack a kernel's overrun could reach)
    with pytest.raises(AttributeError, match="no member"):
        s[0, 0].nope  # noqa: B018 - the read is what is tested


def test_struct_field_kinds_and_placement() -> None:
    @qd.dataclass
    class P:
        x: qd.f32
        n: qd.i16

    a = P.field()
    b = qd.Struct.field({"x": qd.f32, "n": qd.i16})
    qd.root.dense(qd.i, 6).place(a, b)
    assert a.shape == b.shape == (6,)
    g = qd.types.struct(u=qd.f32, w=qd.math.vec2).field(shape=4, needs_grad=True)
    assert g.u.grad.shape == (4,) and g.grad.keys == ["u", "w"]
    with pytest.raises(RuntimeError, match="needs_grad=True"):
        P.field(shape=3, needs_grad=True)  # an integer member has no gradient
    with pytest.raises(qd.QuadrantsRuntimeError, match="should be positive"):
        P.field(shape=0)


def test_kernels_over_members_elements_and_methods() -> None:
    inner, outer = types()
    s = outer.field(shape=8)
    total = qd.field(qd.i32, shape=())

    @qd.kernel
    def run():
        for i in s:
            s[i].a = i * 0.5
            s[i].v += qd.Vector([1.0, 2.0, i])
            s[i].v.y -= 1.0
            s[i].m[1, 0] = s[i].v.z
            s[i].inner.c = i * 3
            s[i].inner.d[1] += 2.0
            s[i].flag = i % 2 == 0
            total[None] += s[i].inner.c
        for i in range(8):
            p = s[i]
            p.a = -1.0  # a copy
            if i == 5:
                s[i] = outer(a=100.0, v=p.v * 2.0, flag=True, inner=inner(c=7, d=p.inner.d))

    run()
    n = np.arange(8)
    want_a = n * 0.5
    want_a[5] = 100.0
    np.testing.assert_array_equal(s.a.to_numpy(), want_a.astype(np.float32))
    want_v = np.stack([np.ones(8), np.ones(8), n], 1).astype(np.float32)
    want_v[5] *= 2
    np.testing.assert_array_equal(s.v.to_numpy(), want_v)
    np.testing.assert_array_equal(s.m.to_numpy()[:, 1, 0], np.where(n == 5, 0, n))  # S(...): 0
    np.testing.assert_array_equal(s.inner.c.to_numpy(), np.where(n == 5, 7, n * 3))
    np.testing.assert_array_equal(s.inner.d.to_numpy()[:, 1], np.full(8, 2.0))
    np.testing.assert_array_equal(s.flag.to_numpy(), (n % 2 == 0) | (n == 5))
    assert total[None] == 3 * n.sum()


def test_template_struct_fields_share_constructs() -> None:
    pair = qd.types.struct(x=qd.f32, y=qd.f32)
    a, b = pair.field(shape=16), pair.field(shape=16)

    @qd.kernel
    def ramp(s: qd.template(), k: qd.f32):
        for i in s:
            s[i].x = i * k
            s[i].y = s[i].x + 1.0

    ramp(a, 1.0)
    ramp(b, 2.0)
    ramp(a, 3.0)
    np.testing.assert_array_equal(a.x.to_numpy(), np.arange(16) * 3.0)
    np.testing.assert_array_equal(b.y.to_numpy(), np.arange(16) * 2.0 + 1)
    assert len(ramp.variants) == 2
    assert ramp._primal.per_offload_cache_observations.frontend_constructs_cache_hit == 1


@pytest.mark.process
def test_recreated_struct_fields_reuse_the_manifest(tmp_path: object) -> None:
    src = textwrap.dedent(
        """
        import sys
        import qdlab as qd
        qd.init(arch=qd.cpu, offline_cache_file_path=PATH)
        n = int(sys.argv[1])
        S = qd.types.struct(x=qd.f32, v=qd.math.vec2)
        s = S.field(shape=n)

        @qd.kernel
        def k(a: qd.f32):
            for i in s:
                s[i].x = i * a
            for i in s:
                s[i].v = qd.Vector([s[i].x, 1.0])

        k(2.0)
        o = k._primal.per_offload_cache_observations
        print(o.frontend_constructs_total, o.frontend_constructs_cache_hit, s[n - 1].v[0])
        """
    ).replace("PATH", repr(str(tmp_path)))
    script = tmp_path / "prog.py"  # type: ignore[operator]
    script.write_text(src)

    def run(n: int) -> list[str]:
        out = subprocess.run(
            [sys.executable, str(script), str(n)], capture_output=True, text=True, check=True
        )
        return out.stdout.split()

    assert run(32) == ["2", "0", "62.0"]
    assert run(32) == ["-1", "-1", "62.0"]  # the manifest: nothing lowered
    assert run(64) == ["2", "0", "126.0"]  # another shape: another key


def test_a_dict_lacking_a_member_is_a_key_error_naming_it() -> None:
    _, outer = types()
    s = outer.field(shape=2)
    full = {"a": 1.0, "v": [1, 2, 3], "m": [[1, 2], [3, 4]], "flag": True, "inner": {"c": 4}}
    with pytest.raises(KeyError, match=r"`inner\.d`"):
        s[0] = full
    with pytest.raises(KeyError, match="`flag`"):
        s[0] = {k: v for k, v in full.items() if k != "flag"}
    with pytest.raises(KeyError, match="`d`"):
        s[0].inner = {"c": 5}
    assert s[0].a == 0 and s[0].inner.c == 0  # nothing is written
    s[1] = {**full, "inner": {"c": 4, "d": [5, 6]}, "extra": 7}  # another key is ignored
    s[1]["a"] = 3.0
    assert s[1]["a"] == 3.0 and s[1]["inner"].c == 4 and list(s[1].inner.d) == [5, 6]
    with pytest.raises(TypeError, match="takes a Struct or a dict"):
        s[1] = 5


def test_errors_name_the_line() -> None:
    _, outer = types()
    s = outer.field(shape=4)

    @qd.kernel
    def bad_value():
        s[0] = 5

    with pytest.raises(qd.QuadrantsTypeError, match=r"s\[0\]"):
        bad_value()

    @qd.kernel
    def bad_member():
        s[0].nope = 1

    with pytest.raises(qd.QuadrantsCompilationError, match="nope"):
        bad_member()

    @qd.kernel
    def bad_index():
        print(s[None].v[0, 0])

    with pytest.raises(qd.QuadrantsCompilationError, match="indexed with 0"):
        bad_index()


def test_reset_drops_struct_fields() -> None:
    pair = qd.types.struct(x=qd.f32, y=qd.f32)
    s = pair.field(shape=4)

    @qd.kernel
    def k():
        for i in s:
            s[i].x = 1.0

    k()
    qd.reset()
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsRuntimeError, match="s.x"):
        k()
