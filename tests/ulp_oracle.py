"""Errors in ulps against a correctly rounded reference (mpmath at high precision): the
oracle of the vector math's accuracy (backend/cpu/vecmath, docs/accuracy.md).

mpmath costs about 20 µs a point, so a million points take 20 s. Given NumPy's function
too (`near=`), the reference is computed in long double first (x87's 64-bit significand
here: glibc's long double functions are within a few of its ulps, 2^-11 of a double's)
and mpmath redoes only the points whose rounding that error could change: near a
midpoint of the target's floats, and the zeros, infinities and NaNs. mpmath itself
computes each point to FIRST bits, and to PRECISION only where those leave the rounding
in doubt (Ziv's strategy). The result is the same array, bit for bit
(test_math_functions.py holds both)."""

from __future__ import annotations

from typing import Any, Callable

import mpmath
import numpy as np

PRECISION = 200  # bits: far more than any float64 result needs to round correctly
FIRST = 128  # bits computed first (mpmath's sin takes 8 µs so, 50 at PRECISION): enough
# to round all but the points within 2^-40 of a spacing of a midpoint (_decided)


# long double's error, at most, in its own ulps (glibc documents at most a few)
MARGIN_LONG_ULPS = 2.0 ** 5


def correctly_rounded(fn: Callable, *xs: np.ndarray, dtype=np.float64,
                      near: Callable | None = None) -> np.ndarray:
    """`fn` (an mpmath function) of each element of `xs`, rounded to `dtype` once.
    Non-finite or out-of-domain results come back as NaN (compare those with NumPy's).
    `near`: NumPy's function for the same values, which makes it fast (see above)."""
    if near is None or np.finfo(np.longdouble).nmant < 63:
        return _by_mpmath(fn, *xs, dtype=dtype)
    shape = np.broadcast(*xs).shape
    xs = [np.broadcast_to(x, shape).ravel() for x in xs]
    with np.errstate(all="ignore"):
        wide = near(*(x.astype(np.longdouble) for x in xs))
        out = wide.astype(dtype)
        size = np.abs(out)
        above = np.spacing(size).astype(np.longdouble)
        below = np.spacing(np.nextafter(size, 0)).astype(np.longdouble)  # half at 2^k
        t = np.where(out < 0, -1, 1) * wide - size  # from the result, away from zero
        margin = _margin(dtype) * above
        near_midpoint = (np.abs(t - above / 2) <= margin) | (np.abs(t + below / 2) <= margin)
    redo = near_midpoint | ~np.isfinite(out) | (out == 0) | ~np.isfinite(wide)
    for x in xs:
        redo |= ~np.isfinite(x) | (x == 0)
    out[redo] = _by_mpmath(fn, *(x[redo] for x in xs), dtype=dtype)
    return out.reshape(shape)


def _margin(dtype) -> float:
    """MARGIN_LONG_ULPS in units of `dtype`'s last place: 2^-6 for float64, 2^-35 for
    float32 (whose redone points would otherwise be 3 % of all, at 20 µs each)."""
    spare = np.finfo(np.longdouble).nmant - np.finfo(dtype).nmant
    return MARGIN_LONG_ULPS * 2.0 ** -spare


def _by_mpmath(fn: Callable, *xs: np.ndarray, dtype) -> np.ndarray:
    out = np.empty(np.broadcast(*xs).shape, np.float64)
    for i, args in enumerate(zip(*(np.broadcast_to(x, out.shape).ravel() for x in xs))):
        args = [mpmath.mpf(float(a)) for a in args]
        rounded, value = _point(fn, args, dtype, FIRST)
        if value is None or not _decided(value, rounded, dtype):
            rounded, _ = _point(fn, args, dtype, PRECISION)
        out.flat[i] = rounded
    return out.astype(dtype)  # exact: each value is one of dtype's already


def _point(fn: Callable, args: list, dtype, bits: int) -> tuple[float, Any]:
    """fn(*args) at `bits` of precision, rounded to dtype, and the value itself (None
    where fn has no real value: NaN)."""
    with mpmath.workprec(bits):
        try:
            value = fn(*args)
        except (ValueError, ZeroDivisionError, OverflowError):
            return np.nan, None
        if mpmath.im(value) != 0:
            return np.nan, None
        value = mpmath.re(value)
        return _rounded(value, dtype), value


def _decided(value, rounded: float, dtype) -> bool:
    """Whether `value`, computed to FIRST bits, is so far from a midpoint of dtype's
    floats (more than 2^-40 of a spacing: its error is below 2^-60) that any more precise
    value rounds to `rounded` too. Zeros, infinities: PRECISION decides."""
    if not mpmath.isfinite(value) or rounded == 0 or not np.isfinite(rounded):
        return False
    scalar = np.dtype(dtype).type
    r = scalar(abs(rounded))
    below = abs(value) < abs(rounded)  # then the spacing below r (half above at 2^k)
    spacing = np.spacing(np.nextafter(r, scalar(0)) if below else r)
    with mpmath.workprec(FIRST):
        t = abs(value - mpmath.mpf(rounded)) / mpmath.mpf(float(spacing))
        return t < 0.5 - mpmath.ldexp(1, -40)


def _rounded(value, dtype) -> float:
    """An mpmath value rounded once to `dtype`, as a float (mpmath's own float() rounds
    to 53 bits, then to a subnormal's fewer: twice)."""
    if not mpmath.isfinite(value):
        return float(value)
    fi = np.finfo(dtype)
    if abs(value) < mpmath.ldexp(1, fi.minexp):  # a multiple of the smallest subnormal
        return float(mpmath.nint(mpmath.ldexp(value, fi.nmant - fi.minexp))) \
            * float(fi.smallest_subnormal)
    with mpmath.workprec(fi.nmant + 1):
        return float(+value)  # +value rounds to dtype's bits, to nearest even


def ulp_errors(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of `exact` (in got's dtype; where exact is
    subnormal, the smallest subnormal), elementwise; 0 where both are equal (inf, NaN)."""
    got, exact = np.asarray(got), np.asarray(exact)
    ulp = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - exact.astype(np.float64)) / ulp
    same = (got == exact) | (np.isnan(got) & np.isnan(exact))
    return np.where(same, 0.0, err)

