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


# tanh is inline code (backend/cpu/codegen/tanh.py): checked against a reference with more digits
# (long double) on a dense sweep: small |x| (where its error peaks, near 0.03), each point
# where its exp's reduction steps to the next power of 2, around 1, where it saturates to
# ±1 (19.06 in float64, 9.01 in float32), subnormals and large values
TANH_BOUND = 4  # ulp, float64 and float32 (docs/accuracy.md)


def tanh_sweep(dtype) -> np.ndarray:
    tiny = np.finfo(dtype).smallest_subnormal
    steps = np.asarray((np.arange(29) + 0.5) * np.log(2) / 2, dtype)
    parts = [np.linspace(0, 1, 100_001), np.linspace(0, 0.1, 100_001),
             np.linspace(1, 25, 100_001), np.geomspace(tiny, 1e-3, 10_001),
             floats_around(steps, 100), [1e3, 1e10, np.finfo(dtype).max, np.inf]]
    x = np.concatenate([np.asarray(p, dtype) for p in parts])
    return np.concatenate([x, -x])


def floats_around(points: np.ndarray, count: int) -> np.ndarray:
    """The `count` floats either side of each point (positive), and the points."""
    bits = np.dtype(f"i{points.dtype.itemsize}")
    near = points.view(bits)[:, None] + np.arange(-count, count + 1, dtype=bits)
    return near.ravel().view(points.dtype)


def ulps_from(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in ulps of ref's binade in got's dtype (ref: long doubles)."""
    near = np.abs(ref).astype(got.dtype)  # the ulp is the spacing below |ref|, so round down
    below = np.where(near > np.abs(ref), np.nextafter(near, near.dtype.type(0)), near)
    return np.abs(got.astype(np.longdouble) - ref) / np.spacing(below).astype(np.longdouble)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_within_bound_on_a_dense_sweep(backend, dtype):
    x = tanh_sweep(dtype)
    got = backend(rnp.tanh)(x)
    assert got.dtype == dtype
    assert ulps_from(got, np.tanh(x.astype(np.longdouble))).max() <= TANH_BOUND


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_tanh_special_values(backend, dtype):
    """NaN stays NaN, ±0 keep their sign, a subnormal is its own tanh, and from a little
    past where tanh rounds to 1 (to ±inf) the result is ±1 exactly."""
    tiny = np.finfo(dtype).smallest_subnormal
    big = 19.1 if dtype == np.float64 else 10.0
    x = np.array([np.nan, 0.0, -0.0, tiny, -tiny, 4 * tiny, big, -big, 1e4, np.inf, -np.inf],
                 dtype)
    want = np.array([np.nan, 0.0, -0.0, tiny, -tiny, 4 * tiny, 1, -1, 1, 1, -1], dtype)
    got = backend(rnp.tanh)(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_same_bits_on_every_path(dtype):
    """An element gets the same bits from the vectorized loop's body, from its scalar
    remainder, from one value alone, and from a lane of a vmapped iterate (in a lane
    block's vectors, or past the last block one lane at a time)."""
    x = np.random.default_rng(3).choice(tanh_sweep(dtype), 1003)  # a remainder, lanes too
    tanh = rune.jit(rnp.tanh)
    got = tanh(x)
    shift = 15  # elements of the remainder move into the body, and back
    np.testing.assert_array_equal(tanh(np.roll(x, shift)), np.roll(got, shift))
    np.testing.assert_array_equal([tanh(v) for v in x[-40:]], got[-40:])
    step = lambda c: (rnp.tanh(c[0]), c[1] + 1)  # noqa: E731
    one_step = lambda v: rune.iterate(step, (v, np.int64(0)), until=lambda c: c[1] >= 1,  # noqa: E731
                                      max_steps=1)[0]
    np.testing.assert_array_equal(rune.jit(rune.vmap(one_step))(x), got)
