"""`qd.linalg.LinearOperator`, `MatrixFreeCG` and `MatrixFreeBICGSTAB`: Krylov solvers on fields
whose matrix is a kernel (`matvec(x, Ax)`), as Quadrants writes them: the vectors are fields of
b's shape (1-D to 3-D), each step a small kernel, the scalars reduced by kernels and the control
in Python, in the same order of operations as the reference (so f32 runs round alike).
"""

from collections.abc import Callable
from math import sqrt
from typing import Any

from ..core.errors import QuadrantsRuntimeError, QuadrantsTypeError
from ..core.language import BUILTINS, Template
from ..core.types import f32, f64
from ..host.data_oriented import data_oriented
from ..host.field import field
from ..host.kernel import kernel

grouped = BUILTINS["grouped"]


@data_oriented
class LinearOperator:
    """A matrix given by a kernel `matvec(x, Ax)` that writes A x into the field Ax."""

    def __init__(self, matvec_kernel: Callable[[Any, Any], None]) -> None:
        self._matvec = matvec_kernel

    def matvec(self, x: Any, Ax: Any) -> None:
        if x.shape != Ax.shape:
            raise QuadrantsRuntimeError(
                f"Dimension mismatch x.shape{x.shape} != Ax.shape{Ax.shape}."
            )
        self._matvec(x, Ax)


def _solver_dtype(b: Any, x: Any, name: str) -> Any:
    if b.dtype != x.dtype:
        raise QuadrantsTypeError(f"Dtype mismatch b.dtype({b.dtype}) != x.dtype({x.dtype}).")
    if b.dtype not in (f32, f64):
        raise QuadrantsTypeError(f"Not supported dtype: {b.dtype}")
    if b.shape != x.shape:
        raise QuadrantsRuntimeError(f"Dimension mismatch b.shape{b.shape} != x.shape{x.shape}.")
    if not 1 <= len(b.shape) <= 3:
        raise QuadrantsRuntimeError(
            f"{name} only support 1D, 2D, 3D inputs; your inputs is {len(b.shape)}-D."
        )
    return b.dtype


def _vectors(dtype: Any, shape: tuple[int, ...], n: int) -> list[Any]:
    return [field(dtype, shape=shape) for _ in range(n)]


def _scalars(dtype: Any, n: int) -> list[Any]:
    return [field(dtype, shape=()) for _ in range(n)]


def _reduce(dtype: Any) -> Any:
    @kernel
    def reduce(p: Template, q: Template) -> dtype:
        result = dtype(0.0)
        for I in grouped(p):
            result += p[I] * q[I]
        return result

    return reduce


def MatrixFreeCG(
    A: LinearOperator, b: Any, x: Any, tol: float = 1e-6, maxiter: int = 5000, quiet: bool = True
) -> bool:
    """Conjugate gradients for A x = b (A symmetric positive definite), from the guess in x;
    whether |r|^2 fell below tol."""
    dt = _solver_dtype(b, x, "MatrixFreeCG")
    p, r, Ap, Ax = _vectors(dt, b.shape, 4)
    alpha, beta = _scalars(dt, 2)
    reduce = _reduce(dt)

    @kernel
    def init():
        for I in grouped(x):
            r[I] = b[I] - Ax[I]
            p[I] = 0.0
            Ap[I] = 0.0

    @kernel
    def update_x():
        for I in grouped(x):
            x[I] += alpha[None] * p[I]

    @kernel
    def update_r():
        for I in grouped(r):
            r[I] -= alpha[None] * Ap[I]

    @kernel
    def update_p():
        for I in grouped(p):
            p[I] = r[I] + beta[None] * p[I]

    A._matvec(x, Ax)
    init()
    initial_rTr = reduce(r, r)
    if not quiet:
        print(f">>> Initial residual = {initial_rTr:e}")
    old_rTr = new_rTr = initial_rTr
    update_p()
    if sqrt(initial_rTr) >= tol:
        for i in range(maxiter):
            A._matvec(p, Ap)
            pAp = reduce(p, Ap)
            alpha[None] = old_rTr / pAp
            update_x()
            update_r()
            new_rTr = reduce(r, r)
            if sqrt(new_rTr) < tol:
                if not quiet:
                    print(">>> Conjugate Gradient method converged.")
                    print(f">>> #iterations {i}")
                break
            beta[None] = new_rTr / old_rTr
            update_p()
            old_rTr = new_rTr
            if not quiet:
                print(f">>> Iter = {i + 1:4}, Residual = {sqrt(new_rTr):e}")
    if new_rTr >= tol:
        if not quiet:
            print(
                f">>> Conjugate Gradient method failed to converge in {maxiter} iterations: "
                f"Residual = {sqrt(new_rTr):e}"
            )
        return False
    return True


def MatrixFreeBICGSTAB(
    A: LinearOperator, b: Any, x: Any, tol: float = 1e-6, maxiter: int = 5000, quiet: bool = True
) -> bool:
    """BiCGSTAB for A x = b (A need not be symmetric), from the guess in x; whether |r|^2 fell
    below tol."""
    dt = _solver_dtype(b, x, "MatrixFreeBICGSTAB")
    p, p_hat, r, r_tld, s, s_hat, t, Ap, Ax, Ashat = _vectors(dt, b.shape, 10)
    alpha, beta, omega, rho, rho_1 = _scalars(dt, 5)
    reduce = _reduce(dt)

    @kernel
    def init():
        for I in grouped(x):
            r[I] = b[I] - Ax[I]
            r_tld[I] = b[I]
            p[I] = 0.0
            Ap[I] = 0.0
            Ashat[I] = 0.0
        rho[None] = 0.0
        rho_1[None] = 1.0
        alpha[None] = 1.0
        beta[None] = 1.0
        omega[None] = 1.0

    @kernel
    def copy(orig: Template, dest: Template):
        for I in grouped(orig):
            dest[I] = orig[I]

    @kernel
    def update_p():
        for I in grouped(p):
            p[I] = r[I] + beta[None] * (p[I] - omega[None] * Ap[I])

    @kernel
    def update_s():
        for I in grouped(s):
            s[I] = r[I] - alpha[None] * Ap[I]

    @kernel
    def update_x():
        for I in grouped(x):
            x[I] += alpha[None] * p_hat[I] + omega[None] * s_hat[I]

    @kernel
    def update_r():
        for I in grouped(r):
            r[I] = s[I] - omega[None] * t[I]

    succeeded = True
    A._matvec(x, Ax)
    init()
    initial_rTr = reduce(r, r)
    rTr = initial_rTr
    if not quiet:
        print(f">>> Initial residual = {initial_rTr:e}")
    if sqrt(initial_rTr) >= tol:
        for i in range(maxiter):
            rho[None] = reduce(r, r_tld)
            if rho[None] == 0.0:
                if not quiet:
                    print(">>> BICGSTAB failed because r@r_tld = 0.")
                succeeded = False
                break
            if i == 0:
                copy(r, p)
            else:
                beta[None] = (rho[None] / rho_1[None]) * (alpha[None] / omega[None])
                update_p()
            copy(p, p_hat)
            A._matvec(p, Ap)
            alpha[None] = rho[None] / reduce(r_tld, Ap)
            update_s()
            copy(s, s_hat)
            A._matvec(s_hat, Ashat)
            copy(Ashat, t)
            omega_upper = reduce(t, s)
            omega_lower = reduce(t, t)
            omega[None] = omega_upper / (omega_lower + 1e-16 if omega_lower == 0.0 else omega_lower)
            update_x()
            update_r()
            rTr = reduce(r, r)
            if not quiet:
                print(f">>> Iter = {i + 1:4}, Residual = {sqrt(rTr):e}")
            if sqrt(rTr) < tol:
                if not quiet:
                    print(f">>> BICGSTAB method converged at #iterations {i}")
                break
            rho_1[None] = rho[None]
    if rTr >= tol:
        if not quiet:
            print(
                f">>> BICGSTAB failed to converge in {maxiter} iterations: Residual = {sqrt(rTr):e}"
            )
        succeeded = False
    return succeeded


__all__ = ["LinearOperator", "MatrixFreeBICGSTAB", "MatrixFreeCG"]
