"""Regression: the eager (NumPy) fma emulation gave NaN for a factor above 2^996 (its
Veltkamp splitting overflowed) and for products that overflow, and lost bits where the
product's error is subnormal; +0 for -0 * 1 + -0 (found by issue 37's gammaln work).
Compiled code uses the CPU's fused multiply-add: both must give a * b + c rounded once."""

import math
from fractions import Fraction

import numpy as np

import rune_jit as rune
from rune_jit._src.ops.elementwise import fma


def exactly(a: float, b: float, c: float) -> float:
    e = Fraction(a) * Fraction(b) + Fraction(c)
    if e == 0:
        return a * b + c
    try:
        return float(e)
    except OverflowError:
        return math.inf if e > 0 else -math.inf


def test_fma_is_rounded_once_over_the_whole_exponent_range():
    rng = np.random.default_rng(0)
    a, b, c = (np.exp(rng.uniform(-700, 700, 4000)) * rng.choice([-1, 1], 4000)
               for _ in range(3))
    a = np.concatenate([a, [1.5e300, 1.7e308, 1e308, 1e-200, 3e-160, -0.0]])
    b = np.concatenate([b, [0.5, 0.5, 10.0, 1e-130, 3e-160, 1.0]])
    c = np.concatenate([c, [0.0, 1e300, -1e308, 0.0, 1e-320, -0.0]])
    want = np.array([exactly(*v) for v in zip(a, b, c)])
    for got in (fma(a, b, c), rune.jit(fma)(a, b, c)):
        assert np.array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
