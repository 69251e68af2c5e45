"""Compiled transcendentals stay within the bounds docs/accuracy.md states."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

DOMAINS = {
    "sin": (-100, 100), "cos": (-100, 100), "tan": (-1.5, 1.5), "exp": (-80, 80),
    "expm1": (-10, 10), "log": (1e-3, 1e3), "log1p": (-0.99, 100), "tanh": (-20, 20),
    "sinh": (-20, 20), "cosh": (-20, 20), "arctan": (-100, 100),
}
BOUND = {np.float64: 4, np.float32: 8}


def ulps(got, want) -> float:
    spacing = np.spacing(np.maximum(np.abs(got), np.abs(want))).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_unary_math_within_bound(name, dtype):
    lo, hi = DOMAINS[name]
    x = np.random.default_rng(0).uniform(lo, hi, 100_000).astype(dtype)
    got = rune.jit(getattr(rnp, name))(x)
    assert got.dtype == dtype
    assert ulps(got, getattr(np, name)(x)) <= BOUND[dtype]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["arctan2", "power"])
def test_binary_math_within_bound(name, dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 10, 100_000).astype(dtype)
    y = rng.uniform(-5, 5, 100_000).astype(dtype)
    got = rune.jit(getattr(rnp, name))(x, y)
    assert ulps(got, getattr(np, name)(x, y)) <= BOUND[dtype]


@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_unary_math_of_a_small_carry_within_bound(name, dtype, width):
    """A loop step computes f of its few carried elements side by side: the SLP
    vectorizer calls libmvec's narrower variants there."""
    lo, hi = DOMAINS[name]
    rows = np.random.default_rng(2).uniform(lo, hi, (5_000, width)).astype(dtype)
    f = getattr(rnp, name)
    step = lambda c, x: (x, f(c))  # noqa: E731  (ys[t] = f(the row before row t))
    _, got = rune.jit(lambda xs: rune.scan(step, xs[0], xs))(rows)
    want = getattr(np, name)(np.concatenate([rows[:1], rows[:-1]]))
    assert ulps(got, want) <= BOUND[dtype]
