"""rune_jit.scipy's additions for jax.scipy's names: special functions against SciPy
(and mpmath where SciPy is the less accurate), linalg against scipy.linalg, the Krylov
solvers against NumPy's solve and JAX's; eagerly and compiled, derivatives by
check_grads, under vmap and in a scan step."""

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as sp

import rune_jit as rune
import rune_jit.scipy as rsp
from rune_jit.scipy import linalg as rl
from rune_jit.scipy import special as rs
from rune_jit.scipy.sparse import linalg as rsl


def rel_err(got, want):
    got, want = np.asarray(got), np.asarray(want)
    finite = np.isfinite(want) & (want != 0)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    return np.max(np.abs(got[finite] / want[finite] - 1)) if finite.any() else 0.0


# ------------------------------------------------------------- special


@pytest.fixture(scope="module")
def beta_args():
    rng = np.random.default_rng(0)
    a, b = np.exp(rng.uniform(np.log(0.05), np.log(500), (2, 3000)))
    return a, b, rng.uniform(0, 1, 3000)


@pytest.mark.slow
def test_betainc_against_scipy(beta_args, backend):
    a, b, x = beta_args
    got, want = backend(rs.betainc)(a, b, x), sp.betainc(a, b, x)
    keep = want > 1e-290  # relative error of the subnormal-range tail is not meaningful
    assert rel_err(got[keep], want[keep]) < 1e-12
    assert np.max(np.abs(got - want)) < 1e-13


def test_betainc_edges():
    a = np.array([0.0, 1.0, 1.0, 2.0, -1.0, 2.0, np.nan, 3.0])
    b = np.array([1.0, 0.0, 1.0, 2.0, 1.0, 2.0, 1.0, 4.0])
    x = np.array([0.5, 0.5, 0.0, 1.0, 0.5, 1.5, 0.5, 0.25])
    np.testing.assert_allclose(rs.betainc(a, b, x), sp.betainc(a, b, x), rtol=1e-14)


@pytest.mark.slow
def test_betainc_derivative_in_x_and_not_in_a_or_b():
    rune.check_grads(lambda x: rs.betainc(2.5, 0.7, x), np.array([0.1, 0.5, 0.9]))
    g = rune.vmap(rune.grad(lambda x: rs.betainc(2.0, 3.0, x)))(np.array([0.3, 0.6]))
    x = np.array([0.3, 0.6])
    np.testing.assert_allclose(g, x * (1 - x) ** 2 / sp.beta(2.0, 3.0), rtol=1e-12)
    with pytest.raises(TypeError, match="custom_jvp"):
        rune.grad(lambda a: rs.betainc(a, 3.0, 0.3))(2.0)


@pytest.mark.slow
def test_betainc_vmap_lanes_stop_apart_and_in_a_scan():
    a = np.array([0.5, 400.0, 3.0])
    b = np.array([0.5, 300.0, 2.0])
    x = np.array([0.2, 0.57, 0.9])
    np.testing.assert_allclose(rune.vmap(rs.betainc)(a, b, x), sp.betainc(a, b, x),
                               rtol=1e-12)
    total = rune.jit(lambda xs: rune.scan(lambda c, v: (c + rs.betainc(2.0, 5.0, v), None),
                                          0.0, xs)[0])(x)
    assert abs(float(total) - sp.betainc(2.0, 5.0, x).sum()) < 1e-13


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_against_scipy(name, backend):
    rng = np.random.default_rng(2)
    a = np.exp(rng.uniform(np.log(0.05), np.log(500), 2000))
    x = a * np.exp(rng.uniform(-3, 3, 2000))
    got, want = backend(getattr(rs, name))(a, x), getattr(sp, name)(a, x)
    keep = want > 1e-290
    assert rel_err(got[keep], want[keep]) < 1e-12
    edges_a = np.array([0.0, 0.0, 1.0, 1.0, 2.0, -1.0, 2.0, np.nan])
    edges_x = np.array([1.0, 0.0, 0.0, np.inf, 3.0, 1.0, -1.0, 1.0])
    np.testing.assert_allclose(getattr(rs, name)(edges_a, edges_x),
                               getattr(sp, name)(edges_a, edges_x), rtol=1e-14)


@pytest.mark.slow  # seconds of compiling (the quick run's 5 minutes: issue 32)
def test_incomplete_gamma_derivatives():
    x = np.array([0.5, 3.0, 9.0])
    rune.check_grads(lambda v: rs.gammainc(2.5, v), x)
    g = rune.vmap(rune.grad(lambda v: rs.gammaincc(2.5, v)))(x)
    np.testing.assert_allclose(g, -x ** 1.5 * np.exp(-x) / sp.gamma(2.5), rtol=1e-12)


def test_betaln_against_mpmath(beta_args):
    mpmath = pytest.importorskip("mpmath")
    a, b, _ = beta_args
    a, b = a[:300], b[:300]
    with mpmath.workdps(40):
        want = np.array([float(mpmath.log(mpmath.beta(u, v))) for u, v in zip(a, b)])
    assert np.max(np.abs(rs.betaln(a, b) - want) / np.maximum(1, np.abs(want))) < 3e-14


@pytest.mark.parametrize("name,args", [
    ("i0e", (np.concatenate([np.linspace(-60, 60, 801), [0.0, 8.0, 1e-300, 700.0]]),)),
    ("i1e", (np.concatenate([np.linspace(-60, 60, 801), [0.0, 8.0, 1e-300, 700.0]]),)),
    ("i0", (np.linspace(-40, 40, 301),)),
    ("i1", (np.linspace(-40, 40, 301),)),
    ("gamma", (np.linspace(-29.7, 30.3, 601),)),
    ("beta", (np.linspace(0.1, 20, 50), np.linspace(30, 0.2, 50))),
    ("poch", (np.linspace(0.1, 20, 50), np.linspace(-3.3, 4, 50))),
    ("gammasgn", (np.array([-2.5, -1.5, -0.5, 0.0, -0.0, 0.5, -3.0]),)),
    ("loggamma", (np.array([-2.5, -1.0, 0.0, 1e-300, 0.5, 3.0, 170.0]),)),
    ("comb", (np.array([5.0, 5.0, 4.0, 5.5, 30.0, -1.0, 3.0]),
              np.array([2.0, 7.0, 0.0, 2.0, 11.0, 1.0, -1.0]))),
    ("rel_entr", (np.array([0.5, 0.0, 1.0, -1.0, 0.3]), np.array([0.25, 1.0, 0.0, 1.0, 2.0]))),
    ("kl_div", (np.array([0.5, 0.0, 1.0, -1.0, 0.3]), np.array([0.25, 1.0, 0.0, 1.0, 2.0]))),
    ("boxcox", (np.array([0.5, 2.0, 7.0]), np.array([0.0, 0.5, -1.5]))),
    ("boxcox1p", (np.array([1e-12, 2.0, 7.0]), np.array([0.0, 0.5, -1.5]))),
])
def test_special_against_scipy(name, args, backend):
    assert rel_err(backend(getattr(rs, name))(*args), getattr(sp, name)(*args)) < 1e-13


def test_multigammaln_factorial_softmax(backend):
    a = np.array([2.5, 4.0, 30.0])
    np.testing.assert_allclose(backend(lambda v: rs.multigammaln(v, 3))(a),
                               sp.multigammaln(a, 3), rtol=1e-14)
    n = np.array([0.0, 5.0, 12.0, -1.0])
    np.testing.assert_allclose(backend(rs.factorial)(n), sp.factorial(n), rtol=1e-13)
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    np.testing.assert_allclose(backend(rs.softmax)(x), sp.softmax(x), rtol=1e-14)
    np.testing.assert_allclose(backend(lambda v: rs.log_softmax(v, axis=1))(x),
                               sp.log_softmax(x, axis=1), rtol=1e-14)
    np.testing.assert_allclose(backend(lambda n, k: rs.comb(n, k, repetition=True))(
        np.array([4.0, 10.0]), np.array([2.0, 3.0])),
        sp.comb(np.array([4.0, 10.0]), np.array([2.0, 3.0]), repetition=True), rtol=1e-13)
    with pytest.raises(ValueError, match="d must be a positive int"):
        rs.multigammaln(a, 0)


@pytest.mark.parametrize("name", ["i0e", "i1e", "i0", "i1", "gamma"])
def test_special_derivatives(name):
    x = np.array([-9.5, -1.2, 0.3, 2.0, 11.0]) if name != "gamma" else np.array(
        [-1.5, 0.4, 2.5, 6.0])
    rune.check_grads(getattr(rs, name), x)


def test_bessel_derivatives_at_zero():
    assert abs(float(rune.grad(rs.i1e)(0.0)) - 0.5) < 1e-15
    assert abs(float(rune.grad(rs.i0e)(1e-3)) - (sp.i1e(1e-3) - sp.i0e(1e-3))) < 1e-12
    assert float(rune.grad(rs.i1)(0.0)) == 0.5


def test_jax_agrees_where_it_defines_the_name():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsp = pytest.importorskip("jax.scipy.special")
    x = np.linspace(0.1, 5, 11)
    for name in ["i0e", "i1e", "gamma", "gammasgn"]:
        np.testing.assert_allclose(getattr(rs, name)(x), getattr(jsp, name)(x), rtol=1e-12)
    np.testing.assert_allclose(rs.betainc(x, x[::-1], x / 6), jsp.betainc(x, x[::-1], x / 6),
                               rtol=1e-10)


# ------------------------------------------------------------- linalg


@pytest.fixture(scope="module")
def mats():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 5))
    return a, a @ a.T + 5 * np.eye(5), rng.normal(size=(5, 2))


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
def test_solve(assume_a, mats, backend):
    a, spd, b = mats
    matrix = a if assume_a == "gen" else spd
    given = np.triu(matrix) if assume_a in ("sym", "her") else matrix  # one triangle read
    got = backend(lambda m, v: rl.solve(m, v, assume_a=assume_a))(given, b)
    np.testing.assert_allclose(got, sl.solve(matrix, b), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(rl.solve(matrix, b[:, 0], assume_a=assume_a),
                               sl.solve(matrix, b[:, 0]), rtol=1e-11, atol=1e-13)


def test_solve_derivatives_and_bad_assume_a(mats):
    a, spd, b = mats
    rune.check_grads(lambda m, v: rl.solve(m, v), a, b)
    rune.check_grads(lambda m: rl.solve(m, b, assume_a="pos"), spd)
    with pytest.raises(ValueError, match="assume_a must be one of"):
        rl.solve(a, b, assume_a="diag")


def test_lu_family(mats, backend):
    a, _, b = mats
    lu, piv = backend(rl.lu_factor)(a)
    slu, spiv = sl.lu_factor(a)
    np.testing.assert_allclose(lu, slu, rtol=1e-12, atol=1e-14)
    assert piv.dtype == np.int32 and (piv == spiv).all()
    for trans in (0, 1):
        np.testing.assert_allclose(backend(lambda f, p, v: rl.lu_solve((f, p), v, trans=trans))(
            lu, piv, b), sl.lu_solve((slu, spiv), b, trans=trans), rtol=1e-11, atol=1e-13)
    for got, want in zip(backend(rl.lu)(a), sl.lu(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    pl, u = rl.lu(a, permute_l=True)
    np.testing.assert_allclose(pl @ u, a, atol=1e-13)
    stack = np.stack([a, a.T])
    lus, pivs = rl.lu_factor(stack)
    np.testing.assert_allclose(rl.lu_solve((lus, pivs), b[:, 0]),
                               np.linalg.solve(stack, b[:, 0]), rtol=1e-11)


def test_qr_eigh_svd_det_inv(mats):
    a, spd, _ = mats
    tall = np.vstack([a, a[:2]])
    q, r = rl.qr(tall)
    assert q.shape == (7, 7) and r.shape == (7, 5)
    np.testing.assert_allclose(q @ r, tall, atol=1e-13)
    q, r = rl.qr(tall, mode="economic")
    assert q.shape == (7, 5) and r.shape == (5, 5)
    (r_only,) = rl.qr(tall, mode="r")
    np.testing.assert_allclose(np.abs(r_only), np.abs(sl.qr(tall, mode="r")[0]), atol=1e-12)
    with pytest.raises(NotImplementedError, match="pivoting"):
        rl.qr(a, pivoting=True)
    np.testing.assert_allclose(rl.eigh(np.tril(spd), eigvals_only=True), sl.eigvalsh(spd),
                               rtol=1e-12)
    np.testing.assert_allclose(rl.svd(a, compute_uv=False), sl.svdvals(a), rtol=1e-12)
    assert abs(float(rl.det(a)) / sl.det(a) - 1) < 1e-12
    np.testing.assert_allclose(rl.inv(a), sl.inv(a), rtol=1e-10, atol=1e-12)


def test_expm(mats, backend):
    a, _, _ = mats
    for m in (a * 0.01, a, a * 4.0):
        got = backend(rl.expm)(m)
        want = sl.expm(m)
        assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 1e-12
    stack = np.stack([a * 0.01, a * 4.0])  # each matrix squared as often as it needs
    np.testing.assert_allclose(rl.expm(stack)[0], sl.expm(stack[0]), rtol=1e-12, atol=1e-15)
    rune.check_grads(lambda t: rl.expm(t * a), np.float64(0.3))


def test_structured_matrices(backend):
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(backend(rl.toeplitz)(c, r), sl.toeplitz(c, r))
    np.testing.assert_array_equal(backend(rl.toeplitz)(c), sl.toeplitz(c))
    np.testing.assert_array_equal(rl.toeplitz(np.stack([c, -c]))[1], sl.toeplitz(-c))
    np.testing.assert_array_equal(backend(rl.circulant)(c), sl.circulant(c))
    np.testing.assert_array_equal(backend(rl.hankel)(c, r), sl.hankel(c, r))
    np.testing.assert_array_equal(rl.hankel(c), sl.hankel(c))
    blocks = (np.ones((2, 2)), np.array([[5.0]]), np.array([1.0, 2.0]), 7.0)
    np.testing.assert_array_equal(backend(rl.block_diag)(*blocks), sl.block_diag(*blocks))
    g = rune.grad(lambda v: rl.toeplitz(v).sum())(c)
    np.testing.assert_array_equal(g, [3.0, 4.0, 2.0])  # c[0] on the diagonal, the rest twice
    with pytest.raises(ValueError, match="at most 2-D"):
        rl.block_diag(np.ones((2, 2, 2)))


# ------------------------------------------------------------- sparse.linalg


@pytest.mark.parametrize("solver", ["cg", "bicgstab"])
def test_krylov_solvers(solver, mats, backend):
    _, spd, b = mats
    fn = getattr(rsl, solver)
    x, info = backend(lambda m, v: fn(m, v, tol=1e-12))(spd, b[:, 0])
    assert info is None
    np.testing.assert_allclose(x, np.linalg.solve(spd, b[:, 0]), rtol=1e-10)
    x, _ = fn(lambda v: spd @ v, b[:, 0], x0=np.ones(5), M=np.diag(1 / np.diag(spd)),
              tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(spd, b[:, 0]), rtol=1e-10)


@pytest.mark.slow
def test_cg_as_jax_does(mats):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsl = pytest.importorskip("jax.scipy.sparse.linalg")
    _, spd, b = mats
    for kw in ({}, {"maxiter": 2}, {"tol": 1e-3}, {"atol": 1e-2}):
        np.testing.assert_allclose(rsl.cg(spd, b[:, 0], **kw)[0],
                                   jsl.cg(spd, b[:, 0], **kw)[0], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(rsl.bicgstab(spd, b[:, 0], **kw)[0],
                                   jsl.bicgstab(spd, b[:, 0], **kw)[0], rtol=1e-10, atol=1e-13)


def test_cg_pytrees_vmap_and_grad(mats):
    _, spd, b = mats

    def op(t):
        # symmetric positive definite: [[3 I, J / 2], [J / 2, 2 I]] for J all ones
        return {"u": 3.0 * t["u"] + 0.5 * t["v"].sum(), "v": 2.0 * t["v"] + 0.5 * t["u"].sum()}

    rhs = {"u": b[:2, 0], "v": b[2:, 0]}
    x, _ = rsl.cg(op, rhs, tol=1e-13)
    back = op(x)
    for k in rhs:
        np.testing.assert_allclose(back[k], rhs[k], rtol=1e-10, atol=1e-12)
    # lanes stop apart: one right-hand side converges at once (zero), the other does not
    rhs2 = np.stack([np.zeros(5), b[:, 1]])
    xs = rune.jit(rune.vmap(lambda v: rsl.cg(spd, v, tol=1e-12)[0]))(rhs2)
    np.testing.assert_allclose(xs, np.linalg.solve(spd, rhs2.T).T, rtol=1e-10, atol=1e-14)
    g = rune.grad(lambda s: rsl.cg(lambda v: spd @ v + s * v, b[:, 0], tol=1e-13)[0].sum())(0.5)
    exact = -np.ones(5) @ np.linalg.solve(spd + 0.5 * np.eye(5),
                                          np.linalg.solve(spd + 0.5 * np.eye(5), b[:, 0]))
    assert abs(float(g) - exact) < 1e-8


def test_krylov_bad_input():
    with pytest.raises(ValueError, match="A must be a square matrix"):
        rsl.cg(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="x0 and b must have the same structure"):
        rsl.cg(np.eye(2), np.ones(2), x0=np.ones(3))
    assert rsp.sparse.linalg.cg is rsl.cg
