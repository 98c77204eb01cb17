"""The manifest tier serves a kernel without lowering it only when nothing it baked in has
changed."""

from __future__ import annotations

import textwrap
import types

import numpy as np
import pytest
from memo_kernels import load

import qdlab as qd


def total(k) -> int:
    return k._primal.per_offload_cache_observations.frontend_constructs_total


@pytest.fixture(autouse=True)
def _cache(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))


KERNEL = """
    import qdlab as qd

    @qd.func
    def twice(v: qd.f32) -> qd.f32:
        return v * {factor}

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = twice(SCALE) + cfg.offset
"""


def run(folder, factor: str = "2.0", scale: float = 1.0, offset: float = 0.0) -> tuple[float, int]:
    cfg = types.SimpleNamespace(offset=offset)
    mod = load(folder, KERNEL.format(factor=factor), SCALE=scale, cfg=cfg)
    a = np.zeros(3, np.float32)
    mod.k(a)
    return float(a[0]), total(mod.k)


def test_same_source_elsewhere_is_served_from_the_manifest(tmp_path) -> None:
    assert run(tmp_path) == (2.0, 1)
    assert run(tmp_path) == (
        2.0,
        -1,
    )  # another file, same source: no lowering, -1 as for the reference's fastcache


@pytest.mark.parametrize("change", [{"scale": 3.0}, {"offset": 0.5}, {"factor": "4.0"}])
def test_a_changed_dependency_is_compiled_again(tmp_path, change: dict) -> None:
    assert run(tmp_path) == (2.0, 1)
    want = 2.0 * change.get("scale", 1.0) * (2.0 if change.get("factor") else 1.0) + change.get(
        "offset", 0.0
    )
    assert run(tmp_path, **change) == (want, 1)


def test_an_attribute_of_a_mutable_object_is_checked(tmp_path) -> None:
    # its repr is its address: only the attribute's own fingerprint can tell a change
    class Settings:
        offset = 1.0

    settings = Settings()
    src = """
        import qdlab as qd

        @qd.kernel
        def k(a: qd.types.NDArray[qd.f32, 1]):
            for i in range(a.shape[0]):
                a[i] = settings.offset
    """
    a = np.zeros(2, np.float32)
    load(tmp_path, src, settings=settings).k(a)
    settings.offset = 7.0
    load(tmp_path, src, settings=settings).k(a)
    assert (a == 7.0).all()


def test_gradient_and_primal_have_their_own_manifests(tmp_path) -> None:
    src = """
        import qdlab as qd

        @qd.kernel
        def k(x: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True),
              y: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True)):
            for i in range(x.shape[0]):
                y[i] = x[i] * x[i]
    """
    x, y = qd.ndarray(qd.f32, 3, needs_grad=True), qd.ndarray(qd.f32, 3, needs_grad=True)
    x.from_numpy(np.array([1, 2, 3], np.float32))
    k = load(tmp_path, src).k
    k(x, y)
    y.grad.fill(1.0)
    k.grad(x, y)
    assert y.to_numpy().tolist() == [1, 4, 9] and x.grad.to_numpy().tolist() == [2, 4, 6]


def test_the_return_annotation_is_part_of_the_key(tmp_path) -> None:
    """`-> dt` reads the same whatever type `dt` names: a kernel defined again (or in a new process)
    with `dt` now f32 must not be served the i32 kernel (the host read its i32 result as f32)."""
    src = """
        import qdlab as qd

        def make(dt):
            @qd.kernel
            def k(a: qd.i32, b: qd.f32) -> dt:
                return a * b
            return k
    """
    make = load(tmp_path, src).make
    assert make(qd.i32)(3, 0.4) == 1
    assert make(qd.f32)(3, 0.4) == pytest.approx(1.2)
    assert make(qd.i32)(3, 0.4) == 1


def test_fingerprints_describe_content_not_names() -> None:
    from qdlab.compiler.cache.manifest import fingerprint

    def variants(src: str, **names: object) -> str:
        scope = dict(names)
        exec(textwrap.dedent(src), scope)  # noqa: S102 - the test's own source
        return fingerprint(scope["helper"])

    base = variants("def helper(x=2.0):\n    return x * FACTOR\n", FACTOR=1.0)
    assert variants("def helper(x=2.0):\n    return x * FACTOR\n", FACTOR=1.0) == base
    assert variants("def helper(x=2.0):\n    return x / FACTOR\n", FACTOR=1.0) != base  # body
    assert variants("def helper(x=3.0):\n    return x * FACTOR\n", FACTOR=1.0) != base  # default
    assert (
        variants("def helper(x=2.0):\n    return x * FACTOR\n", FACTOR=4.0) != base
    )  # a global it reads
    table = np.zeros(2000, np.float32)
    before = fingerprint(table)
    table[700] = 1.0  # beyond what repr shows
    assert fingerprint(table) != before

    class Opaque:
        def __repr__(self) -> str:
            return "Opaque()"

    obj = Opaque()
    obj.scale = 1.0
    before = fingerprint(obj)
    obj.scale = 2.0
    assert fingerprint(obj) != before
    cyclic: list = [1]
    cyclic.append(cyclic)
    assert fingerprint(cyclic) == fingerprint(cyclic)


def test_an_input_that_cannot_be_fingerprinted_is_never_served_from_a_manifest(tmp_path) -> None:
    import threading

    from qdlab.compiler.cache.manifest import UNKNOWN, fingerprint

    class Holder:  # a lock has no content to describe: the object's fingerprint cannot be trusted
        def __init__(self, value: float) -> None:
            self.lock, self.value = threading.Lock(), value

    assert fingerprint(Holder(1.0)) == UNKNOWN
    src = """
        import qdlab as qd

        @qd.kernel
        def k(a: qd.types.NDArray[qd.f32, 1]):
            for i in range(a.shape[0]):
                value = qd.static(holder.value)  # a name: an element cannot be, as in Quadrants
                a[i] = value
    """
    for value in (1.0, 1.0, 3.0):
        k = load(tmp_path, src, holder=Holder(value)).k
        a = np.zeros(2, np.float32)
        k(a)
        assert (a == value).all() and total(k) != -1  # compiled each time (its constructs reused)


def test_a_dependency_that_raises_when_checked_means_a_compile(tmp_path) -> None:
    class Flaky:
        broken = False

        @property
        def value(self) -> float:
            if Flaky.broken:
                raise RuntimeError("not now")
            return 2.0

    src = """
        import qdlab as qd

        @qd.kernel
        def k(a: qd.types.NDArray[qd.f32, 1]):
            for i in range(a.shape[0]):
                value = qd.static(flaky.value)  # a name: an element cannot be, as in Quadrants
                a[i] = value
    """
    a, flaky = np.zeros(2, np.float32), Flaky()
    load(tmp_path, src, flaky=flaky).k(a)
    Flaky.broken = True
    with pytest.raises(
        qd.QdError, match="not now"
    ):  # the compile's error, not the manifest check's
        load(tmp_path, src, flaky=flaky).k(a)
