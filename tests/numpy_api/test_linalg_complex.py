"""Decompositions of complex matrices (and eig, complex from any matrix): values against
NumPy eagerly and compiled (LAPACK's c and z routines), batched, in both precisions;
derivatives against JAX and finite differences, under jit and vmap and inside a scan;
failures as NumPy's. Eigenvectors and singular vectors are compared through what does
not depend on their phases (LAPACK builds choose them differently)."""

from __future__ import annotations

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
SHAPES = [(1, 1), (3, 3), (2, 4, 4), (40, 40), (2, 0, 0)]


def general(rng, shape, dtype=C128):
    return np.asarray(rng.normal(size=shape) + 1j * rng.normal(size=shape), dtype)


def hermitian(rng, shape, dtype=C128):
    """Hermitian positive definite, its eigenvalues apart."""
    a = general(rng, shape)
    return np.asarray(a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1]), dtype)


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if dtype in (C64, np.float32) else dict(rtol=1e-9,
                                                                               atol=1e-10)


# (id, function, matrix maker, what of the result is compared: phase-free)
CASES = [
    ("det", rnp.linalg.det, np.linalg.det, general, None),
    ("slogdet", rnp.linalg.slogdet, np.linalg.slogdet, general, None),
    ("inv", rnp.linalg.inv, np.linalg.inv, general, None),
    ("cholesky", rnp.linalg.cholesky, np.linalg.cholesky, hermitian, None),
    ("cholesky_upper", lambda a: rnp.linalg.cholesky(a, upper=True),
     lambda a: np.linalg.cholesky(a, upper=True), hermitian, None),
    ("qr", rnp.linalg.qr, np.linalg.qr, general, None),
    ("eigvalsh", rnp.linalg.eigvalsh, np.linalg.eigvalsh, hermitian, None),
    ("eigh", rnp.linalg.eigh, np.linalg.eigh, hermitian, lambda r: (r[0], np.abs(r[1]))),
    ("eigh_upper", lambda a: rnp.linalg.eigh(a, "U"), lambda a: np.linalg.eigh(a, "U"),
     hermitian, lambda r: (r[0], np.abs(r[1]))),
    ("svd", rnp.linalg.svd, np.linalg.svd, general,
     lambda r: (np.abs(r[0]), r[1], np.abs(r[2]))),
    ("svdvals", lambda a: rnp.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), general, None),
    ("pinv", rnp.linalg.pinv, np.linalg.pinv, general, None),
    ("eigvals", rnp.linalg.eigvals, np.linalg.eigvals, general, np.sort_complex),
]


@pytest.mark.parametrize("dtype", [C128, C64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy(case, shape, dtype, backend, rng):
    name, f, ref, make, phase_free = case
    if 0 in shape and name in ("det", "slogdet", "inv"):
        return  # NumPy's own loops reject empty matrices there
    a = make(rng, shape, dtype)
    got, want = backend(f)(a), ref(a)
    phase_free = phase_free or (lambda r: r)
    for g, w in zip(np.atleast_1d(phase_free(got)) if not isinstance(got, tuple) else
                    phase_free(got), np.atleast_1d(phase_free(want)) if not
                    isinstance(want, tuple) else phase_free(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, **_tol(dtype))


@pytest.mark.parametrize("dtype", [C128, C64, np.float64, np.float32], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_eig_is_geevs(shape, dtype, backend, rng):
    """Eigenpairs (A v = v w), geev's normalization (unit columns, the largest component
    real) and NumPy's eigenvalues up to their order; complex from real matrices too."""
    a = general(rng, shape, C128)
    a = np.asarray(a if np.dtype(dtype).kind == "c" else a.real, dtype)
    w, v = backend(rnp.linalg.eig)(a)
    cdtype = C64 if np.dtype(dtype) in (C64, np.float32) else C128
    assert w.dtype == v.dtype == cdtype and w.shape == shape[:-1] and v.shape == shape
    tol = _tol(cdtype)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=0, atol=50 * tol["atol"])
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, **tol)
    if shape[-1]:
        big = np.take_along_axis(v, np.argmax(np.abs(v), -2)[..., None, :], -2)
        np.testing.assert_allclose(big.imag, 0, atol=tol["atol"])
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=tol["rtol"], atol=10 * tol["atol"])


def test_eig_of_a_real_matrix_pairs_conjugate_eigenvectors(backend):
    a = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    w, v = backend(rnp.linalg.eig)(a)
    np.testing.assert_allclose(w, [2j, -2j, 3], atol=1e-15)
    np.testing.assert_allclose(v[:, 1], np.conj(v[:, 0]), atol=1e-15)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-14)


@pytest.fixture
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _weights(n, seed=3):
    r = np.random.default_rng(seed)
    return r.normal(size=(n, n)), r.normal(size=(n, n)), r.normal(size=n)


W, W2, C = _weights(4)


def _herm(m, a):
    return a @ m.conj(a).T + 4 * m.eye(4)


def _eigenpairs(m, a):
    """eig through rune_jit, or through JAX with its eigenvector derivatives enabled."""
    if m is rnp:
        return rnp.linalg.eig(a)
    from jax._src.lax import linalg as lax_linalg
    return lax_linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)


# real-valued functions of a complex matrix, each through one decomposition; those of
# eigen- and singular vectors depend only on what their phases do not change
GRADS = {
    "det": lambda m, a: m.real(m.linalg.det(a)) + m.imag(m.linalg.det(a)) ** 2,
    "slogdet": lambda m, a: (m.linalg.slogdet(a)[1] + m.real(m.linalg.slogdet(a)[0]) * 0.3
                             + m.imag(m.linalg.slogdet(a)[0])),
    "cholesky": lambda m, a: m.sum(m.real(m.linalg.cholesky(_herm(m, a))) * W
                                   + m.imag(m.linalg.cholesky(_herm(m, a))) * W2),
    "eigvalsh": lambda m, a: m.sum(m.linalg.eigvalsh(_herm(m, a)) * C),
    "eigh": lambda m, a: m.sum(m.abs(m.linalg.eigh(_herm(m, a))[1]) ** 2 * W),
    "svdvals": lambda m, a: m.sum(m.linalg.svd(a, compute_uv=False) * C),
    "svd": lambda m, a: (m.sum(m.abs(m.linalg.svd(a, full_matrices=False)[0]) ** 2 * W)
                         + m.sum(m.real(m.linalg.svd(a, full_matrices=False)[0]
                                        @ m.linalg.svd(a, full_matrices=False)[2]) * W2)),
    "qr": lambda m, a: m.sum(m.real(m.linalg.qr(a)[0]) * W + m.imag(m.linalg.qr(a)[1]) * W2),
    "eigvals": lambda m, a: m.sum(m.real(m.linalg.eigvals(a)) * C
                                  + m.imag(m.linalg.eigvals(a)) ** 2),
    "eig": lambda m, a: (m.sum(m.real(_eigenpairs(m, a)[1]) * W
                               + m.imag(_eigenpairs(m, a)[1]) * W2)
                         + m.sum(m.real(_eigenpairs(m, a)[0]) * C)),
    "norms": lambda m, a: m.linalg.norm(a, 2) + m.linalg.norm(a, "nuc") - m.linalg.norm(a, -2),
    "pinv": lambda m, a: m.sum(m.real(m.linalg.pinv(a)) * W),
}


@pytest.mark.slow  # JAX's side of the comparison is most of its time
@pytest.mark.parametrize("real", [False, True], ids=["complex", "real"])
@pytest.mark.parametrize("name", list(GRADS))
def test_grad_is_jaxs(name, real, jax, backend, rng):
    if real and name not in ("det", "slogdet", "eigvals", "eig"):
        return  # the rest take complex matrices here (real ones: test_linalg.py)
    a = general(rng, (4, 4))
    a = a.real.copy() if real else a
    want = jax.grad(lambda a: GRADS[name](jax.numpy, a))(a)
    got = backend(rune.grad(lambda a: GRADS[name](rnp, a)))(a)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", list(GRADS))
def test_check_grads_along_real_and_imaginary_parts(name, rng):
    rune.check_grads(lambda a: GRADS[name](rnp, a), general(rng, (4, 4)), rtol=1e-4)


def test_jvp_of_holomorphic_decompositions_is_complex_linear(jax, rng):
    a, t = general(rng, (4, 4)), general(rng, (4, 4))

    def f(m, a):
        lu = m.linalg.det(a) * m.linalg.inv(a)
        return lu + m.linalg.eigvals(a)[:, None]

    got = rune.jit(lambda a, t: rune.jvp(lambda a: f(rnp, a), (a,), (t,)))(a, t)
    want = jax.jvp(lambda a: f(jax.numpy, a), (a,), (t,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)


def test_vmap_of_grad_matches_a_loop(backend, rng):
    a = general(rng, (3, 4, 4))
    f = rune.grad(lambda a: GRADS["svd"](rnp, a) + GRADS["eigh"](rnp, a))
    lanes = backend(rune.vmap(f))(a)
    for i in range(3):
        np.testing.assert_allclose(lanes[i], f(a[i]), rtol=1e-9, atol=1e-11)


def test_a_quantum_state_evolved_in_a_scan(jax, backend, rng):
    """|psi> under exp(-i H(theta) dt), H Hermitian, diagonalized each step by eigh:
    the population of the first state, its gradient w.r.t. theta against JAX's."""
    h0, h1 = hermitian(rng, (4, 4)), hermitian(rng, (4, 4))

    def population(m, scan, theta):
        def step(psi, k):
            w, v = m.linalg.eigh(h0 + theta * m.sin(0.3 * k) * h1)
            psi = v @ (m.exp(-0.05j * w) * (m.conj(v).T @ psi))
            return psi, m.abs(psi[0]) ** 2
        psi0 = m.zeros(4, dtype=complex).at[0].set(1.0)
        return m.sum(scan(step, psi0, m.arange(20.0))[1])

    want = jax.value_and_grad(lambda t: population(jax.numpy, jax.lax.scan, t))(0.7)
    got = backend(rune.value_and_grad(lambda t: population(rnp, rune.scan, t)))(0.7)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_failures_are_numpys(backend):
    not_pd = np.array([[1.0, 2.0j], [-2.0j, 1.0]])
    with pytest.raises(rnp.linalg.LinAlgError, match="positive definite"):
        backend(rnp.linalg.cholesky)(not_pd)
    with pytest.raises(rnp.linalg.LinAlgError):
        backend(rnp.linalg.eig)(np.array([[np.nan, 1j], [0, 1]]))
    with pytest.raises(rnp.linalg.LinAlgError, match="square"):
        backend(rnp.linalg.eig)(np.ones((2, 3), complex))
    assert backend(rnp.linalg.det)(np.zeros((2, 2), complex)) == 0
    sign, logdet = backend(rnp.linalg.slogdet)(np.zeros((2, 2), np.complex64))
    assert sign == 0 and logdet == -np.inf and sign.dtype == C64


def test_the_derivative_of_a_complex_sign_is_z_over_abs_z(backend):
    """JAX's complex sign has a zero derivative, which finite differences refute; slogdet's
    sign went wrong through it (a regression: its gradient was not JAX's slogdet's)."""
    def f(z):
        return rnp.real(rnp.sign(z)) + rnp.imag(rnp.sign(z)) ** 2

    z, h = 1.0 + 2.0j, 1e-6
    fd = (f(z + h) - f(z - h)) / (2 * h) - 1j * (f(z + 1j * h) - f(z - 1j * h)) / (2 * h)
    np.testing.assert_allclose(backend(rune.grad(f))(z), fd, rtol=1e-7)
    assert backend(rune.grad(f))(0j) == 0
    rune.check_grads(lambda z: rnp.sum(rnp.abs(rnp.sign(z) + 0.5)),
                     np.array([1 + 2j, -0.5 + 0.1j]))


@pytest.mark.slow  # JAX's side of the comparison is most of its time
@pytest.mark.parametrize("name", ["det", "eigvalsh", "svdvals", "qr", "eig"])
def test_hessian_vector_products_are_jaxs(name, jax, rng):
    a, t = general(rng, (4, 4)), general(rng, (4, 4))
    want = jax.jvp(jax.grad(lambda a: GRADS[name](jax.numpy, a)), (a,), (t,))[1]
    got = rune.jit(lambda a, t: rune.jvp(rune.grad(lambda a: GRADS[name](rnp, a)),
                                         (a,), (t,))[1])(a, t)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_eigh_in_a_vmapped_iterate_whose_lanes_stop_apart(backend, rng):
    """Newton on t for the least eigenvalue of H0 + t H1 (H1 positive definite) to reach
    each lane's target; d lambda / dt = v^H H1 v."""
    h0, h1 = hermitian(rng, (3, 3)), hermitian(rng, (3, 3))

    def least(t):
        w, v = rnp.linalg.eigh(h0 + t * h1)
        return w[0], rnp.real(rnp.conj(v[:, 0]) @ h1 @ v[:, 0])

    def solve(target):
        def step(t):
            lam, slope = least(t)
            return t - (lam - target) / slope
        return rune.iterate(step, 0.0, until=lambda t: rnp.abs(least(t)[0] - target) < 1e-12,
                            max_steps=50)

    targets = np.linspace(1.0, 40.0, 9)
    ts = backend(rune.vmap(solve))(targets)
    got = [np.linalg.eigvalsh(h0 + t * h1)[0] for t in ts]
    np.testing.assert_allclose(got, targets, rtol=1e-10)


# ------------------------------------------------------------- scipy.linalg

def _scipy_cases(rng, dtype):
    sl = pytest.importorskip("scipy.linalg")
    a, h, b = general(rng, (4, 4), dtype), hermitian(rng, (4, 4), dtype), general(
        rng, (4, 2), dtype)
    tri = np.triu(a) + 4 * np.eye(4, dtype=dtype)
    return sl, [
        ("cholesky", lambda m: m.cholesky(h), ()),
        ("cholesky_lower", lambda m: m.cholesky(h, lower=True), ()),
        ("expm", lambda m: m.expm(0.5 * a), ()),
        ("solve", lambda m: m.solve(a, b), ()),
        ("solve_pos", lambda m: m.solve(h, b, assume_a="pos"), ()),
        ("solve_her", lambda m: m.solve(np.tril(h), b, assume_a="her", lower=True), ()),
        ("solve_sym", lambda m: m.solve(np.triu(a), b, assume_a="sym"), ()),
        *[(f"solve_triangular_{t}", lambda m, t=t: m.solve_triangular(tri, b, trans=t), ())
          for t in (0, 1, 2)],
        *[(f"lu_solve_{t}", lambda m, t=t: m.lu_solve(m.lu_factor(a), b, trans=t), ())
          for t in (0, 1, 2)],
        *[(f"cho_solve_{low}", lambda m, low=low: m.cho_solve(m.cho_factor(h, lower=low), b),
           ()) for low in (False, True)],
        ("det", lambda m: m.det(a), ()),
        ("inv", lambda m: m.inv(a), ()),
    ]


@pytest.mark.parametrize("dtype", [C128, C64])
def test_scipy_linalg_of_complex_matrices_is_scipys(dtype, backend, rng):
    sl, cases = _scipy_cases(rng, dtype)
    for name, f, _ in cases:
        got, want = backend(lambda: f(rune.scipy.linalg))(), f(sl)
        assert got.dtype == dtype, name  # (SciPy's det of complex64 is complex128)
        np.testing.assert_allclose(got, want, err_msg=name, **_tol(dtype))


def test_expm_keeps_float32():
    """A regression: its Padé identity was float64, and so its result (and, under jit,
    its loop's counter a TypeError)."""
    x = np.array([[0.1, 1.0], [-0.5, 0.2]], np.float32)
    for f in (rune.scipy.linalg.expm, rune.jit(rune.scipy.linalg.expm)):
        assert f(x).dtype == np.float32
        np.testing.assert_allclose(f(x), pytest.importorskip("scipy.linalg").expm(x),
                                   rtol=1e-5)


@pytest.mark.slow  # JAX's side of the comparison is most of its time
def test_scipy_linalg_gradients_are_jaxs(jax, rng):
    a, b = general(rng, (4, 4)), general(rng, (4, 2))
    tri = np.triu(a) + 4 * np.eye(4)

    def f(sl, a, b):
        x = sl.expm(0.3 * a) @ b + sl.solve_triangular(tri + 0.1 * a, b, trans=2)
        x = x + sl.lu_solve(sl.lu_factor(a), b, trans=2)
        return x.real.sum() + (abs(x) ** 2).sum()

    for argnums in (0, 1):
        want = jax.grad(lambda a, b: f(jax.scipy.linalg, a, b), argnums)(a, b)
        got = rune.jit(rune.grad(lambda a, b: f(rune.scipy.linalg, a, b), argnums))(a, b)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    rune.check_grads(lambda a, b: f(rune.scipy.linalg, a, b), a, b, rtol=1e-4)


@pytest.mark.parametrize("dtype", [C128, C64])
def test_lstsq_of_complex_matrices_is_numpys(dtype, backend, rng, jax):
    a, b = general(rng, (5, 3), dtype), general(rng, (5, 2), dtype)
    got, want = backend(rnp.linalg.lstsq)(a, b), np.linalg.lstsq(a, b, rcond=None)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, **_tol(dtype))
    if dtype == C128:
        f = lambda m, a: m.sum(m.abs(m.linalg.lstsq(a, b)[0]) ** 2)  # noqa: E731
        np.testing.assert_allclose(backend(rune.grad(lambda a: f(rnp, a)))(a),
                                   jax.grad(lambda a: f(jax.numpy, a))(a), rtol=1e-8)
