"""Sample kernels whose LLVM IR is kept as golden files: a codegen change shows up as a reviewed
diff."""

import qdlab as qd


@qd.kernel
def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@qd.kernel
def row_sums(m: qd.types.NDArray[qd.i32, 2], out: qd.types.NDArray[qd.i32, 1]):
    for i in range(m.shape[0]):
        s = 0
        for j in range(m.shape[1]):
            s += m[i, j] // 2
        out[i] = s


@qd.kernel
def reduce_then_scale(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    for i in range(out.shape[0]):
        out[i] = total * qd.random(qd.f32)


@qd.kernel
def clamped_stencil(
    a: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp"), b: qd.types.NDArray[qd.f32, 1]
):
    for i in range(b.shape[0]):
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
