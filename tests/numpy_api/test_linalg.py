"""rune_jit.numpy.linalg and rune_jit.scipy.linalg: values against NumPy (and SciPy) eagerly
and compiled, in float64 and float32, batched; derivatives against finite differences;
vmap against a loop; inside a scan (a Kalman filter); failures as NumPy's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
import rune_jit.scipy.linalg as rsl

sl = pytest.importorskip("scipy.linalg")

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)


def spd(rng, shape, dtype=F64):
    n = shape[-1]
    b = rng.standard_normal(shape)
    return np.asarray(b @ np.swapaxes(b, -1, -2) + n * np.eye(n), dtype)


def wellcond(rng, shape, dtype=F64):
    return np.asarray(rng.uniform(-1, 1, shape) + 3 * shape[-1] * np.eye(shape[-1]), dtype)


def general(rng, shape, dtype=F64):
    return np.asarray(rng.standard_normal(shape), dtype)


def distinct_spd(rng, shape, dtype=F64):
    """Symmetric with well-separated eigenvalues 1, 2, ..., n (eigenvector derivatives)."""
    n = shape[-1]
    q = np.linalg.qr(rng.standard_normal(shape))[0]
    return np.asarray(q @ (np.arange(1.0, n + 1) * np.swapaxes(q, -1, -2)), dtype)


def triangular(rng, shape, dtype=F64):
    return np.asarray(np.tril(rng.uniform(-1, 1, shape)) + 2 * np.eye(shape[-1]), dtype)


def _tuple(x):
    return tuple(x) if isinstance(x, tuple) else (x,)


def _squares(usv):
    """U and V^T up to the signs of their columns (rows): their squares."""
    u, s, vt = usv
    return u * u, s, vt * vt


# (id, rune_jit function, NumPy/SciPy function, argument makers with shapes)
CASES = [
    ("cholesky", rnp.linalg.cholesky, np.linalg.cholesky, [(spd, (3, 5, 5))]),
    ("cholesky_2d", rnp.linalg.cholesky, np.linalg.cholesky, [(spd, (4, 4))]),
    ("cholesky_upper", lambda a: rnp.linalg.cholesky(a, upper=True),
     lambda a: np.linalg.cholesky(a, upper=True), [(spd, (2, 3, 4, 4))]),
    ("cholesky_large", rnp.linalg.cholesky, np.linalg.cholesky, [(spd, (2, 40, 40))]),
    ("det", rnp.linalg.det, np.linalg.det, [(wellcond, (3, 4, 4))]),
    ("det_general", rnp.linalg.det, np.linalg.det, [(general, (5, 3, 3))]),
    ("slogdet", lambda a: tuple(rnp.linalg.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)),
     [(general, (2, 3, 5, 5))]),
    ("inv", rnp.linalg.inv, np.linalg.inv, [(wellcond, (3, 4, 4))]),
    ("eigvalsh", rnp.linalg.eigvalsh, np.linalg.eigvalsh, [(general, (3, 5, 5))]),
    ("eigvalsh_upper", lambda a: rnp.linalg.eigvalsh(a, "U"),
     lambda a: np.linalg.eigvalsh(a, "U"), [(general, (3, 5, 5))]),
    ("eigh", lambda a: rnp.linalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0],
     [(spd, (2, 6, 6))]),
    ("eigh_vectors", lambda a: rnp.linalg.eigh(a)[1] ** 2, lambda a: np.linalg.eigh(a)[1] ** 2,
     [(distinct_spd, (2, 5, 5))]),
    ("svd_values", lambda a: rnp.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), [(general, (3, 5, 4))]),
    ("svd_wide", lambda a: _squares(rnp.linalg.svd(a, full_matrices=False)),
     lambda a: _squares(np.linalg.svd(a, full_matrices=False)), [(general, (2, 3, 5))]),
    ("svd_tall", lambda a: _squares(rnp.linalg.svd(a, full_matrices=False)),
     lambda a: _squares(np.linalg.svd(a, full_matrices=False)), [(general, (2, 5, 3))]),
    ("qr", lambda a: tuple(rnp.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a)),
     [(general, (2, 5, 3))]),
    ("qr_wide", lambda a: tuple(rnp.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a)),
     [(general, (2, 3, 5))]),
    ("qr_complete", lambda a: tuple(rnp.linalg.qr(a, "complete")),
     lambda a: tuple(np.linalg.qr(a, "complete")), [(general, (5, 3))]),
    ("qr_r", lambda a: rnp.linalg.qr(a, "r"), lambda a: np.linalg.qr(a, "r"),
     [(general, (4, 4))]),
    ("pinv", rnp.linalg.pinv, np.linalg.pinv, [(general, (2, 5, 3))]),
    ("matrix_rank", rnp.linalg.matrix_rank, np.linalg.matrix_rank, [(general, (3, 4, 4))]),
    ("matrix_power_5", lambda a: rnp.linalg.matrix_power(a, 5),
     lambda a: np.linalg.matrix_power(a, 5), [(wellcond, (2, 3, 3))]),
    ("matrix_power_neg", lambda a: rnp.linalg.matrix_power(a, -2),
     lambda a: np.linalg.matrix_power(a, -2), [(wellcond, (2, 3, 3))]),
    ("lstsq", lambda a, b: rnp.linalg.lstsq(a, b), lambda a, b: np.linalg.lstsq(a, b),
     [(general, (6, 3)), (general, (6, 2))]),
    ("lstsq_vector", lambda a, b: rnp.linalg.lstsq(a, b), lambda a, b: np.linalg.lstsq(a, b),
     [(general, (6, 3)), (general, (6,))]),
    ("lstsq_wide", lambda a, b: rnp.linalg.lstsq(a, b), lambda a, b: np.linalg.lstsq(a, b),
     [(general, (3, 5)), (general, (3,))]),
    ("solve", rnp.linalg.solve, np.linalg.solve, [(wellcond, (3, 4, 4)), (general, (3, 4, 2))]),
    # from 32 rows on, compiled solves call LAPACK (getrf, getrs)
    ("solve_large", rnp.linalg.solve, np.linalg.solve, [(wellcond, (2, 40, 40)),
                                                        (general, (2, 40, 3))]),
    ("solve_large_vector", rnp.linalg.solve, np.linalg.solve, [(wellcond, (33, 33)),
                                                               (general, (33,))]),
    ("inv_large", rnp.linalg.inv, np.linalg.inv, [(wellcond, (32, 32))]),
    ("solve_triangular", lambda a, b: rsl.solve_triangular(a, b, lower=True),
     lambda a, b: sl.solve_triangular(a, b, lower=True), [(triangular, (4, 4)),
                                                          (general, (4, 3))]),
    ("solve_triangular_upper_trans", lambda a, b: rsl.solve_triangular(a, b, trans="T"),
     lambda a, b: sl.solve_triangular(a, b, trans="T"),
     [(lambda r, s, d=F64: np.swapaxes(triangular(r, s, d), -1, -2), (4, 4)), (general, (4,))]),
    ("solve_triangular_unit", lambda a, b: rsl.solve_triangular(a, b, 1, True, True),
     lambda a, b: sl.solve_triangular(a, b, 1, True, True), [(general, (4, 4)),
                                                             (general, (4, 2))]),
    ("cho_solve", lambda a, b: rsl.cho_solve(rsl.cho_factor(a), b),
     lambda a, b: sl.cho_solve(sl.cho_factor(a), b), [(spd, (4, 4)), (general, (4, 2))]),
    ("cho_solve_lower", lambda a, b: rsl.cho_solve(rsl.cho_factor(a, lower=True), b),
     lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b), [(spd, (4, 4)),
                                                                  (general, (4,))]),
    ("cho_factor", lambda a: rsl.cho_factor(a, lower=True)[0],
     lambda a: sl.cho_factor(a, lower=True)[0], [(spd, (5, 5))]),
    ("scipy_cholesky", rsl.cholesky, sl.cholesky, [(spd, (4, 4))]),
]
NORMS = [(None, None), (None, 1), (2, 1), (1, 1), (-1, 1), (np.inf, 1), (-np.inf, 1), (0, 1),
         (3, 1), (0.5, 1), ("fro", (1, 2)), ("nuc", (1, 2)), (1, (2, 1)), (-1, (1, 2)),
         (2, (1, 2)), (-2, (2, 1)), (np.inf, (1, 2)), (-np.inf, (2, 1)), (None, (0, 2))]
CASES += [(f"norm_{o}_{ax}".replace(" ", ""), lambda x, o=o, ax=ax: rnp.linalg.norm(x, o, ax),
           lambda x, o=o, ax=ax: np.linalg.norm(x, o, ax), [(general, (3, 4, 5))])
          for o, ax in NORMS]
CASES += [("norm_keepdims", lambda x: rnp.linalg.norm(x, "nuc", (2, 0), keepdims=True),
           lambda x: np.linalg.norm(x, "nuc", (2, 0), keepdims=True), [(general, (3, 4, 5))]),
          ("norm_matrix_default", rnp.linalg.norm, np.linalg.norm, [(general, (4, 5))])]
TOL = {F64: dict(rtol=1e-9, atol=1e-10), F32: dict(rtol=2e-4, atol=2e-4)}


def _args(rng, makers, dtype):
    return [make(rng, shape, dtype) for make, shape in makers]


def assert_like(got, want, dtype):
    got, want = _tuple(got), _tuple(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, **TOL[np.dtype(dtype)])
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [F64, F32], ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_values_match_numpy(case, dtype, backend, rng):
    _, fn, ref, makers = case
    args = _args(rng, makers, dtype)
    assert_like(backend(fn)(*args), ref(*args), dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.bool_], ids=str)
def test_integers_compute_in_float64(dtype, backend):
    a = (np.eye(2) if dtype is np.bool_ else np.array([[3, 1], [1, 2]])).astype(dtype)
    for fn, ref in ((rnp.linalg.det, np.linalg.det), (rnp.linalg.inv, np.linalg.inv),
                    (rnp.linalg.eigvalsh, np.linalg.eigvalsh),
                    (rnp.linalg.norm, np.linalg.norm)):
        assert_like(backend(fn)(a), ref(a), F64)


def test_float16_is_rejected_as_in_numpy():
    a = np.eye(2, dtype=np.float16)
    for fn in (rnp.linalg.cholesky, rnp.linalg.inv, rnp.linalg.det, rnp.linalg.eigh,
               rnp.linalg.svd, rnp.linalg.qr):
        with pytest.raises(TypeError):
            fn(a)
    assert rnp.linalg.norm(a).dtype == np.float16  # as NumPy: norm takes float16


def test_lstsq_residuals_follow_numpy_eagerly_and_rank_under_jit(rng):
    a = rng.standard_normal((5, 3))
    a[:, 2] = a[:, 0]  # rank 2: NumPy gives no residuals
    b = rng.standard_normal(5)
    x, res, rank, s = rnp.linalg.lstsq(a, b)
    want = np.linalg.lstsq(a, b)
    assert res.shape == (0,) and int(rank) == 2 == want[2]
    np.testing.assert_allclose(x, want[0], rtol=1e-9, atol=1e-12)
    jx, jres, jrank, _ = rune.jit(rnp.linalg.lstsq)(a, b)  # under a trace: computed anyway
    assert int(jrank) == 2 and jres.shape == (1,)
    np.testing.assert_allclose(jres, [np.sum((b - a @ want[0]) ** 2)], rtol=1e-9)


# ------------------------------------------------------------- failures


def test_cholesky_not_positive_definite_raises(backend):
    a = np.array([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        backend(rnp.linalg.cholesky)(a)
    big = np.eye(20)
    big[7, 7] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        backend(rnp.linalg.cholesky)(big)


def test_singular_inverse_raises(backend):
    with pytest.raises(np.linalg.LinAlgError):
        backend(rnp.linalg.inv)(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        backend(rnp.linalg.inv)(np.ones((2, 40, 40)))


def test_singular_triangular_solve_raises(backend):
    a = np.array([[1.0, 0.0], [3.0, 0.0]])
    with pytest.raises(np.linalg.LinAlgError):
        backend(lambda a, b: rsl.solve_triangular(a, b, lower=True))(a, np.ones(2))


def test_singular_det_is_zero(backend):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert backend(rnp.linalg.det)(a) == 0.0
    sign, logdet = backend(lambda a: tuple(rnp.linalg.slogdet(a)))(a)
    assert sign == 0.0 and logdet == -np.inf


def test_eigh_repeated_eigenvalues(rng):
    """Documented: eigenvalue derivatives are right, eigenvector derivatives not finite."""
    a = np.diag([1.0, 1.0, 3.0])
    g = rune.jit(rune.grad(lambda a: rnp.sum(rnp.linalg.eigvalsh(a) * np.array([1, 2, 3]))))(a)
    assert np.all(np.isfinite(g))
    t = rune.jvp(lambda a: rnp.linalg.eigh(a)[1], (a,), (np.ones((3, 3)),))[1]
    assert not np.all(np.isfinite(t))


# ------------------------------------------------------------- derivatives

GRADS = [
    ("cholesky", rnp.linalg.cholesky, [(spd, (2, 4, 4))]),
    ("cholesky_upper", lambda a: rnp.linalg.cholesky(a, upper=True), [(spd, (4, 4))]),
    ("cholesky_large", rnp.linalg.cholesky, [(spd, (20, 20))]),
    ("det", rnp.linalg.det, [(wellcond, (2, 3, 3))]),
    ("slogdet", lambda a: rnp.linalg.slogdet(a)[1], [(general, (2, 4, 4))]),
    ("inv", rnp.linalg.inv, [(wellcond, (2, 3, 3))]),
    ("eigvalsh", rnp.linalg.eigvalsh, [(distinct_spd, (2, 4, 4))]),
    ("eigh", lambda a: (rnp.linalg.eigh(a)[0], rnp.linalg.eigh(a, "U")[1] ** 2),
     [(distinct_spd, (2, 4, 4))]),
    ("svd_values", lambda a: rnp.linalg.svd(a, compute_uv=False), [(general, (2, 4, 3))]),
    ("svd_tall", lambda a: _squares(rnp.linalg.svd(a, full_matrices=False)),
     [(general, (2, 5, 3))]),
    ("svd_wide", lambda a: _squares(rnp.linalg.svd(a, full_matrices=False)),
     [(general, (3, 5))]),
    ("svd_square_full", lambda a: _squares(rnp.linalg.svd(a)), [(general, (4, 4))]),
    ("qr", lambda a: tuple(rnp.linalg.qr(a)), [(general, (2, 5, 3))]),
    ("qr_square", lambda a: tuple(rnp.linalg.qr(a)), [(general, (4, 4))]),
    ("pinv", rnp.linalg.pinv, [(general, (2, 4, 3))]),
    ("lstsq", lambda a, b: rnp.linalg.lstsq(a, b)[0], [(general, (6, 3)), (general, (6, 2))]),
    ("norm_2", lambda a: rnp.linalg.norm(a, 2, (1, 2)), [(general, (2, 4, 3))]),
    ("norm_nuc", lambda a: rnp.linalg.norm(a, "nuc"), [(general, (4, 3))]),
    ("norm_-2", lambda a: rnp.linalg.norm(a, -2), [(general, (3, 3))]),
    ("norm_fro", lambda a: rnp.linalg.norm(a, "fro"), [(general, (4, 3))]),
    ("norm_p", lambda a: rnp.linalg.norm(a, 3, axis=0), [(general, (4, 3))]),
    ("matrix_power", lambda a: rnp.linalg.matrix_power(a, 3), [(wellcond, (3, 3))]),
    ("matrix_power_neg", lambda a: rnp.linalg.matrix_power(a, -2), [(wellcond, (3, 3))]),
    ("solve", rnp.linalg.solve, [(wellcond, (2, 3, 3)), (general, (2, 3, 2))]),
    ("solve_large", rnp.linalg.solve, [(wellcond, (34, 34)), (general, (34, 2))]),
    ("solve_triangular", lambda a, b: rsl.solve_triangular(a, b, lower=True),
     [(wellcond, (2, 4, 4)), (general, (2, 4, 2))]),
    ("solve_triangular_trans_unit",
     lambda a, b: rsl.solve_triangular(a, b, trans=1, unit_diagonal=True),
     [(wellcond, (4, 4)), (general, (4,))]),
    ("cho_solve", lambda a, b: rsl.cho_solve(rsl.cho_factor(a), b), [(spd, (4, 4)),
                                                                      (general, (4, 2))]),
    ("cho_solve_lower", lambda a, b: rsl.cho_solve(rsl.cho_factor(a, lower=True), b),
     [(spd, (4, 4)), (general, (4,))]),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", GRADS, ids=lambda c: c[0])
def test_check_grads(case, compiled, rng):
    _, fn, makers = case
    args = [make(rng, shape) for make, shape in makers]
    rune.check_grads(rune.jit(fn) if compiled else fn, *args, modes=("fwd", "rev"))


def test_grad_of_logdet_is_the_inverse_transpose(rng):
    a = wellcond(rng, (4, 4))
    g = rune.jit(rune.grad(lambda a: rnp.linalg.slogdet(a)[1]))(a)
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-10)
    g = rune.jit(rune.grad(lambda a: rnp.linalg.det(a)))(a)
    np.testing.assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)


def test_second_derivatives(rng):
    a = spd(rng, (3, 3))
    rune.check_grads(rune.grad(lambda a: rnp.sum(rnp.linalg.cholesky(a) ** 2)), a)
    rune.check_grads(rune.grad(lambda a: rnp.linalg.slogdet(a)[1]), a)


# ------------------------------------------------------------- vmap


VMAPPED = [
    ("cholesky", rnp.linalg.cholesky, [spd]),
    ("triangular", lambda a, b: rsl.solve_triangular(a, b, lower=True), [triangular, general]),
    ("slogdet", lambda a: tuple(rnp.linalg.slogdet(a)), [general]),
    ("inv", rnp.linalg.inv, [wellcond]),
    ("eigh", lambda a: rnp.linalg.eigh(a)[0], [spd]),
    ("svd", lambda a: rnp.linalg.svd(a, compute_uv=False), [general]),
    ("qr", lambda a: rnp.linalg.qr(a, "r") ** 2, [general]),
    ("norm_2", lambda a: rnp.linalg.norm(a, 2), [general]),
]


@pytest.mark.parametrize("in_axis", [0, 1])
@pytest.mark.parametrize("case", VMAPPED, ids=lambda c: c[0])
def test_vmap_matches_a_loop(case, in_axis, backend, rng):
    _, fn, makers = case
    n, lanes = 4, 3
    per = [[make(rng, (n, n)) for make in makers] for _ in range(lanes)]
    args = [np.stack([p[k] for p in per], axis=in_axis) for k in range(len(makers))]
    got = _tuple(backend(rune.vmap(fn, in_axes=in_axis))(*args))
    rows = [_tuple(fn(*p)) for p in per]
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([r[k] for r in rows]), rtol=1e-9, atol=1e-12)


def test_vmap_with_an_unbatched_matrix(backend, rng):
    a = spd(rng, (4, 4))
    bs = rng.standard_normal((5, 4, 2))
    fn = lambda a, b: rsl.cho_solve(rsl.cho_factor(a), b)  # noqa: E731
    got = backend(rune.vmap(fn, in_axes=(None, 0)))(a, bs)
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(a, b) for b in bs]), rtol=1e-10)


# ------------------------------------------------------------- in a scan: a Kalman filter


F = np.array([[1.0, 0.1], [0.0, 1.0]])
H = np.array([[1.0, 0.0]])
Q = 0.01 * np.eye(2)


def kalman(r, x0, p0, ys):
    """The filter's log-likelihood and final mean, with cholesky, solves and slogdet."""
    def step(carry, y):
        x, p, ll = carry
        x, p = F @ x, F @ p @ F.T + Q
        s = H @ p @ H.T + r * np.eye(1)
        c = rsl.cho_factor(s, lower=True)
        innov = y - H @ x
        gain = rsl.cho_solve(c, H @ p).T
        x = x + gain @ innov
        p = p - gain @ s @ gain.T
        ll = ll - 0.5 * (innov @ rsl.cho_solve(c, innov) + rnp.linalg.slogdet(s)[1])
        return (x, p, ll), x

    (x, p, ll), xs = rune.scan(step, (x0, p0, np.float64(0.0)), ys)
    return ll, xs


def kalman_numpy(r, x0, p0, ys):
    x, p, ll, xs = x0, p0, 0.0, []
    for y in ys:
        x, p = F @ x, F @ p @ F.T + Q
        s = H @ p @ H.T + r * np.eye(1)
        innov = y - H @ x
        gain = np.linalg.solve(s, H @ p).T
        x = x + gain @ innov
        p = p - gain @ s @ gain.T
        ll = ll - 0.5 * (innov @ np.linalg.solve(s, innov) + np.linalg.slogdet(s)[1])
        xs.append(x)
    return ll, np.stack(xs)


def test_kalman_filter_in_a_scan(backend, rng):
    ys = np.cumsum(rng.standard_normal((30, 1)) * 0.3, axis=0)
    args = (np.float64(0.5), np.zeros(2), np.eye(2), ys)
    ll, xs = backend(kalman)(*args)
    want_ll, want_xs = kalman_numpy(*args)
    np.testing.assert_allclose(ll, want_ll, rtol=1e-10)
    np.testing.assert_allclose(xs, want_xs, rtol=1e-10, atol=1e-12)


def test_kalman_filter_gradient(rng):
    ys = np.cumsum(rng.standard_normal((12, 1)) * 0.3, axis=0)
    loglik = lambda r, p0: kalman(r, np.zeros(2), p0, ys)[0]  # noqa: E731
    rune.check_grads(loglik, np.float64(0.5), np.eye(2))
    g = rune.jit(rune.grad(loglik))(np.float64(0.5), np.eye(2))
    eps = 1e-6
    fd = (kalman_numpy(0.5 + eps, np.zeros(2), np.eye(2), ys)[0]
          - kalman_numpy(0.5 - eps, np.zeros(2), np.eye(2), ys)[0]) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


# ------------------------------------------------------------- compiled code from disk


def test_a_new_process_loads_lapack_for_a_saved_program(tmp_path):
    """A program read back from the disk cache links LAPACK's symbols without lowering."""
    code = textwrap.dedent("""
        import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
        a = np.array([[4.0, 2.0], [2.0, 5.0]])
        f = rune.jit(lambda a: rnp.linalg.eigvalsh(a) + rnp.linalg.cholesky(a)[1, 0])
        print(f(a).round(6).tolist())
    """)
    env = {**os.environ, "RUNE_JIT_CACHE_DIR": str(tmp_path)}
    outs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert outs[0].stdout == outs[1].stdout
    assert outs[0].stdout.strip() == str((np.linalg.eigvalsh([[4.0, 2], [2, 5]]) + 1).round(6)
                                         .tolist())


def test_numpy_functions_of_traced_values_dispatch(rng):
    a = spd(rng, (3, 3))
    f = rune.jit(lambda a: (np.linalg.det(a), np.linalg.norm(a, "nuc"), np.linalg.cholesky(a)))
    for got, want in zip(f(a), (np.linalg.det(a), np.linalg.norm(a, "nuc"),
                                np.linalg.cholesky(a))):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_lapack_stays_out_of_the_process_global_scope():
    """scipy-openblas64 keeps its symbols to itself: loaded globally, its unprefixed
    64-bit LAPACK internals took the place of other libraries' (JAX's least squares
    failed after rune_jit's)."""
    import ctypes

    a = np.random.default_rng(0).normal(size=(9, 8))
    b = np.ones(9)
    want = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(rune.jit(lambda a, b: rnp.linalg.lstsq(a, b)[0])(a, b), want,
                               rtol=1e-10)
    process = ctypes.CDLL(None)
    for name in ("scipy_dgelsd_64_", "claqz0_", "clarft_lvl2_"):
        assert not hasattr(process, name), name
    np.testing.assert_allclose(np.linalg.lstsq(a, b, rcond=None)[0], want)


# ------------------------------------------------------------- complex systems

def _complex_system(rng, batch=(), k=2):
    a = rng.normal(size=batch + (3, 3)) + 1j * rng.normal(size=batch + (3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=batch + (3, k)) + 1j * rng.normal(size=batch + (3, k))
    return a, b


def test_complex_solve_and_inv_are_numpys(backend, rng):
    a, b = _complex_system(rng, (2,))
    np.testing.assert_allclose(backend(rnp.linalg.solve)(a, b), np.linalg.solve(a, b),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(backend(rnp.linalg.solve)(a[0], b[0, :, 0]),
                               np.linalg.solve(a[0], b[0, :, 0]), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(backend(rnp.linalg.inv)(a), np.linalg.inv(a), rtol=1e-12,
                               atol=1e-13)
    for x, y in ((a.astype(np.complex64), b.real.astype(np.float32)), (a, b.real),
                 (a.real, b)):
        got, want = backend(rnp.linalg.solve)(x, y), np.linalg.solve(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(rnp.linalg.LinAlgError):
        backend(rnp.linalg.inv)(np.zeros((2, 2), complex))


def test_complex_solve_derivatives_are_jaxs(rng):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a, b = _complex_system(rng)

    def f(m, a, b):
        x = m.linalg.solve(a, b) + m.linalg.inv(a) @ b * 0.5j
        return m.sum(m.abs(x) ** 2 + m.real(x) * m.imag(x))

    for argnums in (0, 1):
        want = jax.grad(lambda a, b: f(jax.numpy, a, b), argnums)(a, b)
        for g in (rune.grad(lambda a, b: f(rnp, a, b), argnums),
                  rune.jit(rune.grad(lambda a, b: f(rnp, a, b), argnums))):
            np.testing.assert_allclose(g(a, b), want, rtol=1e-10, atol=1e-12)
    lanes = rune.vmap(rune.grad(lambda a, b: f(rnp, a, b)))(np.stack([a, a.T]), np.stack([b, b]))
    np.testing.assert_allclose(lanes[1], jax.grad(lambda a: f(jax.numpy, a, b))(a.T),
                               rtol=1e-10, atol=1e-12)
    rune.check_grads(lambda a, b: f(rnp, a, b), a, b)
