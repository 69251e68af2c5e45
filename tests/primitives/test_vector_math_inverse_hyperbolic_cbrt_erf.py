"""arcsinh, arccosh, arctanh, cbrt, erf and erfc of our own (backend/cpu/codegen/vecmath/
inverse_hyperbolic.py, cbrt.py, erf.py): within 1 ulp of the correctly rounded result
(mpmath, tests/ulp_oracle.py) in float64 and float32 over the whole domain and at its
edges, the interpreter's special values (NumPy's; Python's math.erf and math.erfc), the
same bits on every path, derivatives unchanged."""

import re

import mpmath
import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from machine_code import VECTOR_FMA, vector_code
from test_vector_math_exp_log import check, on_every_path

pytestmark = pytest.mark.skipif(config.math != "own", reason="RUNE_JIT_MATH=libmvec")

DTYPES = [np.float64, np.float32]
# name -> mpmath's function
FUNCTIONS = {"arcsinh": mpmath.asinh, "arccosh": mpmath.acosh, "arctanh": mpmath.atanh,
             "cbrt": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), "erf": mpmath.erf,
             "erfc": lambda x: mpmath.ldexp(1, -2000) if x >= 40 else mpmath.erfc(x)}
# erfc(x) < e^-1600 from x = 40 on: any value that small rounds to +0, and this one costs
# microseconds where mpmath's takes milliseconds past 1e20 (and overflows past 1e150)
DERIVATIVES = {"arcsinh": lambda x: 1 / np.sqrt(x * x + 1),
               "arccosh": lambda x: 1 / np.sqrt(x * x - 1),
               "arctanh": lambda x: 1 / (1 - x * x),
               "cbrt": lambda x: 1 / (3 * np.cbrt(x) ** 2),
               "erf": lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x),
               "erfc": lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x)}


def function(name: str):
    return getattr(rnp, name, None) or getattr(rune.scipy.special, name)


def interpreter(name: str):
    """The eager (interpreted) function: NumPy's, or the interpreter's where NumPy has none
    (and so no long double loop for the oracle's shortcut)."""
    return getattr(np, name, None) or function(name)


def verify(name: str, x: np.ndarray, got: np.ndarray) -> None:
    check(name, x, got=got, oracle=FUNCTIONS[name], numpy=interpreter(name),
          long_double=hasattr(np, name))


def samples(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    """n log-uniform magnitudes over every binade of the domain (both signs where it has
    them), n uniform in [-30, 30] and n in [-2, 2] (folded into the domain), and n next
    to its ends: 1 + 2^-u for arccosh, ±(1 - 2^-u) for arctanh."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    top = 1.0 if name == "arctanh" else float(fi.max)
    magnitude = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)), np.log(top), n))
    sign = rng.choice([-1.0, 1.0], n)
    near_end = 2.0 ** -rng.uniform(1, fi.nmant + 2, n)
    x = np.concatenate([magnitude * sign, rng.uniform(-30, 30, n), rng.uniform(-2, 2, n),
                        near_end])
    if name == "arccosh":
        x = np.concatenate([1 + np.abs(x[:-n] - 1), 1 + near_end])
    elif name == "arctanh":
        x = np.concatenate([x[:n], rng.uniform(-1, 1, 2 * n), sign * (1 - near_end)])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def edges(name: str, dtype) -> np.ndarray:
    """±0, the subnormals' ends, ±inf, NaN, ±1 and their neighbours, the largest floats,
    and where each method changes (with the floats either side)."""
    fi = np.finfo(dtype)
    steps = {"arcsinh": [2.0 ** 28, 2.0 ** -26, 2.0 ** -12], "arccosh": [2.0 ** 28, 2.0],
             "arctanh": [0.1716, 0.5], "cbrt": [8.0, 27.0, 2.0 ** -1022 * 3, 1e300],
             # erf's and erfc's pieces, where erf rounds to 1, where erfc underflows
             "erf": [2.0, 4.0, 5.9, 6.0], "erfc": [2.0, 4.0, 10.0, 10.5, 26.5, 27.3, 28.0]}[name]
    points = [0.0, fi.smallest_subnormal, fi.tiny, fi.max, np.inf, 1.0, 0.5, *steps]
    x = np.array(points, dtype)
    with np.errstate(over="ignore"):
        x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    return np.concatenate([x, -x, [np.nan]]).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_sampled_within_one_ulp(name, dtype):
    x = samples(name, dtype, 500)
    verify(name, x, rune.jit(function(name))(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_edge_cases_vectorized_and_one_by_one(name, dtype):
    """The same values in a vectorized loop and one by one: the same bits, the special
    values the interpreter gives, and no floating-point warning from either."""
    f = rune.jit(function(name))
    x = edges(name, dtype)
    with np.errstate(all="raise"):
        looped = f(np.tile(x, 64))[:x.size]
        one_by_one = np.array([f(v) for v in x], dtype)
    verify(name, x, looped)
    np.testing.assert_array_equal(one_by_one, looped)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_small_carry_of_a_scan_step_and_lanes_of_vmap(name):
    x = samples(name, np.float64, 10, seed=1)[:32].reshape(8, 4)
    verify(name, x.ravel(), on_every_path(function(name), x).ravel())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_and_inlined_vectorized_code(name):
    """Derivatives are unchanged; the loop of 10^5 elements has the body inlined and
    widened (vector fused multiply-adds, no call), or calls its kernel once per vector,
    compiled apart (vecmath/outlined.py: all of float64's, erf's and erfc's in float32
    too), whose code is vector code."""
    x = np.random.default_rng(2).uniform(1.1, 3.0, 16) * (0.3 if name == "arctanh" else 1)
    f = function(name)
    g = rune.jit(rune.grad(lambda v: rnp.sum(f(v))))(x)
    np.testing.assert_allclose(g, DERIVATIVES[name](x), rtol=1e-14)
    for dtype in DTYPES:  # float32's erf is float64's, widened by the library: its kernel
        lowered = rune.jit(f).lower(np.full(100_000, 1.5 if name == "arccosh" else 0.5, dtype))
        widened = np.float64 if name in ("erf", "erfc") else dtype
        assert re.search(VECTOR_FMA, vector_code(lowered, name, widened)), (name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_million_points_within_one_ulp(name, dtype):
    """10^6 points where NumPy has the function in long double (the oracle's shortcut);
    erf and erfc, which mpmath computes point by point (minutes for 10^6), take 10^5
    here: tools/accuracy_vecmath.py measures their 10^6 (docs/accuracy.md)."""
    x = samples(name, dtype, 250_000 if hasattr(np, name) else 25_000, seed=3)
    verify(name, x, rune.jit(function(name))(x))
