"""Struct field elements set on the host from dicts: every member given (extra keys ignored), a
member missing (at the top or in a nested struct: a KeyError naming it), a member by name
(`s[i]["a"]`), a nested struct member set from a dict, `from_numpy` without a member; and the
exception classes (and Quadrants' words) of a bad `qd.ad.Tape` loss and a bad forward-mode seed.
Each printed line must be Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)

vec2 = qd.types.vector(2, qd.f32)
In = qd.types.struct(c=qd.i32, d=vec2)
S = qd.types.struct(a=qd.f32, v=vec2, inner=In)
s = S.field(shape=3)
FULL = {"a": 1, "v": [2, 3], "inner": {"c": 4, "d": [5, 6]}}


def state() -> list:
    return [
        s.a.to_numpy().tolist(),
        s.v.to_numpy().tolist(),
        s.inner.c.to_numpy().tolist(),
        s.inner.d.to_numpy().tolist(),
    ]


def attempt(name: str, call: object, *words: str) -> None:
    for i in range(3):  # what a failed set leaves differs: Quadrants writes the members before
        s[i] = FULL
    try:
        call()  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001
        print(name, type(e).__name__, [w in str(e) for w in words])  # the missing one, qdlab none
    else:
        print(name, "ok", state())


attempt("full", lambda: s.__setitem__(1, FULL))
attempt(
    "extra", lambda: s.__setitem__(0, {**FULL, "zz": 3, "inner": {"c": 9, "d": [1, 1], "q": 2}})
)
attempt("missing", lambda: s.__setitem__(0, {"v": [7, 8], "inner": {"c": 9, "d": [1, 1]}}), "a")
attempt(
    "missing_nested", lambda: s.__setitem__(0, {"a": 5, "v": [7, 8], "inner": {"d": [1, 1]}}), "c"
)
attempt("missing_struct", lambda: s.__setitem__(0, {"a": 5, "v": [7, 8]}), "inner")
attempt("empty", lambda: s.__setitem__(2, {}), "a")
attempt("member_dict", lambda: setattr(s[2], "inner", {"c": 11, "d": [2, 2]}))
attempt("member_dict_missing", lambda: setattr(s[2], "inner", {"c": 12}), "d")
attempt("by_name", lambda: s[1].__setitem__("a", 9))
print("read_by_name", s[1]["a"], s[1]["inner"].c)
attempt("not_a_dict", lambda: s.__setitem__(0, 5))
attempt("from_numpy_missing", lambda: s.from_numpy({"a": np.zeros(3, np.float32)}), "v")

h = qd.Struct.field({"n": qd.i32, "w": qd.f32}, shape=2)
try:
    h[0] = {"n": 5}
except KeyError as e:
    print("anonymous", "w" in str(e))


@qd.dataclass
class D:
    m: qd.i32
    p: vec2


dd = D.field(shape=2)
try:
    dd[0] = {"p": [4, 4]}
except KeyError as e:
    print("dataclass", "m" in str(e))
dd[1] = D(m=7)
print(dd.m.to_numpy().tolist(), dd.p.to_numpy().tolist())

loss = qd.field(qd.f32, shape=4, needs_grad=True)
try:
    with qd.ad.Tape(loss=loss):
        pass
except RuntimeError as e:
    print("tape_vector_loss", "0-D field" in str(e))
flat = qd.field(qd.f32, shape=())
try:
    with qd.ad.Tape(loss=flat):
        pass
except RuntimeError as e:
    print("tape_no_grad", "Gradients of loss are not allocated" in str(e))
x = qd.field(qd.f32, shape=4, needs_dual=True)
y = qd.field(qd.f32, shape=4, needs_dual=True)
try:
    with qd.ad.FwdMode(loss=y, param=x, seed=[1.0, 2.0]):
        pass
except AssertionError:
    print("seed_length AssertionError")
