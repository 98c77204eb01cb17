"""One kernel name compiled in three versions, as a notebook cell re-run after edits would compile
it.

`v2` edits the second loop's own code; `v3` edits a definition that only the first loop recomputes.
"""

from __future__ import annotations

import qdlab as qd

F1 = qd.types.NDArray[qd.f32, 1]


@qd.kernel
def edited(x: F1, y: F1, z: F1, s: qd.f32):
    k = s * 0.5
    for i in range(x.shape[0]):
        y[i] = x[i] * k
    for i in range(x.shape[0]):
        z[i] = x[i] + 1.0


v1 = edited


@qd.kernel
def edited(x: F1, y: F1, z: F1, s: qd.f32):
    k = s * 0.5
    for i in range(x.shape[0]):
        y[i] = x[i] * k
    for i in range(x.shape[0]):
        z[i] = x[i] + 3.0


v2 = edited


@qd.kernel
def edited(x: F1, y: F1, z: F1, s: qd.f32):
    k = s * 0.25
    for i in range(x.shape[0]):
        y[i] = x[i] * k
    for i in range(x.shape[0]):
        z[i] = x[i] + 3.0


v3 = edited


@qd.kernel
def edited(x: F1, y: F1, z: F1, s: qd.f32):
    k = s * 0.25
    for i in range(x.shape[0]):
        y[i] = x[i] * k
    for i in range(x.shape[0]):
        z[i] = x[i] + 3.0
    for i in range(z.shape[0]):
        z[i] = z[i] * 2.0


v4 = edited
