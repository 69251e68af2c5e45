"""Double-double arithmetic as compositions of elementwise operations (float64 operands):
the error-free transforms TwoSum and TwoProd (Knuth; Dekker's product from one fused
multiply-add, Muller et al., "Handbook of Floating-Point Arithmetic", ch. 4) and a
logarithm with about 2^-60 relative error as hi + lo, for gammaln and digamma
(rune_jit/_src/scipy/lgamma.py, docs/accuracy.md). Each is a few vector instructions in
compiled code (no call per element) and the same operations in NumPy eagerly.

    >>> import numpy as np
    >>> hi, lo = log_dd(np.float64(10.0))
    >>> print(float(hi), abs(float(lo)) < 2.0 ** -50)
    2.302585092994046 True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as rnp
from ..ops import elementwise as ew

I64 = np.dtype(np.int64)
SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # sqrt(2)/2's bits
ONE_BITS = 0x3FF0000000000000
MANTISSA = (1 << 52) - 1
LN2 = (0.6931471803691238, 1.9082149292705877e-10)  # hi with 32 bits (k hi exact) + lo
# 2 atanh(s) = 2 s + s^3 Q(s^2), Q(z) = sum 2 z^j / (2j + 3), highest power first: 11
# terms leave out 2^-62 of the sum at |s| = 0.1716 (a Chebyshev fit needs 8: the vector
# log's, backend/cpu/codegen/vecmath/log.py, which the library layer does not import)
ATANH_Q = [2.0 / (2 * j + 3) for j in range(10, -1, -1)]


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """(s, e): s = a + b rounded, e its rounding error (s + e = a + b exactly)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_prod(a: Any, b: Any) -> tuple[Any, Any]:
    """(p, e): p = a b rounded, e = fma(a, b, -p) its rounding error, exactly."""
    p = a * b
    return p, ew.fma(a, b, -p)


def fma_horner(t: Any, coefs) -> Any:
    """The polynomial with `coefs` (highest power first) at t, a fused multiply-add a step."""
    p = coefs[0] + 0.0 * t
    for coef in coefs[1:]:
        p = ew.fma(p, t, np.float64(coef) if isinstance(coef, float) else coef)
    return p


def log_dd(x: Any) -> tuple[Any, Any]:
    """log(x) as hi + lo, for normal finite x > 0: the vector log's own method (Cody and
    Waite's x = 2^k (1 + f) reduction, 1 + f in [sqrt(2)/2, sqrt(2)), and 2 atanh(s) for
    s = f / (2 + f) carried as a double-double: backend/cpu/codegen/vecmath/log.py), with
    the sum k log 2 + log(1 + f) left unrounded."""
    bits = ew.bitcast_convert(x, I64) + np.int64(ONE_BITS - SQRT_HALF_BITS)
    m = ew.bitcast_convert(rnp.bitwise_and(bits, np.int64(MANTISSA))
                           + np.int64(SQRT_HALF_BITS), np.float64)
    k = ew.convert(rnp.right_shift(bits, np.int64(52)) - np.int64(1023), np.float64)
    f = m - 1.0  # exact: m is within a factor 2 of 1 (Sterbenz)
    d = 2.0 + f
    d_err = (2.0 - d) + f  # exact: |f| < 2
    s = f / d
    # f / (d + d_err) = s + t: the division's remainder is exact from a fused multiply-add
    t = (ew.fma(-s, d, f) - s * d_err) / d
    z = s * s
    tail = 2.0 * t + s * z * fma_horner(z, ATANH_Q)
    hi, err = two_sum(k * LN2[0], 2.0 * s)  # k log2's hi is exact (32 bits)
    return fast_two_sum(hi, err + (tail + k * LN2[1]))  # |hi| >= 0.34 or k = 0


def fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """(s, e): s = a + b rounded and its error, for |a| >= |b| (or a = 0) (Dekker)."""
    s = a + b
    return s, b - (s - a)


def centered(index: Any, t: Any, centers) -> tuple[Any, Any]:
    """f(c + t) as hi + lo for c the center `index` picks, |t| <= 1/4, from each center's
    (f(c), f'(c), P) (the first two double-doubles): f(c) + f'(c) t (the product exact)
    + t² P(t). Every center is evaluated and the results selected: coefficients selected
    lane by lane keep LLVM from vectorizing the loop (8 times slower)."""
    his, los = [], []
    for (v_hi, v_lo), (d_hi, d_lo), coefs in centers:
        p_hi, p_err = two_prod(t, np.float64(d_hi))
        hi, err = two_sum(np.float64(v_hi), p_hi)
        his.append(hi)
        los.append(err + (p_err + (t * d_lo + v_lo + t * t * fma_horner(t, coefs))))
    hi, lo = his[-1], los[-1]
    for i in range(len(centers) - 2, -1, -1):
        hi, lo = rnp.where(index == i, his[i], hi), rnp.where(index == i, los[i], lo)
    return hi, lo
