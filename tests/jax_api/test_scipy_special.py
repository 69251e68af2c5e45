"""rune_jit.scipy.special and rune_jit.scipy.stats against SciPy: values eagerly and
compiled, derivatives (check_grads, and the closed forms: gammaln' = digamma, digamma' =
polygamma(1)), vmap against a loop, inside a scan step, and dtypes."""

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import rune_jit as rune
from rune_jit.scipy import special as rs
from rune_jit.scipy import stats as rst


def _grid(lo, hi, n=801):
    return np.linspace(lo, hi, n)


# name: (SciPy's function, arguments, rtol, atol)
CASES = {
    "erf": (sc.erf, [_grid(-6, 6)], 1e-15, 1e-300),
    "erfc": (sc.erfc, [_grid(-6, 26)], 1e-13, 1e-300),  # SciPy's own error past 10
    "erfinv": (sc.erfinv, [np.r_[_grid(-1, 1)[1:-1], -1, 1, 1 - 2 ** -52, 1e-300]], 1e-14, 0),
    "ndtr": (sc.ndtr, [_grid(-37, 9)], 1e-12, 1e-300),  # x² eps: the argument's rounding
    "log_ndtr": (sc.log_ndtr, [np.r_[_grid(-60, 40), -40.0, -1e5]], 3e-13, 1e-300),
    "ndtri": (sc.ndtri, [np.r_[np.geomspace(1e-300, 0.5, 400), _grid(0, 1)]], 1e-14, 1e-15),
    "expit": (sc.expit, [_grid(-750, 750)], 1e-15, 1e-300),
    "logit": (sc.logit, [_grid(0, 1)], 1e-15, 1e-15),
    "gammaln": (sc.gammaln, [np.r_[_grid(-20.1, 30), np.geomspace(1e-8, 1e300, 200)]], 2e-14,
                2e-14),
    "digamma": (sc.digamma, [np.r_[_grid(-20.1, 30), np.geomspace(1e-8, 1e300, 200), 0.0]],
                2e-13, 1e-13),
    "trigamma": (lambda x: sc.polygamma(1, x), [np.r_[_grid(-20.1, 30),
                                                        np.geomspace(1e-8, 1e150, 100)]],
                 1e-13, 1e-13),
    "xlogy": (sc.xlogy, [np.array([0.0, 0.0, 1.5, -2.0, 3.0, 0.0]),
                         np.array([0.0, np.nan, 2.5, 0.5, 0.0, 3.0])], 1e-15, 0),
    "xlog1py": (sc.xlog1py, [np.array([0.0, 0.0, 1.5, -2.0, 3.0]),
                             np.array([-1.0, np.nan, 1e-10, 0.5, -0.5])], 1e-15, 0),
    "entr": (sc.entr, [np.array([-1.0, 0.0, 1e-300, 0.5, 1.0, 7.0, np.nan])], 1e-15, 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name, backend):
    ref, args, rtol, atol = CASES[name]
    with np.errstate(all="ignore"):
        want = ref(*args)
        got = backend(getattr(rs, name))(*args)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_float32_gives_float32_and_others_float64():
    x32 = np.array([0.3, 1.7], np.float32)
    assert rs.gammaln(x32).dtype == np.float32
    np.testing.assert_array_equal(rs.ndtr(x32), sc.ndtr(x32))
    for x in (np.array([1, 2], np.int8), np.array([0.5], np.float16), 2.0, True):
        assert rs.erf(x).dtype == np.float64


def test_log_ndtr_in_the_far_left_tail(backend):
    x = np.array([-40.0, -100.0, -1e3, -38.5])
    np.testing.assert_allclose(backend(rs.log_ndtr)(x), sc.log_ndtr(x), rtol=1e-15)
    g = backend(rune.grad(lambda v: rs.log_ndtr(v).sum()))(x)  # pdf / cdf
    r = 1 / (x * x)
    mills = -x / (1 - r + 3 * r * r - 15 * r ** 3 + 105 * r ** 4 - 945 * r ** 5)
    np.testing.assert_allclose(g, mills, rtol=1e-13)


def test_ndtri_inverts_ndtr_in_the_tails():
    p = np.geomspace(1e-300, 1e-5, 50)
    np.testing.assert_allclose(rs.ndtr(rs.ndtri(p)), p, rtol=1e-12)
    q = np.geomspace(1e-12, 1e-5, 10)
    np.testing.assert_allclose(rs.ndtri(1 - q), -rs.ndtri(q), rtol=1e-4)  # 1 - q rounds
    g = rune.grad(lambda v: rs.ndtri(v).sum())(p)  # 1 / pdf, where differences cannot go
    np.testing.assert_allclose(g, 1 / st.norm.pdf(sc.ndtri(p)), rtol=1e-11)


SMOOTH = {  # name: arguments where the function is smooth
    "erf": [np.array([-1.3, 0.2, 2.1])], "erfc": [np.array([-1.3, 0.2, 4.0])],
    "erfinv": [np.array([-0.9, 0.1, 0.6])], "ndtr": [np.array([-6.0, 0.3, 2.0])],
    "log_ndtr": [np.array([-45.0, -19.5, -3.0, 0.5, 7.0])],
    "ndtri": [np.array([1e-3, 0.02, 0.4, 0.7, 0.999])], "expit": [np.array([-3.0, 0.5, 4.0])],
    "logit": [np.array([0.1, 0.45, 0.9])],
    "gammaln": [np.array([-2.5, 0.3, 1.1, 2.05, 7.0, 40.0])],
    "digamma": [np.array([-2.5, 0.3, 1.1, 7.0, 40.0])], "trigamma": [np.array([0.3, 2.0, 15.0])],
    "xlogy": [np.array([0.5, -1.5]), np.array([2.0, 0.3])],
    "xlog1py": [np.array([0.5, -1.5]), np.array([2.0, -0.3])], "entr": [np.array([0.2, 3.0])],
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_check_grads(name):
    rune.check_grads(getattr(rs, name), *SMOOTH[name], modes=("fwd", "rev"))


def test_derivatives_are_the_closed_forms(backend):
    x = np.array([-3.7, -0.4, 0.2, 1.0, 2.5, 11.0, 300.0])
    d1 = backend(rune.grad(lambda v: rs.gammaln(v).sum()))(x)
    np.testing.assert_allclose(d1, sc.digamma(x), rtol=1e-13)
    d2 = backend(rune.grad(rune.grad(lambda v: rs.gammaln(v))))(2.5)
    np.testing.assert_allclose(d2, sc.polygamma(1, 2.5), rtol=1e-13)
    _, t = rune.jvp(rs.digamma, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, sc.polygamma(1, x), rtol=1e-12)


def test_xlogy_at_zero_has_zero_derivative():
    g = rune.grad(lambda x, y: rs.xlogy(x, y).sum(), argnums=1)(np.zeros(2), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0])


@pytest.mark.parametrize("name", ["gammaln", "digamma", "log_ndtr", "ndtri", "erfinv"])
def test_vmap_matches_a_loop(name, backend):
    x = np.abs(np.random.default_rng(0).standard_normal((4, 3))) * 0.3 + 0.05
    f = getattr(rs, name)
    got = backend(rune.vmap(lambda row: f(row) * row.sum()))(x)
    np.testing.assert_allclose(got, np.stack([f(r) * r.sum() for r in x]), rtol=1e-14)


@pytest.mark.slow  # seconds of compiling (the quick run's 5 minutes: issue 32)
def test_inside_a_scan_step(backend):
    xs = np.linspace(0.1, 3.0, 6)

    def run(a):
        def step(c, x):
            c = c + rs.gammaln(x + a) - rs.log_ndtr(-x * a)
            return c, rs.digamma(c) + rs.ndtri(rs.expit(x - a))
        return rune.scan(step, np.float64(1.0), xs)

    carry, ys = backend(run)(np.float64(0.8))
    c, want = 1.0, []
    for x in xs:
        c = c + sc.gammaln(x + 0.8) - sc.log_ndtr(-x * 0.8)
        want.append(sc.digamma(c) + sc.ndtri(sc.expit(x - 0.8)))
    np.testing.assert_allclose(carry, c, rtol=1e-13)
    np.testing.assert_allclose(ys, want, rtol=1e-12)
    rune.check_grads(lambda a: run(a)[1].sum(), np.float64(0.8), modes=("fwd", "rev"))


def test_logsumexp_matches_scipy():
    a = np.array([[1.0, np.inf, 3.0], [-np.inf, -np.inf, -np.inf]])
    np.testing.assert_array_equal(rs.logsumexp(a, axis=1), sc.logsumexp(a, axis=1))


# ------------------------------------------------------------- stats


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"])
def test_norm_matches_scipy(method, backend):
    x = np.linspace(-60, 60, 241)
    got = backend(lambda v, m, s: getattr(rst.norm, method)(v, m, s))(x, 0.5, 2.0)
    want = getattr(st.norm, method)(x, 0.5, 2.0)
    np.testing.assert_allclose(got, want, rtol=2e-13, atol=1e-300)
    rune.check_grads(lambda v, m, s: getattr(rst.norm, method)(v, m, s),
                     np.array([-3.0, 0.2, 2.5]), 0.5, 2.0, modes=("fwd", "rev"))


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_norm_quantiles_match_scipy(method, backend):
    q = np.r_[0.0, np.geomspace(1e-200, 0.5, 60), 0.75, 1.0]
    got = backend(lambda v: getattr(rst.norm, method)(v, loc=1.0, scale=3.0))(q)
    np.testing.assert_allclose(got, getattr(st.norm, method)(q, loc=1.0, scale=3.0),
                               rtol=1e-13, atol=1e-13)


def test_multivariate_normal_logpdf_matches_scipy(backend):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    cov, mean, x = a @ a.T + np.eye(3), rng.standard_normal(3), rng.standard_normal((5, 3))
    got = backend(rst.multivariate_normal.logpdf)(x, mean, cov)
    np.testing.assert_allclose(got, st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-13)
    np.testing.assert_allclose(rst.multivariate_normal.pdf(x[0], mean, cov),
                               st.multivariate_normal.pdf(x[0], mean, cov), rtol=1e-13)
    rune.check_grads(lambda m, c: rst.multivariate_normal.logpdf(x, m, c @ c.T), mean, a,
                     modes=("fwd", "rev"))


DTYPE_NAMES = ["erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit",
               "gammaln", "digamma", "entr"]
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.float16, np.float32, np.float64]


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.slow
def test_result_dtypes_are_scipys_loop_search(name):
    """Regression: int16 gave float32 (NumPy's rule for sin, not SciPy's loops: erf's
    first loop is float64's), and float16 gave float64 for erfinv (its first is float32's)."""
    for dt in DTYPES:
        x = np.array([0.25, 0.5]).astype(dt) if np.dtype(dt).kind == "f" else np.array(
            [1, 0]).astype(dt)
        want = getattr(sc, name)(x).dtype
        assert np.asarray(getattr(rs, name)(x)).dtype == want, dt
        assert np.asarray(rune.jit(getattr(rs, name))(x)).dtype == want, dt
    assert np.asarray(getattr(rs, name)(0.5)).dtype == getattr(sc, name)(0.5).dtype


def test_two_operand_dtypes_are_scipys():
    f32 = np.ones(2, np.float32)
    for a, b in [(f32, 2.0), (f32, f32), (np.ones(2, np.int16), f32),
                 (np.ones(2, np.float16), np.ones(2, np.float16)), (2, 3)]:
        assert np.asarray(rs.xlogy(a, b)).dtype == sc.xlogy(a, b).dtype
        assert np.asarray(rs.xlog1py(a, b)).dtype == sc.xlog1py(a, b).dtype
