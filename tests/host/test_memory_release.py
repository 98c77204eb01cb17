"""A kernel's compiled variants keep no argument alive: a data-oriented object and the ndarrays it
holds are freed when the program drops them, after a compile and after a variant served from the
manifest (whose pipeline runs later, if ever, from the objects held weakly), as Quadrants keys
such objects by weak reference."""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import logging
import weakref

import numpy as np
import pytest

import qdlab as qd
from qdlab.core.errors import QdError
from qdlab.host.kernel import Rebuild


@qd.data_oriented
class Holder:
    def __init__(self, n: int) -> None:
        self.a = qd.ndarray(qd.f32, shape=(n,))
        self.scale = 2.0

    @qd.kernel
    def run(self, x: qd.f32):
        for i in range(self.a.shape[0]):
            self.a[i] = x * self.scale


def dropped(make) -> bool:
    """Whether the object `make()` returns, and its ndarray, are freed once dropped."""
    h = make()
    h.run(1.5)
    assert h.a.to_numpy().tolist() == [3.0] * 4
    refs = weakref.ref(h), weakref.ref(h.a)
    del h
    gc.collect()
    return all(r() is None for r in refs)


@pytest.mark.parametrize("tier", ["compiled", "served"])
def test_a_dropped_object_and_its_arrays_are_freed(tier: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path))
    qd.init(arch=qd.cpu, offline_cache=True)
    assert dropped(lambda: Holder(4))
    if tier == "served":
        qd.init(arch=qd.cpu, offline_cache=True)  # memory emptied: the manifest serves the variant
        assert dropped(lambda: Holder(4))
        assert isinstance(Holder.run.latest.full, Rebuild)  # type: ignore[attr-defined]


def test_a_served_variant_reports_while_its_objects_live(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path))
    qd.init(arch=qd.cpu, offline_cache=True)
    Holder(4).run(1.0)
    qd.init(arch=qd.cpu, offline_cache=True)
    h = Holder(4)
    h.run(1.0)
    compiled = Holder.run.latest  # type: ignore[attr-defined]
    assert compiled.observations == (-1, -1, -1)  # served: nothing lowered yet
    assert compiled.report.kernel == "run" and compiled.report.constructs  # lowered now, from h
    np.testing.assert_array_equal(h.a.to_numpy(), [2.0] * 4)

    qd.init(arch=qd.cpu, offline_cache=True)
    g = Holder(4)
    g.run(1.0)
    late = Holder.run.latest  # type: ignore[attr-defined]
    del g
    gc.collect()
    with pytest.raises(QdError, match="objects this variant was compiled for are gone"):
        late.report  # noqa: B018 - the property runs the pipeline


@dataclasses.dataclass
class Pair:
    x: qd.types.NDArray[qd.f32, 1]
    y: qd.types.NDArray[qd.f32, 1]


@qd.kernel
def snapshot(p: Pair, out: qd.types.NDArray[qd.f32, 1]):
    s = p.x[0]
    for i in range(p.y.shape[0]):
        p.y[i] = -1.0
    for i in range(out.shape[0]):
        out[i] = s


def pair(x: list[float], y: list[float] | None = None) -> Pair:
    a = qd.ndarray(qd.f32, shape=(len(x),))
    a.from_numpy(np.array(x, np.float32))
    if y is None:
        return Pair(a, a)  # one array for both members: aliased
    b = qd.ndarray(qd.f32, shape=(len(y),))
    b.from_numpy(np.array(y, np.float32))
    return Pair(a, b)


def test_an_aliased_launch_of_a_served_variant_whose_objects_are_gone(
    tmp_path, monkeypatch, caplog
) -> None:
    """The struct a served variant was made from is gone when another, whose members share one
    array, needs the whole kernel: it is lowered from the launch's own struct, and the snapshot
    is the value before the overwrite, as on every path."""
    monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path))
    out = np.zeros(3, np.float32)
    qd.init(arch=qd.cpu, offline_cache=True)
    snapshot(pair([3.0, 2.0], [0.0, 0.0]), out)
    qd.init(arch=qd.cpu, offline_cache=True)
    first = pair([4.0, 2.0], [0.0, 0.0])
    snapshot(first, out)  # served from the manifest
    assert out.tolist() == [4.0] * 3
    assert isinstance(snapshot.latest.full, Rebuild)  # type: ignore[attr-defined]
    del first
    gc.collect()
    shared = pair([5.0, 2.0, 1.0])
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        snapshot(shared, out)
    assert "aliased_arguments" in caplog.text
    assert out.tolist() == [5.0] * 3 and shared.x.to_numpy().tolist() == [-1.0] * 3


@pytest.mark.parametrize("tier", ["compiled", "served"])
def test_a_redefined_kernel_keeps_one_step_of_history(tier: str, tmp_path, monkeypatch) -> None:
    """A kernel defined again and again (a notebook cell run after each edit) holds the variant
    before it, which its report compares with, and no older one: the first variant's code is
    freed after the third definition, whether or not any report was made."""
    monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path))
    qd.init(arch=qd.cpu, offline_cache=True)

    def define(scale: float):
        """A new kernel object of the same name, from a file as a re-run cell makes it."""
        path = tmp_path / f"edit{scale:g}.py"
        path.write_text(
            "import qdlab as qd\n\n\n@qd.kernel\ndef edited(a: qd.types.NDArray[qd.f32, 1]):\n"
            f"    for i in a:\n        a[i] = i * {scale}\n"
        )
        spec = importlib.util.spec_from_file_location(f"edit{id(path)}_{scale:g}", path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod.edited

    if tier == "served":
        a = qd.ndarray(qd.f32, 4)
        for s in (1.0, 2.0, 3.0, 4.0):
            define(s)(a)
        qd.init(arch=qd.cpu, offline_cache=True)  # memory emptied: the manifest serves each
    a = qd.ndarray(qd.f32, 4)
    kernels = [define(s) for s in (1.0, 2.0, 3.0, 4.0)]
    kernels[0](a)
    first = weakref.ref(kernels[0].latest)  # type: ignore[attr-defined]
    del kernels[0]
    for k in kernels:
        k(a)
    assert a.to_numpy().tolist() == [0.0, 4.0, 8.0, 12.0]
    gc.collect()
    assert first() is None
    report = kernels[-1].latest.report  # type: ignore[attr-defined]
    assert report.previous is not None  # compared with the variant before it
