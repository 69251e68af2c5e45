"""The inverse trigonometric and hyperbolic functions of complex values, on their real
and imaginary parts (x, y): the rules complex_math.RULES names for arcsinh, arcsin,
arccos, arccosh, arctanh and arctan.

The method is NumPy's (npy_math_complex.c, from FreeBSD's catrig.c): Hull, Fairgrieve
and Tang, "Implementing the complex arcsine and arccosine functions using exception
handling" (ACM TOMS 23(3), 1997), with

    casinh(x + iy) = sign(x) log(A + sqrt(A² - 1)) + i asin(B),
    A = (|z + i| + |z - i|) / 2,  B = y / A,

log1p(A - 1 + ...) near A = 1 and atan2 in place of asin near |B| = 1, where A - 1 and
A - y come from f(a, b) = (hypot(a, b) - b) / 2 without cancellation; and catanh by
Kahan's formulas ("Branch cuts for complex elementary functions", 1987). C's branches
become selects: every lane computes every case, and the conditions pick, in the C
code's order of precedence (the last select the strongest). The sign of a zero part
decides the side of a branch cut (C99 Annex G), through copysign.

casin(z) = -i casinh(iz) and catan(z) = -i catanh(iz), taken as the parts swapped
before and after (NumPy's way, exact); cacosh comes from cacos.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ....ops import elementwise as ew
from ....trace import type_of_value

PIO2_LO = {np.float32: 7.5497899549e-9, np.float64: 6.1232339957367659e-17}
LN2 = float(np.log(2.0))


class Limits(NamedTuple):
    """The thresholds of the algorithms for one real dtype (catrig.c's constants)."""

    eps: float  # the machine epsilon
    recip_eps: float  # past this a part dominates: the asymptotic forms
    sqrt_min: float  # below this a square underflows
    big: float  # past this, hypot may overflow: the parts are divided by e first

    @staticmethod
    def of(x: Any) -> "Limits":
        info = np.finfo(type_of_value(x).dtype)
        eps = float(info.eps)
        return Limits(eps, 1 / eps, float(np.sqrt(info.tiny)), float(info.max) / 2)


def _c(value: float, like: Any) -> Any:
    return ew.const(value, like)


def _sign_of(x: Any) -> Any:
    """±1 with x's sign bit (so -0.0 gives -1)."""
    return ew.copysign(_c(1.0, x), x)


def _half_gap(a: Any, b: Any, h: Any) -> Any:
    """f(a, b) = (hypot(a, b) - b) / 2 for a >= 0, h = hypot(a, b), without cancellation
    for b > 0: a² / (h + b) / 2."""
    fraction = ew.div(ew.div(ew.mul(a, a), ew.add(h, b)), 2.0)
    exact = ew.select(ew.eq(b, 0.0), ew.div(a, 2.0), fraction)
    return ew.select(ew.lt(b, 0.0), ew.div(ew.sub(h, b), 2.0), exact)


class Hard(NamedTuple):
    """What `_hard_work` gives: the real part of casinh (rx), and the imaginary part's
    asin(B) where B is usable, else atan2(new_y, sqrt_a2my2)."""

    rx: Any
    usable: Any
    b: Any
    sqrt_a2my2: Any
    new_y: Any


def _real_part(x: Any, y: Any, a: Any, r: Any, s: Any, eps: float) -> Any:
    """Re casinh(x + iy) = log(A + sqrt(A² - 1)) for x, y >= 0 below 1/eps, by
    log1p((A - 1) + sqrt((A - 1)(A + 1))) for A < 10 (A - 1 = f(x, 1 + y) + f(x, 1 - y))
    and its limits where x is negligible beside |y - 1|."""
    one = _c(1.0, x)
    am1 = ew.add(_half_gap(x, ew.add(one, y), r), _half_gap(x, ew.sub(one, y), s))
    near = ew.log1p(ew.add(am1, ew.sqrt(ew.mul(am1, ew.add(a, 1.0)))))
    ym1 = ew.sub(y, 1.0)
    below = ew.div(x, ew.sqrt(ew.mul(ew.sub(one, y), ew.add(one, y))))
    above = ew.log1p(ew.add(ym1, ew.sqrt(ew.mul(ym1, ew.add(y, 1.0)))))
    small = ew.select(ew.ge(x, ew.mul(ew.abs(ym1), eps)), near,
                      ew.select(ew.lt(y, 1.0), below, above))
    at_one = ew.logical_and(ew.eq(y, 1.0), ew.lt(x, eps * eps / 128))
    small = ew.select(at_one, ew.sqrt(x), small)
    far = ew.log(ew.add(a, ew.sqrt(ew.sub(ew.mul(a, a), 1.0))))
    return ew.select(ew.lt(a, 10.0), small, far)


def _hard_work(x: Any, y: Any) -> Hard:
    """catrig.c's do_hard_work for x, y >= 0 below 1/eps."""
    lim = Limits.of(x)
    eps = lim.eps
    r, s = ew.hypot(x, ew.add(y, 1.0)), ew.hypot(x, ew.sub(y, 1.0))  # |z + i|, |z - i|
    a = ew.max(ew.div(ew.add(r, s), 2.0), _c(1.0, x))  # A >= 1, rounding aside
    rx = _real_part(x, y, a, r, s, eps)
    b = ew.div(y, a)
    # near |B| = 1: sqrt(A² - y²) = sqrt((A - y)(A + y)), A - y = f(x, y + 1) + f(x, y - 1)
    ym1 = ew.sub(y, 1.0)
    amy = ew.add(_half_gap(x, ew.add(y, 1.0), r), _half_gap(x, ym1, s))
    root = ew.sqrt(ew.mul(amy, ew.add(a, y)))
    scale = 4 / eps / eps  # keeps the tiny root of the third case from underflowing
    scaled = ew.div(ew.mul(ew.mul(x, scale), y), ew.sqrt(ew.mul(ew.add(y, 1.0), ym1)))
    third = ew.logical_and(ew.lt(x, ew.mul(ew.abs(ym1), eps)), ew.gt(y, 1.0))
    root = ew.select(ew.ge(x, ew.mul(ew.abs(ym1), eps)), root,
                     ew.select(ew.gt(y, 1.0), scaled,
                               ew.sqrt(ew.mul(ew.sub(_c(1.0, y), y), ew.add(y, 1.0)))))
    at_one = ew.logical_and(ew.eq(y, 1.0), ew.lt(x, eps / 128))
    root = ew.select(at_one, ew.mul(ew.sqrt(x), ew.sqrt(ew.div(ew.add(a, y), 2.0))), root)
    new_y = ew.select(third, ew.mul(y, scale), y)
    # y / A might underflow: atan2 of the rescaled parts instead
    tiny = ew.lt(y, 4 * lim.sqrt_min)
    root = ew.select(tiny, ew.mul(a, 2 / eps), root)
    new_y = ew.select(tiny, ew.mul(y, 2 / eps), new_y)
    usable = ew.logical_and(ew.logical_not(tiny), ew.le(b, 0.6417))
    return Hard(rx, usable, b, root, new_y)


def _log_large(x: Any, y: Any) -> tuple:
    """log(x + iy) for |x + iy| past 1/eps (or infinite): past half the largest float the
    parts are divided by e, lest hypot overflow."""
    lim = Limits.of(x)
    e = float(np.e)
    big = ew.gt(ew.max(ew.abs(x), ew.abs(y)), lim.big)
    scaled = ew.add(ew.log(ew.hypot(ew.div(x, e), ew.div(y, e))), 1.0)
    return ew.select(big, scaled, ew.log(ew.hypot(x, y))), ew.arctan2(y, x)


def _large(x: Any, y: Any) -> Any:
    lim = Limits.of(x)
    return ew.logical_or(ew.gt(ew.abs(x), lim.recip_eps), ew.gt(ew.abs(y), lim.recip_eps))


def _tiny(x: Any, y: Any, bound: float) -> Any:
    return ew.logical_and(ew.lt(ew.abs(x), bound), ew.lt(ew.abs(y), bound))


def _pick(cases: list, default: tuple) -> tuple:
    """Parts by cases: (condition, (re, im)) pairs, the first that holds wins."""
    re, im = default
    for cond, (r, i) in reversed(cases):
        re, im = ew.select(cond, r, re), ew.select(cond, i, im)
    return re, im


def _either_nan(x: Any, y: Any) -> Any:
    return ew.logical_or(ew.isnan(x), ew.isnan(y))


def _is_inf(x: Any) -> Any:
    return ew.eq(ew.abs(x), np.inf)


def casinh(x: Any, y: Any) -> tuple:
    """asinh(x + iy), as (re, im)."""
    ax, ay = ew.abs(x), ew.abs(y)
    nan = _c(np.nan, x)
    hard = _hard_work(ax, ay)
    ry = ew.select(hard.usable, ew.arcsin(hard.b), ew.arctan2(hard.new_y, hard.sqrt_a2my2))
    # large: sign(x) log(sign(x) z) + ln 2 (the sign of x is its sign bit)
    wx, wy = _log_large(ax, ew.mul(y, _sign_of(x)))
    large = (ew.copysign(ew.add(wx, LN2), x), ew.copysign(wy, y))
    return _pick([
        (ew.logical_and(_either_nan(x, y), _is_inf(x)), (x, ew.add(y, y))),
        # C99 leaves the sign of this infinity open: glibc's (NumPy's on Linux) is +
        (ew.logical_and(_either_nan(x, y), _is_inf(y)), (ew.abs(y), ew.add(x, x))),
        (ew.logical_and(ew.isnan(x), ew.eq(y, 0.0)), (ew.add(x, x), y)),
        (_either_nan(x, y), (nan, nan)),
        (_large(x, y), large),
        (_tiny(x, y, np.sqrt(6 * Limits.of(x).eps) / 4), (x, y)),
    ], (ew.copysign(hard.rx, x), ew.copysign(ry, y)))


def cacos(x: Any, y: Any) -> tuple:
    """acos(x + iy), as (re, im)."""
    ax, ay = ew.abs(x), ew.abs(y)
    nan, inf = _c(np.nan, x), _c(np.inf, x)
    hard = _hard_work(ay, ax)  # its rx is -Im cacos, its B the real part's cosine
    rx = ew.select(hard.usable, ew.arccos(ew.copysign(hard.b, x)),
                   ew.arctan2(hard.sqrt_a2my2, ew.copysign(hard.new_y, x)))
    ry = ew.copysign(hard.rx, ew.neg(y))
    wx, wy = _log_large(x, y)
    large = (ew.abs(wy), ew.copysign(ew.add(wx, LN2), ew.neg(y)))
    pio2 = _c(np.pi / 2, x)
    lo = _c(PIO2_LO[type_of_value(x).dtype.type], x)
    either = _either_nan(x, y)
    return _pick([
        (ew.logical_and(either, _is_inf(x)), (ew.add(y, y), ew.neg(inf))),
        (ew.logical_and(either, _is_inf(y)), (ew.add(x, x), ew.neg(y))),
        (ew.logical_and(either, ew.eq(x, 0.0)), (pio2, ew.add(y, y))),
        (either, (nan, nan)),
        (_large(x, y), large),
        (ew.logical_and(ew.eq(x, 1.0), ew.eq(y, 0.0)), (_c(0.0, x), ew.neg(y))),
        (_tiny(x, y, np.sqrt(6 * Limits.of(x).eps) / 4),
         (ew.sub(pio2, ew.sub(x, lo)), ew.neg(y))),
    ], (rx, ry))


def cacosh(x: Any, y: Any) -> tuple:
    """acosh(x + iy) = ±i acos(x + iy), the sign making the real part >= 0; at ±0 + NaN i,
    NaN + pi/2 i (glibc's, so NumPy's on Linux; FreeBSD's gives NaN + NaN i)."""
    rx, ry = cacos(x, y)
    return _pick([
        (ew.logical_and(ew.eq(x, 0.0), ew.isnan(y)), (y, _c(np.pi / 2, x))),
        (ew.logical_and(ew.isnan(rx), ew.isnan(ry)), (ry, rx)),
        (ew.isnan(rx), (ew.abs(ry), rx)),
        (ew.isnan(ry), (ry, ry)),
    ], (ew.abs(ry), ew.copysign(rx, y)))


def _real_part_reciprocal(x: Any, y: Any) -> Any:
    """Re(1 / (x + iy)) = x / (x² + y²) for |x + iy| past 1/eps, the parts scaled by the
    larger lest the squares overflow (±0 with an infinite part)."""
    m = ew.max(ew.abs(x), ew.abs(y))
    sx, sy = ew.div(x, m), ew.div(y, m)
    r = ew.div(ew.div(sx, ew.add(ew.mul(sx, sx), ew.mul(sy, sy))), m)
    return ew.select(_is_inf(m), ew.copysign(_c(0.0, x), x), r)


def _catanh_parts(ax: Any, ay: Any, eps: float) -> tuple:
    """Kahan's catanh for x, y >= 0: (log1p(4x / ((x - 1)² + y²)) / 4,
    atan2(2y, (1 - x)(1 + x) - y²) / 2), and their forms at x = 1 and for tiny y."""
    one = _c(1.0, ax)
    xm1 = ew.sub(ax, 1.0)
    ratio = ew.div(ew.mul(ax, 4.0), ew.add(ew.mul(xm1, xm1), ew.mul(ay, ay)))
    rx = ew.div(ew.log1p(ratio), 4.0)
    at_one = ew.eq(ax, 1.0)
    rx = ew.select(ew.logical_and(at_one, ew.lt(ay, eps)),
                   ew.div(ew.sub(_c(LN2, ax), ew.log(ay)), 2.0), rx)
    across = ew.mul(ew.sub(one, ax), ew.add(one, ax))
    ry = ew.select(ew.lt(ay, eps), across, ew.sub(across, ew.mul(ay, ay)))
    ry = ew.arctan2(ew.mul(ay, 2.0), ry)
    ry = ew.div(ew.select(at_one, ew.arctan2(_c(2.0, ay), ew.neg(ay)), ry), 2.0)
    return rx, ry


def catanh(x: Any, y: Any) -> tuple:
    """atanh(x + iy), as (re, im)."""
    lim = Limits.of(x)
    ax, ay = ew.abs(x), ew.abs(y)
    nan, pio2 = _c(np.nan, x), _c(np.pi / 2, x)
    rx, ry = _catanh_parts(ax, ay, lim.eps)
    either = _either_nan(x, y)
    zero_x = ew.copysign(_c(0.0, x), x)
    return _pick([
        (ew.logical_and(ew.eq(y, 0.0), ew.le(ax, 1.0)), (ew.arctanh(x), y)),
        (ew.eq(x, 0.0), (x, ew.arctan(y))),
        (ew.logical_and(either, _is_inf(x)), (zero_x, ew.add(y, y))),
        (ew.logical_and(either, _is_inf(y)), (zero_x, ew.copysign(pio2, y))),
        (either, (nan, nan)),
        (_large(x, y), (_real_part_reciprocal(x, y), ew.copysign(pio2, y))),
        (_tiny(x, y, np.sqrt(3 * lim.eps) / 2), (x, y)),
    ], (ew.copysign(rx, x), ew.copysign(ry, y)))


def casin(x: Any, y: Any) -> tuple:
    """asin(x + iy) = i conj(casinh(i conj(z))): the parts swapped before and after."""
    re, im = casinh(y, x)
    return im, re


def catan(x: Any, y: Any) -> tuple:
    """atan(x + iy) = i conj(catanh(i conj(z))): the parts swapped before and after."""
    re, im = catanh(y, x)
    return im, re
