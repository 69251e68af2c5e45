"""scipy.special's erfinv, gammaln and digamma in compiled code and eagerly: the
project's own code (compositions of its vector math, docs/accuracy.md), within 1 ulp of
the correctly rounded result (mpmath, tests/ulp_oracle.py) in float32 and in float64
where docs/accuracy.md says so (all of erfinv's domain; gammaln and digamma on the
positive axis and on the negative axis but within the widths of negative_zeros.py's
windows around their zeros on (-20, -1/4], and for digamma but below -20), SciPy's
special values, the same bits on every path, derivatives from the result; the Taylor
series around those zeros (near_zero.py, not yet used by gammaln and digamma) within 1 ulp
in their windows."""

import re

import mpmath
import numpy as np
import pytest
import scipy.special as sc

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from machine_code import VECTOR_ANY, called
from ulp_oracle import correctly_rounded
from test_vector_math_exp_log import check, on_every_path
from rune_jit._src.scipy import negative_zeros
from rune_jit._src.scipy.near_zero import near_zero

DTYPES = [np.float64, np.float32]


def erfinv_newton(x: mpmath.mpf) -> mpmath.mpf:
    """mpmath's erfinv(x) to the working precision, three times faster: Newton's steps on
    erf(y) = x from SciPy's double, each doubling the correct bits, in 64 more bits
    (next to ±1, erf(y) - x cancels up to 53 of them and exp(y^2) scales what is left
    by up to 2^50). mpmath's own erfinv takes 0.6 ms a point: the 10^5-point tests'
    minutes."""
    if not mpmath.isfinite(x) or x == 0 or abs(x) >= 1:  # NaN, ±1 (poles), 0
        return mpmath.erfinv(x)
    goal = mpmath.mp.prec
    with mpmath.workprec(goal + 64):
        y = mpmath.mpf(float(sc.erfinv(float(x))))
        for _ in range(8):
            step = (mpmath.erf(y) - x) * mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(y * y)
            y -= step
            if abs(step) <= abs(y) * mpmath.ldexp(1, -goal):
                return y
    raise AssertionError(f"erfinv_newton({x}) did not converge")


# name -> the function of mpmath's (and the oracle's) precision
FUNCTIONS = {"erfinv": erfinv_newton, "gammaln": lambda x: mpmath.re(mpmath.loggamma(x)),
             "digamma": mpmath.digamma}
ROOT = 1.4616321449683622  # psi's positive zero, gammaln's minimum


def samples(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    """erfinv: n uniform in [-1, 1], n log-uniform magnitudes over every binade below 1,
    n at ±(1 - 2^-u) next to the poles (down to 1 - ulp). gammaln, digamma: n around
    psi's zero, n log-uniform below 0.01, n uniform in [0, 12] (the pieces and the
    recurrence), n log-uniform over the positive range, n in (-1/4, 0), n uniform in
    [-21, -1/4], n next to the zeros on the negative axis (up to 2^12 ulps and a relative
    10^-3 away: where the recurrence's terms cancel), n huge negatives. In float64 the
    points within the zeros' windows go (and digamma's below -20): docs/accuracy.md."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    sign = rng.choice([-1.0, 1.0], n)
    low = np.log(float(fi.smallest_subnormal))
    if name == "erfinv":
        tiny = np.exp(rng.uniform(low, 0, n))
        near_one = 1 - 2.0 ** -rng.uniform(1, fi.nmant + 1, n)
        x = [rng.uniform(-1, 1, n), sign * tiny, sign * near_one]
    else:
        x = [rng.uniform(ROOT - 0.25, 1.75, n), np.exp(rng.uniform(low, np.log(0.01), n)),
             rng.uniform(0, 12, n), np.exp(rng.uniform(low, np.log(float(fi.max)), n)),
             -np.exp(rng.uniform(low, np.log(0.25), n))]
        zeros = _zeros(name)
        at = rng.integers(0, zeros.size, n)
        ulps = np.spacing(np.abs(zeros[at])) * rng.integers(-4096, 4097, n)
        relative = 1 + rng.choice([-1, 1], n) * np.exp(rng.uniform(-35, np.log(1e-3), n))
        x += [rng.uniform(-21, -0.25, n),
              np.where(rng.random(n) < 0.5, zeros[at] + ulps, zeros[at] * relative)]
        if dtype == np.float32 or name == "gammaln":
            x += [rng.uniform(-30, 0, n),
                  -np.exp(rng.uniform(np.log(30), np.log(float(fi.max)), n))]
        if dtype == np.float64:
            x = [v[~_in_windows(name, v)] for v in x]
    return np.concatenate(x).astype(dtype)


def _in_windows(name: str, x: np.ndarray) -> np.ndarray:
    """Whether x is within a zero's window (negative_zeros.py), or, for digamma, below
    -20: where float64 gammaln and digamma are not within 1 ulp (docs/accuracy.md)."""
    table = getattr(negative_zeros, name.upper())
    r, width = np.array(table["r"][0]), np.array(table["width"])
    near = (np.abs(x[:, None] - r[None, :]) <= width[None, :]).any(axis=1)
    return near | ((x <= -20) if name == "digamma" else False)


def _zeros(name: str) -> np.ndarray:
    """The zeros on (-20, -1/4] (rune_jit's table of them; mpmath checks the results)."""
    table = getattr(negative_zeros, name.upper())
    r = np.array(table["r"][0])
    return r[np.array(table["width"]) > 0]


def edges(name: str, dtype) -> np.ndarray:
    """erfinv: ±0, the subnormals' ends, ±1 and their neighbours, where the method
    changes, outside the domain, ±inf and NaN. gammaln, digamma: ±0, the subnormals'
    ends, the poles, where the method changes (1/4, 3/4, 1.25, the ends of the series
    around psi's zero, 3.25, 10), a huge and the largest float (with the floats either
    side), 1 and 2, the negative axis's changes of method (-1/4, -1/2, -20 and -20 + ε),
    the last non-integer float, ±inf, NaN."""
    fi = np.finfo(dtype)
    if name == "erfinv":
        points = [0.0, fi.smallest_subnormal, fi.tiny, 0.5, 0.8427007929497149,
                  0.9999999999999, 1.0, 1.5, fi.max, np.inf]
        x = np.array(points, dtype)
        x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
        return np.concatenate([x, -x, [np.nan]]).astype(dtype)
    points = [fi.smallest_subnormal, fi.tiny, 2.0 ** -60, 0.25, 0.75, 1.25, ROOT,
              1.2116321449683622, 2.25, 2.75, 3.25, 10.0, 1e30, fi.max, -0.5, -2.25,
              -19.5, -20.0, -20.0 + 2.0 ** -20, -4503599627370495.5]
    x = np.array(points, dtype)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf),
                        [1.0, 2.0, 1.75, np.nextafter(1.75, 0), -0.25, -2.0 ** -60]])
    poles = np.array([0.0, -0.0, -1.0, -2.0, -1e30, np.inf, -np.inf, np.nan])
    return np.concatenate([x, poles]).astype(dtype)


def verify(name: str, x: np.ndarray, got: np.ndarray) -> None:
    check(name, x, got=got, oracle=FUNCTIONS[name], numpy=getattr(sc, name),
          long_double=False)


def function(name: str):
    return getattr(rune.scipy.special, name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_the_oracles_erfinv_is_mpmaths(dtype):
    """Rounded to the dtype, erfinv_newton is mpmath.erfinv on every kind of sample (next
    to the poles, subnormals, the middle)."""
    # and points next to ±1, where erf(y) - x cancels (regression: at 128 bits Newton's
    # steps did not converge there before they worked in 64 more)
    x = np.concatenate([samples("erfinv", dtype, 100, seed=5),
                        [0.99999783800166974767620331476791761816, 0.999919891357421875,
                         1 - 2.0 ** -53, -(1 - 2.0 ** -24)]]).astype(dtype)
    assert np.array_equal(correctly_rounded(erfinv_newton, x, dtype=dtype),
                          correctly_rounded(mpmath.erfinv, x, dtype=dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_sampled_within_one_ulp_compiled_and_eager(name, dtype):
    x = samples(name, dtype, 300)
    verify(name, x, rune.jit(function(name))(x))
    with np.errstate(all="ignore"):
        verify(name, x, np.asarray(function(name)(x)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_edge_cases_vectorized_and_one_by_one(name, dtype):
    """SciPy's special values, compiled in a vectorized loop and one by one (the same
    bits) and eagerly."""
    x = edges(name, dtype)
    jitted = rune.jit(function(name))
    with np.errstate(all="ignore"):
        eager, scipy = np.asarray(function(name)(x)), getattr(sc, name)(x)
    results = {"loop": jitted(np.tile(x, 64))[:x.size], "eager": eager,
               "one by one": np.array([jitted(v) for v in x], dtype)}
    for how, got in results.items():
        special = ~np.isfinite(got)
        np.testing.assert_array_equal(got[special], scipy[special], err_msg=how)
        verify(name, x, got)
    if config.math == "own":  # glibc's scalar sin, log, tan and libmvec's differ in a bit
        np.testing.assert_array_equal(results["one by one"], results["loop"])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_small_carry_of_a_scan_step_and_lanes_of_vmap(name):
    x = samples(name, np.float64, 16, seed=1)[:32].reshape(8, 4)
    verify(name, x.ravel(), on_every_path(function(name), x).ravel())


DERIVATIVES = {"erfinv": lambda x: np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(x) ** 2),
               "gammaln": sc.digamma, "digamma": lambda x: sc.polygamma(1, x)}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_and_inlined_vectorized_code(name):
    """Derivatives from the result (check_grads too); the loop of 10^5 elements is
    vector code and calls nothing but kernels compiled apart, once per vector."""
    x = np.random.default_rng(2).uniform(0.1, 0.9, 16) * (1 if name == "erfinv" else 3)
    f = function(name)
    g = rune.jit(rune.grad(lambda v: rnp.sum(f(v))))(x)
    np.testing.assert_allclose(g, DERIVATIVES[name](x), rtol=1e-12)
    rune.check_grads(f, x)
    if config.math != "own":
        return
    asm = {d.__name__: rune.jit(f).lower(np.full(100_000, 0.5, d)).asm for d in DTYPES}
    for a in asm.values():  # it calls only kernels compiled apart (log's, exp's: outlined.py)
        assert re.search(VECTOR_ANY, a)  # and memcpy: a loop's result to the output, once
        calls = called(a) - {"memcpy"}
        assert all(re.fullmatch(r"rune_\w+_kernel\w*_(v\d+)?f64", c) for c in calls), calls


@pytest.mark.parametrize("name", ["gammaln", "digamma"])
def test_taylor_series_around_the_negative_zeros(name):
    """near_zero.py's series within 1 ulp in the zeros' windows (up to 2^12 ulps of x and
    out to the window's edge), eagerly and compiled (its gathers in a vectorized loop)."""
    table = getattr(negative_zeros, name.upper())
    width, r = np.array(table["width"]), np.array(table["r"][0])
    rows = np.flatnonzero(width > 0)
    rng = np.random.default_rng(4)
    at = rng.choice(rows, 2000)
    x = r[at] + np.where(rng.random(2000) < 0.5,
                         np.spacing(np.abs(r[at])) * rng.integers(-4096, 4097, 2000),
                         width[at] * rng.uniform(-1, 1, 2000))
    keep = np.abs(x - r[at]) <= width[at]
    x, cell = x[keep], at[keep].astype(np.float64)
    series = lambda v, c: near_zero(v, c, table)  # noqa: E731
    for inside, value in [series(x, cell), rune.jit(series)(x, cell)]:
        assert np.asarray(inside).all()
        verify(name, x, np.asarray(value))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.slow
def test_hundred_thousand_points_within_one_ulp(name, dtype):
    """10^5 points, which mpmath computes point by point (minutes for 10^6):
    tools/accuracy_vecmath.py measures 10^6 (docs/accuracy.md)."""
    x = samples(name, dtype, 33_334, seed=3)
    verify(name, x, rune.jit(function(name))(x))
