"""`StructField.to_numpy(copy=...)` / `to_torch(copy=...)`: `copy` goes to each member; a struct
field made with `layout=qd.Layout.SOA` gives zero-copy views of its members, an AOS one (the
default) never does, as in the reference (`copy=None` copies, `copy=False` is refused with its
ValueError)."""

import pytest

import qdlab as qd


def make(layout: object) -> object:
    qd.init(arch=qd.cpu, offline_cache=False)
    return qd.Struct.field({"pos": qd.f32, "vel": qd.f32}, shape=(16,), layout=layout)


def test_soa_members_are_views_and_aos_members_copies() -> None:
    soa = make(qd.Layout.SOA)
    arrays = soa.to_numpy(copy=False)
    arrays["vel"][2] = 3.0
    assert soa.vel[2] == 3.0 and sorted(arrays) == ["pos", "vel"]
    aos = make(qd.Layout.AOS)
    copies = aos.to_numpy(copy=None)
    copies["pos"][0] = 1.0
    assert aos.pos[0] == 0.0
    with pytest.raises(ValueError, match="Zero-copy not available for dtype=f32"):
        aos.to_numpy(copy=False)


def test_struct_fields_to_torch_take_copy() -> None:
    torch = pytest.importorskip("torch")
    soa = make(qd.Layout.SOA)
    views = soa.to_torch(copy=False)
    views["pos"][0] = 1.0
    assert soa.pos[0] == 1.0
    aos = make(None)  # the default layout is AOS
    got = aos.to_torch(copy=None)
    assert got["pos"].shape == torch.Size([16])
    got["pos"][0] = 1.0
    assert aos.pos[0] == 0.0
    with pytest.raises(ValueError, match="Zero-copy not available for arch=x64, dtype=f32"):
        aos.to_torch(copy=False)
