"""`qd.svd` and `qd.polar_decompose` of 3x3 matrices: McAdams/Sifakis' algorithm as Quadrants
runs it, so the results are the reference's bits (values recorded on quadrants 1.3.3, CPU,
fast_math=False), including its conventions for degenerate input (the sign of det A on the last
singular value, a zero matrix giving identities) and its accuracy (8 sweeps in f64 with the
method's f32 constants: about 1e-13 off on a diagonal matrix); and, on random matrices, an SVD
against NumPy's."""

import numpy as np
import pytest

import qdlab as qd

MATRICES = np.array(
    [
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]],
        [[2.0, 0.0, 0.0], [0.0, -3.0, 0.0], [0.0, 0.0, 3.0]],
        [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, -1.0]],
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    ]
)
I3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
REFERENCE = {  # per matrix: U, the singular values, V
    qd.f32: [
        (
            [
                [-0.20933739840984344, 0.9643847346305847, 0.16167894005775452],
                [-0.5038485527038574, 0.03532418608665466, -0.8630697727203369],
                [-0.8380424380302429, -0.26213449239730835, 0.47850921750068665],
            ],
            [17.412513732910156, 0.8751616477966309, -0.19686675071716309],
            [
                [-0.4646676778793335, -0.8332899212837219, -0.2995198369026184],
                [-0.5537546277046204, 0.009509265422821045, 0.8326258063316345],
                [-0.6909703612327576, 0.5527547001838684, -0.46585673093795776],
            ],
        ),
        (
            [
                [8.940695295223122e-08, -5.960463766996327e-08, -0.9999998807907104],
                [-5.329070518200751e-15, -0.9999997615814209, 5.960464477539063e-08],
                [-0.9999998807907104, 0.0, -8.940695295223122e-08],
            ],
            [2.999999523162842, 2.9999992847442627, -1.999999761581421],
            [[-0.0, 0.0, 1.0], [-0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]],
        ),
        (
            [
                [0.44625771045684814, -0.029223114252090454, -0.8944270014762878],
                [0.8925155997276306, -0.05844603851437569, 0.44721341133117676],
                [-0.06534472107887268, -0.9978623986244202, 8.921587379973062e-08],
            ],
            [8.384081840515137, 1.3065764904022217, 1.3359014686565446e-13],
            [
                [0.258340060710907, -0.87555330991745, 0.40824833512306213],
                [0.5322676301002502, -0.22366122901439667, -0.8164965510368347],
                [0.8061956763267517, 0.42823120951652527, 0.40824800729751587],
            ],
        ),
        (I3, [0.0, 0.0, 0.0], I3),
    ],
    qd.f64: [
        (
            [
                [-0.20933734352577432, 0.96438513512906, 0.16167618175747522],
                [-0.5038485108077234, 0.03532145172128559, -0.8630695645225478],
                [-0.8380420960562852, -0.2621329933266797, 0.47850991530707404],
            ],
            [17.412505166808597, 0.8751613501104348, -0.19686652111742997],
            [
                [-0.4646675467797493, -0.8332863547739372, -0.2995295009131038],
                [-0.5537545526717392, 0.009499485152169529, 0.8326257593764231],
                [-0.6909703078751004, 0.5527599937851936, -0.46585021509663527],
            ],
        ),
        (
            [
                [-3.3356650774862823e-13, 3.334554854461656e-13, -1.0],
                [-1.1122958176990106e-25, -0.9999999999999993, -3.334554854461658e-13],
                [-0.9999999999999998, 0.0, 3.3356650774862813e-13],
            ],
            [2.999999999999999, 2.999999999999998, -2.0],
            [[-0.0, 0.0, 1.0], [-0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]],
        ),
        (
            [
                [0.4462577880534597, -0.029223049150854878, -0.8944271909998937],
                [0.8925155761069196, -0.058446098299998306, 0.44721359550000267],
                [-0.06534472440959824, -0.99786274957623, 7.637519278767577e-13],
            ],
            [8.384083515743656, 1.3065770551465798, 3.1197703267645717e-27],
            [
                [0.2583400095896568, -0.8755534094380238, 0.4082482904638659],
                [0.5322678229713192, -0.2236611230471381, -0.8164965809277256],
                [0.8061956363529816, 0.4282311633437552, 0.40824829046386185],
            ],
        ),
        (I3, [0.0, 0.0, 0.0], I3),
    ],
}
POLAR_OF_THE_FIRST = {  # R, P of polar_decompose(MATRICES[0])
    qd.f32: (
        [
            [-0.7547657489776611, 0.2597101926803589, 0.6023948788642883],
            [0.4631933569908142, -0.4392697811126709, 0.7697368860244751],
            [0.4645223021507263, 0.8599963188171387, 0.21124963462352753],
        ],
        [
            [4.349667549133301, 4.522607803344727, 5.16008996963501],
            [4.522607803344727, 5.203044414520264, 6.7434773445129395],
            [5.160090446472168, 6.743477821350098, 8.538102149963379],
        ],
    ),
    qd.f64: (
        [
            [-0.754763490015707, 0.2596984229026353, 0.6024025259585096],
            [0.46320396363022975, -0.4392700092324329, 0.7697297883453535],
            [0.4645149752339034, 0.8599991791454349, 0.211251626390483],
        ],
        [
            [4.349657191142539, 4.522612639990945, 5.160083064073298],
            [4.522612639990945, 5.2030402328065835, 6.743467004767656],
            [5.160083064073298, 6.743467004767656, 8.538102571852471],
        ],
    ),
}


def decompose(a: np.ndarray, dt: object) -> list[np.ndarray]:
    M3 = qd.types.NDArray[qd.types.matrix(3, 3, dt), 1]

    @qd.kernel
    def run(a: M3, u: M3, s: M3, v: M3, r: M3, p: M3):
        for n in a:
            u[n], s[n], v[n] = qd.svd(a[n], dt)
            r[n], p[n] = qd.polar_decompose(a[n], dt)

    outs = [np.zeros_like(a) for _ in range(5)]
    run(a, *outs)
    return outs


def bits(x: object) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(np.uint64)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64], ids=["f32", "f64"])
def test_3x3_svd_and_polar_are_the_references_bits(dt: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=dt)
    npdt = np.float32 if dt == qd.f32 else np.float64
    u, s, v, r, p = decompose(MATRICES.astype(npdt), dt)
    for n, (ru, rs, rv) in enumerate(REFERENCE[dt]):
        np.testing.assert_array_equal(bits(u[n]), bits(ru), err_msg=f"U of matrix {n}")
        np.testing.assert_array_equal(bits(np.diag(s[n])), bits(rs), err_msg=f"S of matrix {n}")
        np.testing.assert_array_equal(bits(v[n]), bits(rv), err_msg=f"V of matrix {n}")
        assert (s[n] == np.diag(np.diag(s[n]))).all()
    np.testing.assert_array_equal(bits(r[0]), bits(POLAR_OF_THE_FIRST[dt][0]))
    np.testing.assert_array_equal(bits(p[0]), bits(POLAR_OF_THE_FIRST[dt][1]))
    np.testing.assert_array_equal(r[3], np.eye(3))  # a zero matrix: (I, 0)
    np.testing.assert_array_equal(p[3], 0.0)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64], ids=["f32", "f64"])
def test_3x3_svd_against_numpy(dt: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=dt)
    npdt = np.float32 if dt == qd.f32 else np.float64
    a = np.random.default_rng(7).standard_normal((64, 3, 3)).astype(npdt)
    u, s, v, r, p = (x.astype(np.float64) for x in decompose(a, dt))
    tol = 1e-5 if dt == qd.f32 else 1e-9  # f64 keeps the method's f32 constants and thresholds
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(u @ s @ v.transpose(0, 2, 1), a64, atol=tol)
    np.testing.assert_allclose(r @ p, a64, atol=tol)
    sig = np.diagonal(s, axis1=1, axis2=2)
    assert (np.diff(sig, axis=1) <= 0).all()  # descending
    np.testing.assert_allclose(np.abs(sig), np.linalg.svd(a64, compute_uv=False), atol=tol)
    np.testing.assert_allclose(np.sign(sig[:, 2]), np.sign(np.linalg.det(a64)))
    np.testing.assert_allclose(np.linalg.det(u), 1.0, atol=tol)  # rotations
    np.testing.assert_allclose(np.linalg.det(v), 1.0, atol=tol)
    np.testing.assert_allclose(p, p.transpose(0, 2, 1), atol=tol)


def test_3x3_svd_in_a_type_the_method_does_not_take_is_refused() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def half() -> qd.f32:
        _U, S, _V = qd.svd(qd.Matrix([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]]), qd.f16)
        return S[0, 0]

    with pytest.raises(qd.QuadrantsCompilationError, match="computes in f32 or f64, not f16"):
        half()
