"""scipy.special's erfinv, gammaln and digamma in compiled code and eagerly: the
project's own code (compositions of its vector math, docs/accuracy.md), within 1 ulp of
the correctly rounded result (mpmath, tests/ulp_oracle.py) in float64 and float32 where
docs/accuracy.md says so, SciPy's special values, the same bits on every path,
derivatives from the result."""

import re

import mpmath
import numpy as np
import pytest
import scipy.special as sc

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from machine_code import CALL, VECTOR_FMA
from test_vector_math_exp_log import check, on_every_path

DTYPES = [np.float64, np.float32]
# name -> mpmath's function
FUNCTIONS = {"erfinv": mpmath.erfinv}


def samples(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    """erfinv: n uniform in [-1, 1], n log-uniform magnitudes over every binade below 1,
    n at ±(1 - 2^-u) next to the poles (down to 1 - ulp)."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    sign = rng.choice([-1.0, 1.0], n)
    tiny = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)), 0, n))
    near_one = 1 - 2.0 ** -rng.uniform(1, fi.nmant + 1, n)
    return np.concatenate([rng.uniform(-1, 1, n), sign * tiny, sign * near_one]).astype(dtype)


def edges(name: str, dtype) -> np.ndarray:
    """±0, the subnormals' ends, ±1 and their neighbours, where the method changes (Giles'
    ranges, erf(1) for the residual), outside the domain, ±inf and NaN."""
    fi = np.finfo(dtype)
    points = [0.0, fi.smallest_subnormal, fi.tiny, 0.5, 0.8427007929497149,
              0.9999999999999, 1.0, 1.5, fi.max, np.inf]
    x = np.array(points, dtype)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    return np.concatenate([x, -x, [np.nan]]).astype(dtype)


def verify(name: str, x: np.ndarray, got: np.ndarray) -> None:
    check(name, x, got=got, oracle=FUNCTIONS[name], numpy=getattr(sc, name),
          long_double=False)


def function(name: str):
    return getattr(rune.scipy.special, name)


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
    """SciPy's special values, in a vectorized loop and one by one (the same bits)."""
    f = rune.jit(function(name))
    x = edges(name, dtype)
    looped = f(np.tile(x, 64))[:x.size]
    one_by_one = np.array([f(v) for v in x], dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(looped[~np.isfinite(looped)],
                                      getattr(sc, name)(x)[~np.isfinite(looped)])
    verify(name, x, looped)
    np.testing.assert_array_equal(one_by_one, looped)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_small_carry_of_a_scan_step_and_lanes_of_vmap(name):
    x = samples(name, np.float64, 12, seed=1)[:32].reshape(8, 4)
    verify(name, x.ravel(), on_every_path(function(name), x).ravel())


DERIVATIVES = {"erfinv": lambda x: np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(x) ** 2)}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_and_inlined_vectorized_code(name):
    """Derivatives from the result (check_grads too); the loop of 10^5 elements is
    widened (vector fused multiply-adds) and calls nothing."""
    x = np.random.default_rng(2).uniform(0.1, 0.9, 16)
    f = function(name)
    g = rune.jit(rune.grad(lambda v: rnp.sum(f(v))))(x)
    np.testing.assert_allclose(g, DERIVATIVES[name](x), rtol=1e-13)
    rune.check_grads(f, x)
    if config.math != "own":
        return
    for dtype in DTYPES:
        asm = rune.jit(f).lower(np.full(100_000, 0.5, dtype)).asm
        assert re.search(VECTOR_FMA, asm), (name, dtype)
        assert not re.search(CALL, asm), (name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_million_points_within_one_ulp(name, dtype):
    """10^5 points, which mpmath computes point by point (minutes for 10^6):
    tools/accuracy_vecmath.py measures 10^6 (docs/accuracy.md)."""
    x = samples(name, dtype, 33_334, seed=3)
    verify(name, x, rune.jit(function(name))(x))
