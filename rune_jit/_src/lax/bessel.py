"""jax.lax's exponentially scaled modified Bessel functions, bessel_i0e and bessel_i1e,
as compositions of elementwise primitives (so compiled, and differentiated, as they are).

Below |x| = 25 each is its power series, whose terms are all positive (no cancellation:
a relative error of a few ulp); above, its asymptotic expansion in 1/x, whose terms
shrink faster than 2**-56 by the 26th there. The scaling by exp(-|x|) keeps both finite
for every x.
"""

from __future__ import annotations

import math
from typing import Any

from ..ops import elementwise as ew
from .operands import FLOAT, operands

ArrayLike = Any
Array = Any
SWITCH = 25.0
SERIES_TERMS = 60  # (25²/4)**60 / (60!)² is below 2**-60 of I0(25)
ASYMPTOTIC_TERMS = 26


def _series(order: int, q: Any) -> Any:
    """I_order(x) / (x/2)**order = sum_k q**k / (k! (k + order)!) for q = x²/4, nested as
    (1 + q/(1 (1+order)) (1 + q/(2 (2+order)) (1 + ...))) / order!: no coefficient so
    small that float32 would round it to a subnormal."""
    p = ew.const(1.0, q)
    for k in range(SERIES_TERMS - 1, 0, -1):
        p = ew.add(ew.const(1.0, q), ew.mul(p, ew.mul(q, ew.const(1.0 / (k * (k + order)), q))))
    return p if order < 2 else ew.mul(p, ew.const(1.0 / math.factorial(order), q))


def _asymptotic(order: int) -> list[float]:
    """exp(-x) I_order(x) sqrt(2 pi x) = sum_k c_k / x**k, with c_k = (-1)**k
    prod_{j<=k} (4 order² - (2j - 1)²) / (k! 8**k)."""
    coefs, c = [], 1.0
    for k in range(ASYMPTOTIC_TERMS):
        coefs.append(c)
        c *= -(4 * order * order - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return coefs


ASYMPTOTIC = {0: _asymptotic(0), 1: _asymptotic(1)}


def _horner(coefs: list[float], t: Any) -> Any:
    p = ew.const(coefs[-1], t)
    for c in reversed(coefs[:-1]):
        p = ew.add(ew.mul(p, t), ew.const(c, t))
    return p


def _scaled(order: int, x: Any) -> Any:
    """exp(-|x|) I_order(x) (I1 is odd: its series is taken in x, not |x|, so that its
    derivative at 0 is 1/2)."""
    a = ew.abs(x)
    # each branch on the arguments it is made for
    small = ew.max(ew.min(x, ew.const(SWITCH, x)), ew.const(-SWITCH, x))
    large = ew.max(a, ew.const(SWITCH, a))
    half = ew.mul(small, ew.const(0.5, small))
    series = _series(order, ew.square(half))
    if order:
        series = ew.mul(series, half)
    series = ew.mul(series, ew.exp(ew.neg(ew.abs(small))))
    root = ew.sqrt(ew.mul(large, ew.const(2 * math.pi, large)))
    expansion = ew.div(_horner(ASYMPTOTIC[order], ew.div(ew.const(1.0, large), large)), root)
    if order:
        expansion = ew.mul(expansion, ew.sign(x))
    return ew.select(ew.le(a, ew.const(SWITCH, a)), series, expansion)


def bessel_i0e(x: ArrayLike) -> Array:
    """exp(-|x|) I0(x), the modified Bessel function of order 0, scaled.

    >>> print(np.round(bessel_i0e(np.array([0.0, 1.0, -30.0])), 6))
    [1.       0.46576  0.073146]
    """
    (x,) = operands([x], FLOAT, "lax.bessel_i0e")
    return _scaled(0, x)


def bessel_i1e(x: ArrayLike) -> Array:
    """exp(-|x|) I1(x), the modified Bessel function of order 1, scaled (odd in x).

    >>> print(np.round(bessel_i1e(np.array([0.0, 1.0, -30.0])), 6))
    [ 0.        0.20791  -0.071916]
    """
    (x,) = operands([x], FLOAT, "lax.bessel_i1e")
    return _scaled(1, x)
