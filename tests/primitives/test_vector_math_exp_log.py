"""exp, exp2, expm1, log, log2, log10, log1p, sinh, cosh, power of our own
(backend/cpu/codegen/vecmath/exp.py, log.py, power.py): within 1 ulp of the correctly rounded result (mpmath, tests/ulp_oracle.py) in float64 and
float32 on every binade of the domain and its edges, NumPy's special values, on every
path (a vectorized loop, one value, a scan step's small carry, vmap's lanes), and
derivatives unchanged."""

import os
import re

import mpmath
import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from machine_code import VECTOR_FMA, vector_code
from ulp_oracle import correctly_rounded, ulp_errors

# under RUNE_JIT_MATH=libmvec these functions are glibc's (tests/primitives/test_accuracy.py's bounds);
# read from the environment as config.py reads it (which moves under _src/: issue 33)
pytestmark = pytest.mark.skipif(os.environ.get("RUNE_JIT_MATH", "").strip() == "libmvec",
                                reason="RUNE_JIT_MATH=libmvec")

DTYPES = [np.float64, np.float32]
# name -> (mpmath's function, the domain's ends: the samples and edges stay inside)
FUNCTIONS = {
    "exp": (mpmath.exp, (-np.inf, np.inf)),
    "exp2": (lambda x: mpmath.power(2, x), (-np.inf, np.inf)),
    "expm1": (mpmath.expm1, (-np.inf, np.inf)),
    "sinh": (mpmath.sinh, (-np.inf, np.inf)),
    "cosh": (mpmath.cosh, (-np.inf, np.inf)),
    "log": (mpmath.log, (0.0, np.inf)),
    "log2": (lambda x: mpmath.log(x, 2), (0.0, np.inf)),
    "log10": (mpmath.log10, (0.0, np.inf)),
    "log1p": (mpmath.log1p, (-1.0, np.inf)),
}


ORACLES = {name: oracle for name, (oracle, _) in FUNCTIONS.items()}


def samples(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    """Log-uniform over every binade (subnormals to the largest float, both signs), and
    uniform over [-50, 50] and [-2, 2], where the interesting results are; where the
    domain starts at 0 or -1, the points below it are folded into it (|x|, or -1 + |x + 1|
    for log1p)."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    magnitude = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)),
                                   np.log(float(fi.max)), n))
    x = np.concatenate([magnitude * rng.choice([-1.0, 1.0], n), rng.uniform(-50, 50, n),
                        rng.uniform(-2, 2, n)]).astype(dtype)
    low = FUNCTIONS[name][1][0]
    return np.where(x < low, 2 * low - x, x).astype(dtype)


def edges(name: str, dtype) -> np.ndarray:
    """±0, the subnormals' ends, ±inf, NaN, the domain's end and its neighbours, and each
    overflow and underflow threshold with the floats either side."""
    fi = np.finfo(dtype)
    low = FUNCTIONS[name][1][0]
    points = [0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, -fi.tiny,
              fi.max, -fi.max, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, low]
    log_max, log_tiny = np.log(float(fi.max)), np.log(float(fi.smallest_subnormal))
    thresholds = {"exp": [log_max, log_tiny, np.log(float(fi.tiny))],
                  "exp2": [fi.maxexp, -fi.maxexp - fi.nmant - 1, fi.minexp],
                  "expm1": [log_max, -37.5, -17.5],
                  "sinh": [log_max + np.log(2.0)], "cosh": [log_max + np.log(2.0)]}
    for t in thresholds.get(name, []):
        around = np.nextafter(np.full(3, t, dtype), np.array([-np.inf, t, np.inf], dtype))
        points += [*around, *(-around if name in ("sinh", "cosh") else [])]
    x = np.array(points, dtype)
    with np.errstate(invalid="ignore"):
        return x[~(x < low)]


def check(name: str, *xs: np.ndarray, got: np.ndarray, oracle=None, numpy=None,
          long_double: bool = True) -> None:
    """got within 1 ulp of the correctly rounded result; where that is 0, inf or NaN, that
    result, with NumPy's sign of zero and NumPy's result where mpmath has none. `oracle`
    and `numpy` replace ORACLES[name] and NumPy's function of that name; `long_double`
    False: `numpy` has no long double loop, mpmath computes every point."""
    x = xs[0]
    numpy = numpy or getattr(np, name)
    with np.errstate(all="ignore"):  # results past float32's range round to inf
        exact = correctly_rounded(oracle or ORACLES[name], *xs, dtype=x.dtype,
                                  near=numpy if long_double else None, got=got)
        numpy = numpy(*xs)
    # where mpmath has no value (1 ** nan, exp(nan)), NumPy's; zeros take NumPy's sign
    exact = np.where(np.isnan(exact), numpy, exact)
    exact = np.where(exact == 0, np.copysign(0, numpy), exact).astype(x.dtype)
    special = ~np.isfinite(exact) | (exact == 0)
    assert got.dtype == x.dtype and got.shape == x.shape
    same = (got == exact) & (np.signbit(got) == np.signbit(exact))
    wrong = special & ~same & ~(np.isnan(got) & np.isnan(exact))
    assert not wrong.any(), ([v[wrong] for v in xs], got[wrong])
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf: 0 ulp
        err = ulp_errors(got, exact)
    worst = np.argmax(err)
    assert err[worst] <= 1.0, ([v[worst] for v in xs], got[worst], exact[worst])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_sampled_within_one_ulp(name, dtype):
    x = samples(name, dtype, 700)
    check(name, x, got=rune.jit(getattr(rnp, name))(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_edge_cases_vectorized_and_one_by_one(name, dtype):
    """The same values in a vectorized loop and as scalars (the loop's remainder and a
    single value's code): the same bits, and the special values NumPy gives."""
    f = rune.jit(getattr(rnp, name))
    x = edges(name, dtype)
    looped = f(np.tile(x, 64))[:x.size]
    check(name, x, got=looped)
    one_by_one = np.array([f(v) for v in x], dtype)
    np.testing.assert_array_equal(one_by_one, looped)


def on_every_path(f, x: np.ndarray) -> np.ndarray:
    """f of x (8 by 4) by a vectorized loop, asserting that a scan over a carry of 4
    (unrolled: the scalar code, or the SLP vectorizer's) and vmap's lane blocks of an
    iterate give the same bits."""
    def scanned(xs):
        return rune.scan(lambda c, v: (c, f(v)), np.float64(0.0), xs)[1]

    def iterated(v):
        return rune.iterate(lambda c: (f(c[0]), c[1] + 1), (v, np.int64(0)),
                            until=lambda c: c[1] >= 1, max_steps=2)[0]

    want = rune.jit(f)(x.ravel()).reshape(x.shape)
    np.testing.assert_array_equal(rune.jit(scanned)(x), want)
    np.testing.assert_array_equal(rune.jit(rune.vmap(iterated))(x), want)
    return want


@pytest.mark.parametrize("name", FUNCTIONS)
def test_small_carry_of_a_scan_step_and_lanes_of_vmap(name):
    x = samples(name, np.float64, 40, seed=1)[:32].reshape(8, 4)
    check(name, x.ravel(), got=on_every_path(getattr(rnp, name), x).ravel())


DERIVATIVES = {"exp": np.exp, "exp2": lambda x: np.exp2(x) * np.log(2), "expm1": np.exp,
               "sinh": np.cosh, "cosh": np.sinh, "log": lambda x: 1 / x,
               "log2": lambda x: 1 / (x * np.log(2)), "log10": lambda x: 1 / (x * np.log(10)),
               "log1p": lambda x: 1 / (1 + x)}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients(name):
    x = np.random.default_rng(2).uniform(0.1, 3.0, 16)
    f = getattr(rnp, name)
    g = rune.jit(rune.grad(lambda v: rnp.sum(f(v))))(x)
    np.testing.assert_allclose(g, DERIVATIVES[name](x), rtol=1e-14)
    rune.check_grads(lambda v: f(v) * v, x)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_inlined_and_vectorized(name):
    """The loop of 10^5 elements has the body inlined and widened (vector fused
    multiply-adds, no call, no definition of ours left in the machine code), or calls
    its kernel compiled apart once per vector (float64's sinh and cosh)."""
    for dtype in DTYPES:
        asm = vector_code(rune.jit(getattr(rnp, name)).lower(np.ones(100_000, dtype)), name,
                          dtype)
        assert re.search(VECTOR_FMA, asm), (name, dtype)
        assert not re.search(r"(?m)^\"?rune_(?!program|\w+_kernel)\w*\"?:", asm), (name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_million_points_within_one_ulp(name, dtype):
    x = samples(name, dtype, 340_000, seed=3)[:1_000_000]
    check(name, x, got=rune.jit(getattr(rnp, name))(x))


def power_samples(dtype, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x log-uniform over every positive binade with y making y log2(x) uniform over the
    exponents (finite results, subnormal ones, overflow and underflow); x in [0, 3] with
    y in [-30, 30]; x within 1e-6 of 1 with y up to 1e8 (where log2(x)'s error is
    magnified most); negative x with integer y."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    x = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)), np.log(float(fi.max)), n))
    t = rng.uniform(-fi.maxexp - fi.nmant - 5, fi.maxexp + 2, n)
    y = t / np.where(np.log2(x) == 0, 1, np.log2(x))
    xs = [x, rng.uniform(0, 3, n), 1 + rng.uniform(-1e-6, 1e-6, n), -rng.uniform(0, 10, n)]
    ys = [y, rng.uniform(-30, 30, n), rng.uniform(-1e8, 1e8, n), rng.integers(-40, 40, n)]
    return np.concatenate(xs).astype(dtype), np.concatenate(ys).astype(dtype)


def real_power(x, y):
    """x ** y, NaN where it is not real (ulp_oracle takes float() of mpmath's complex
    result, which raises)."""
    value = mpmath.power(x, y)
    return mpmath.re(value) if mpmath.im(value) == 0 else mpmath.nan


ORACLES["power"] = real_power


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power_sampled_within_one_ulp(dtype):
    x, y = power_samples(dtype, 600)
    check("power", x, y, got=rune.jit(rnp.power)(x, y))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power_special_values(dtype):
    """Every pair of IEEE special values and ordinary ones (C99's pow table: NaN, ±0,
    ±inf, ±1, odd and even integers, non-integers, the subnormals, the largest float),
    in a vectorized loop and one by one."""
    fi = np.finfo(dtype)
    values = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                       np.inf, -np.inf, np.nan, fi.smallest_subnormal, -fi.smallest_subnormal,
                       fi.max, -fi.max, 1e20, -1e20, 1024.0, -1075.0], dtype)
    x, y = (v.ravel() for v in np.meshgrid(values, values))
    f = rune.jit(rnp.power)
    looped = f(x, y)
    check("power", x, y, got=looped)
    np.testing.assert_array_equal(np.array([f(a, b) for a, b in zip(x, y)], dtype), looped)


def test_power_paths_and_gradients():
    x, y = power_samples(np.float64, 8, seed=4)
    x, y = np.abs(x[:32]).reshape(8, 4) + 0.5, y[:32].reshape(8, 4) % 5
    want = rune.jit(rnp.power)(x.ravel(), y.ravel()).reshape(8, 4)
    scanned = rune.jit(lambda a, b: rune.scan(lambda c, v: (c, rnp.power(*v)),
                                              np.float64(0.0), (a, b))[1])
    np.testing.assert_array_equal(scanned(x, y), want)
    gx, gy = rune.jit(rune.grad(lambda a, b: rnp.sum(rnp.power(a, b)), argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(gx, y * x ** (y - 1), rtol=1e-13)
    np.testing.assert_allclose(gy, x ** y * np.log(x), rtol=1e-13)
    for dtype in DTYPES:  # a call once per vector of a kernel apart (vecmath/outlined.py)
        ones = np.ones(100_000, dtype)
        assert re.search(VECTOR_FMA, vector_code(rune.jit(rnp.power).lower(ones, ones), "pow",
                                                 dtype))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power_million_points_within_one_ulp(dtype):
    x, y = power_samples(dtype, 250_000, seed=5)
    check("power", x, y, got=rune.jit(rnp.power)(x, y))
