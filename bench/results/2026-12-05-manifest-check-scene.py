"""The smallest headless Genesis scene, timed (`2026-12-05-manifest-check.md`): its `scene.build()`,
the time in the manifest's dependency check (`manifest.deps_hold`) and in struct arguments'
descriptions (`struct_args.content`), and with `COUNT=1` the values the fingerprint walked.

Run as `PYTHONPATH=<genesis checkout>:<qdlab> QDLAB_CACHE_DIR=<dir> python -m qdlab.run <this>`,
once cold, then warm; it prints one line, `RESULT {...}`."""

from __future__ import annotations

import collections
import json
import os
import time

import genesis as gs

from qdlab.compiler.cache import manifest
from qdlab.compiler.frontend import fingerprint
from qdlab.host import struct_args

spent: collections.Counter = collections.Counter()
nodes = [0]


def timed(module: object, name: str) -> None:
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    setattr(module, name, wrapper)


if os.environ.get("COUNT"):
    of = fingerprint._Fingerprint.of

    def counted(self, v, depth):
        nodes[0] += 1
        return of(self, v, depth)

    fingerprint._Fingerprint.of = counted  # type: ignore[method-assign]

timed(manifest, "deps_hold")
timed(struct_args, "content")
gs.init(backend=gs.cpu, logging_level="warning", seed=0)
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
box = scene.add_entity(gs.morphs.Box(size=(0.2, 0.2, 0.2), pos=(0.0, 0.0, 0.12)))
start = time.perf_counter()
scene.build()
build = time.perf_counter() - start
for _ in range(5):
    scene.step()
result = {
    "build": build,
    "deps_hold": spent["deps_hold"],
    "content": spent["content"],
    "nodes": nodes[0],
    "z": float(box.get_pos()[2]),
}
print("RESULT", json.dumps(result))
