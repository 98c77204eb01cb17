"""`qd.math`: the math built-ins under the namespace Quadrants code uses, the integer bit functions
Quadrants keeps only here, GLSL-style vector and matrix types (`vec3`, `ivec2`, `mat4` ...), and
the functions on them, written as `@qd.func`s in the kernel language itself (each is inlined where
it is called, like any `@qd.func`)."""

from .core.language import BUILTINS as _BUILTINS
from .core.language import MATH as _MATH
from .core.language import Builtin as _Builtin
from .core.language import Func as _Func
from .core.language import Matrix as _Matrix
from .core.language import Template as _Template
from .core.language import VectorType as _VectorType
from .core.language import static as _static
from .core.matrix import MatrixType as _MatrixType
from .core.types import i32 as _i32
from .core.types import u32 as _u32

_loop_config = _BUILTINS["loop_config"]

_NOT_HERE = ("abs", "rsqrt", "select", "exp2")
"""Built-ins Quadrants has at `qd.` but not under `qd.math` (`qd.math.abs` is an AttributeError
there)."""
globals().update({name: _BUILTINS[name] for name in _MATH if name not in _NOT_HERE})
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")

popcnt, clz, ffs = (_Builtin(n) for n in ("popcnt", "clz", "ffs"))
"""Bit counts of an integer, each an i32: set bits, leading zeros, 1 + the lowest set bit (0 for
0)."""


def _fns(mask: _u32, base: _u32, offset: _i32) -> _u32:
    """The position of the |offset|-th set bit of `mask`, searching up from bit `base` (offset > 0)
    or down from it (offset < 0); for offset 0, `base` itself if that bit is set; 0xFFFFFFFF when
    there is no such bit (CUDA's `fns`)."""
    found = _u32(0xFFFFFFFF)
    if offset == 0:
        if base < 32 and (mask >> base) & 1:
            found = base
    else:
        left = offset if offset > 0 else -offset
        _loop_config(serialize=True)
        for k in range(32):
            pos = k if offset > 0 else 31 - k
            if left > 0 and (pos >= base if offset > 0 else pos <= base) and (mask >> pos) & 1:
                left -= 1
                if left == 0:
                    found = pos
    return found


fns = _Func(_fns)
vec2, vec3, vec4 = (_VectorType(n, "fp") for n in (2, 3, 4))
ivec2, ivec3, ivec4 = (_VectorType(n, "ip") for n in (2, 3, 4))
uvec2, uvec3, uvec4 = (_VectorType(n, "up") for n in (2, 3, 4))
mat2, mat3, mat4 = (_MatrixType(n, n, "fp") for n in (2, 3, 4))
"""Their entries have the default types of `qd.init` (`default_fp`, `default_ip`, u32), looked up
when they are used."""

_cos, _sin, _floor, _sqrt, _clamp = (_BUILTINS[n] for n in ("cos", "sin", "floor", "sqrt", "clamp"))
_exp, _log, _pow, _atan2 = (_BUILTINS[n] for n in ("exp", "log", "pow", "atan2"))


def _func(fn: object) -> _Func:
    return _Func(fn)  # type: ignore[arg-type]


@_func
def normalize(v):
    return v.normalized()


@_func
def dot(x, y):
    return x.dot(y)


@_func
def cross(x, y):
    return x.cross(y)


@_func
def length(x):
    return x.norm()


@_func
def distance(x, y):
    return (x - y).norm()


@_func
def determinant(m):
    return m.determinant()


@_func
def inverse(m):
    return m.inverse()


@_func
def reflect(x, n):
    return x - 2.0 * x.dot(n) * n


@_func
def refract(x, n, eta):
    d = x.dot(n)
    k = 1.0 - eta * eta * (1.0 - d * d)
    out = x * 0.0
    if k >= 0.0:
        out = eta * x - (eta * d + _sqrt(k)) * n
    return out


@_func
def step(edge, x):
    return float(x >= edge)


@_func
def smoothstep(edge0, edge1, x):
    t = _clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@_func
def mod(x, y):
    return x - y * _floor(x / y)


@_func
def degrees(x):
    return x * _static(180.0 / pi)


@_func
def radians(x):
    return x * _static(pi / 180.0)


@_func
def vdir(ang):
    return vec2(_cos(ang), _sin(ang))


@_func
def eye(n: _Template):
    return _Matrix.identity(float, n)


@_func
def translate(dx, dy, dz):
    return mat4(
        [[1.0, 0.0, 0.0, dx], [0.0, 1.0, 0.0, dy], [0.0, 0.0, 1.0, dz], [0.0, 0.0, 0.0, 1.0]]
    )


@_func
def scale(sx, sy, sz):
    return mat4(
        [[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0], [0.0, 0.0, 0.0, 1.0]]
    )


@_func
def rotation2d(ang):
    c, s = _cos(ang), _sin(ang)
    return mat2([[c, -s], [s, c]])


@_func
def rot_by_axis(axis, ang):
    """The 4x4 rotation by `ang` radians about `axis`."""
    c, s = _cos(ang), _sin(ang)
    a = axis.normalized()
    t = (1 - c) * a
    return mat4(
        [
            [c + t[0] * a[0], t[0] * a[1] + s * a[2], t[0] * a[2] - s * a[1], 0.0],
            [t[1] * a[0] - s * a[2], c + t[1] * a[1], t[1] * a[2] + s * a[0], 0.0],
            [t[2] * a[0] + s * a[1], t[2] * a[1] - s * a[0], c + t[2] * a[2], 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


@_func
def rot_yaw_pitch_roll(yaw, pitch, roll):
    """The 4x4 rotation by Euler angles: about Y first, then X, then Z."""
    ch, sh = _cos(yaw), _sin(yaw)
    cp, sp = _cos(pitch), _sin(pitch)
    cb, sb = _cos(roll), _sin(roll)
    return mat4(
        [
            [ch * cb + sh * sp * sb, sb * cp, -sh * cb + ch * sp * sb, 0.0],
            [-ch * sb + sh * sp * cb, cb * cp, sb * sh + ch * sp * cb, 0.0],
            [sh * cp, -sp, ch * cp, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


@_func
def rotation3d(ang_x, ang_y, ang_z):
    return rot_yaw_pitch_roll(ang_z, ang_x, ang_y)


# -- complex numbers as 2-vectors (x, y) = x + iy, as Quadrants' `qd.math.cmul` ... ----------------


@_func
def cmul(z1, z2):
    """The complex product `z1 * z2`."""
    return vec2(z1[0] * z2[0] - z1[1] * z2[1], z1[0] * z2[1] + z2[0] * z1[1])


@_func
def cconj(z):
    """The complex conjugate `(x, -y)`."""
    return vec2(z[0], -z[1])


@_func
def cdiv(z1, z2):
    """The complex quotient `z1 / z2`."""
    x1, y1 = z1[0], z1[1]
    x2, y2 = z2[0], z2[1]
    return vec2(x1 * x2 + y1 * y2, -x1 * y2 + x2 * y1) / z2.dot(z2)


@_func
def csqrt(z):
    """The square root with a positive real part (or, both real parts zero, a non-negative
    imaginary one); 0 for 0."""
    result = vec2(0.0, 0.0)
    if z[0] != 0 or z[1] != 0:
        r = _sqrt(z.norm())
        a = _atan2(z[1], z[0])
        result = r * vec2(_cos(a / 2.0), _sin(a / 2.0))
    return result


@_func
def cinv(z):
    """The reciprocal `1 / z`."""
    return cconj(z) / z.dot(z)


@_func
def cpow(z, n):
    """`z` to the real power `n` (polar form); 0 for 0."""
    result = vec2(0.0, 0.0)
    if z[0] != 0 or z[1] != 0:
        r2 = z.dot(z)
        a = _atan2(z[1], z[0]) * n
        result = _pow(r2, n / 2.0) * vec2(_cos(a), _sin(a))
    return result


@_func
def cexp(z):
    """The complex exponential `e^z`."""
    r = _exp(z[0])
    return vec2(r * _cos(z[1]), r * _sin(z[1]))


@_func
def clog(z):
    """The complex logarithm, its imaginary part in (-pi, pi]."""
    ang = _atan2(z[1], z[0])
    r2 = z.dot(z)
    return vec2(_log(r2) / 2.0, ang)
