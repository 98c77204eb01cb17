"""What a kernel lowers from qdlab's own library funcs (`qd.svd`, `qd.polar_decompose`, the
`qd.math` funcs) is placed at the user's call, as a builtin's is: an error found while
differentiating it names the user's line, not a line of qdlab's sources."""

from __future__ import annotations

import pytest

import qdlab as qd
from qdlab.core import QDLAB_DIR
from qdlab.core.errors import QdError


@pytest.fixture(autouse=True)
def _cpu():
    qd.init(arch=qd.cpu)
    yield
    qd.init(arch=qd.cpu)


def test_differentiating_a_3x3_svd_names_the_users_line() -> None:
    x = qd.Matrix.field(3, 3, qd.f32, shape=2, needs_grad=True)
    y = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def largest():
        for i in x:
            _, S, _ = qd.svd(x[i])  # the line the error names
            y[None] += S[0, 0]

    largest()
    with pytest.raises(QdError) as e, qd.ad.Tape(y):
        largest()
    text = str(e.value)
    assert "_, S, _ = qd.svd(x[i])" in text and __file__ in text, text
    assert QDLAB_DIR not in text, text


def test_the_views_place_a_library_funcs_code_at_the_call() -> None:
    m = qd.Matrix.field(3, 3, qd.f32, shape=4)
    out = qd.Vector.field(3, qd.f32, shape=4)

    @qd.kernel
    def singular():
        for i in m:
            _, S, _ = qd.svd(m[i])
            out[i] = qd.Vector([S[0, 0], S[1, 1], S[2, 2]])

    singular()
    kernel = singular.latest.kernel  # type: ignore[attr-defined]
    files = {op.loc.filename for op in kernel.walk() if op.loc is not None}
    assert files == {__file__}, files
