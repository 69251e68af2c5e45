"""Errors in ulps against a correctly rounded reference (mpmath at high precision): the
oracle of the vector math's accuracy (backend/cpu/vecmath, docs/accuracy.md).

mpmath costs about 20 µs a point, so a million points take 20 s. Given NumPy's function
too (`near=`), the reference is computed in long double first (x87's 64-bit significand
here: glibc's long double functions are within a few of its ulps, 2^-11 of a double's)
and mpmath redoes only the points whose rounding that error could change: near a
midpoint of the target's floats, near the overflow and underflow thresholds, NaNs, and
the arguments 0, inf and NaN. mpmath itself computes each point to FIRST bits, and to
PRECISION only where those leave the rounding in doubt (Ziv's strategy). The result is
the same array, bit for bit (test_math_functions.py holds both)."""

from __future__ import annotations

from typing import Any, Callable

import mpmath
from mpmath import libmp
import numpy as np

PRECISION = 200  # bits: far more than any float64 result needs to round correctly
FIRST = 128  # bits computed first (mpmath's sin takes 8 µs so, 50 at PRECISION): enough
# to round all but the points within 2^-40 of a spacing of a midpoint (_decided)


# long double's error, at most, in its own ulps (glibc documents at most a few)
MARGIN_LONG_ULPS = 2.0 ** 5


def correctly_rounded(fn: Callable, *xs: np.ndarray, dtype=np.float64,
                      near: Callable | None = None, got: np.ndarray | None = None
                      ) -> np.ndarray:
    """`fn` (an mpmath function) of each element of `xs`, rounded to `dtype` once.
    Non-finite or out-of-domain results come back as NaN (compare those with NumPy's).
    `near`: NumPy's function for the same values, which makes it fast (see above).
    `got`: the results a test checks to within 1 ulp. Where long double leaves the
    rounding in doubt between two neighbouring floats and `got` is one of them, `got`
    is returned for it (within 1 ulp of either, the verdict is the same) and mpmath is
    not asked; the array is then not the correctly rounded one at those points."""
    if near is None or np.finfo(np.longdouble).nmant < 63:
        return _by_mpmath(fn, *xs, dtype=dtype)
    shape = np.broadcast(*xs).shape
    xs = [np.broadcast_to(x, shape).ravel() for x in xs]
    with np.errstate(all="ignore"):
        wide = near(*(x.astype(np.longdouble) for x in xs))
        out = wide.astype(dtype)
        doubt = _in_doubt(wide, out, dtype)
        if got is not None:
            got = np.broadcast_to(got, shape).ravel()
            settled = _settled_by(got, out, doubt)
            out[settled] = got[settled]
            doubt = np.where(settled, 0, doubt)
    redo = (doubt != 0) | ((~np.isfinite(out) | (out == 0)) & ~_beyond(wide, dtype)) \
        | np.isnan(wide)
    out[~redo & (out == 0)] = 0  # unsigned, as mpmath's zeros
    for x in xs:
        redo |= ~np.isfinite(x) | (x == 0)
    out[redo] = _by_mpmath(fn, *(x[redo] for x in xs), dtype=dtype)
    return out.reshape(shape)


def _in_doubt(wide: np.ndarray, out: np.ndarray, dtype) -> np.ndarray:
    """Where long double's value `wide`, rounded to `out`, is within its error of a
    midpoint of dtype's floats: 1 for the midpoint away from zero, -1 toward it, else 0."""
    size = np.abs(out)
    above = np.spacing(size).astype(np.longdouble)
    below = np.spacing(np.nextafter(size, 0)).astype(np.longdouble)  # half at 2^k
    t = np.where(out < 0, -1, 1) * wide - size  # from the result, away from zero
    margin = _margin(dtype) * above
    return np.where(np.abs(t - above / 2) <= margin, 1,
                    np.where(np.abs(t + below / 2) <= margin, -1, 0))


def _beyond(wide: np.ndarray, dtype) -> np.ndarray:
    """Where long double's value overflows dtype or rounds to zero in it by a factor of 2
    to spare (±inf and 0 in long double too: past its far wider range)."""
    fi = np.finfo(dtype)
    size = np.abs(wide)
    return (size >= 2 * np.longdouble(fi.max)) | (size <= np.longdouble(fi.smallest_subnormal) / 4)


def _settled_by(got: np.ndarray, out: np.ndarray, doubt: np.ndarray) -> np.ndarray:
    """Where `got` is `out` or its neighbour across the midpoint in doubt, both finite
    and non-zero (an overflow or underflow threshold is mpmath's to decide)."""
    away = np.copysign(np.asarray(np.inf, out.dtype), out)
    other = np.nextafter(out, np.where(doubt > 0, away, 0))
    return (doubt != 0) & ((got == out) | (got == other)) & np.isfinite(other) & (other != 0)


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
    with np.errstate(over="ignore"):  # past dtype's range: inf, as rounding makes it
        return out.astype(dtype)  # else exact: each value is one of dtype's already


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
    value rounds to `rounded` too. Zeros, infinities: PRECISION decides. Exact, in
    integers at one power of two (mpmath's arithmetic cost as much as the function)."""
    r, top = abs(rounded), float(np.finfo(dtype).max)
    if not mpmath.isfinite(value) or r == 0 or not r <= top:
        return False  # (a float32 result past float32's range included)
    _, man, exp, _ = value._mpf_
    v, w = _scaled((man, exp), _pair(r))
    # below r, the spacing below it (half the one above at 2^k); at the largest float,
    # its own (the overflow threshold is the midpoint above it), not NumPy's inf
    scalar = np.dtype(dtype).type
    spacing = np.spacing(np.nextafter(scalar(r), scalar(0)) if v < w or r == top
                         else scalar(r))
    v, w, s = _scaled((man, exp), _pair(r), _pair(float(spacing)))
    return abs(v - w) << 40 < s * (2 ** 39 - 1)  # |v - w| / s < 1/2 - 2^-40


def _pair(x: float) -> tuple[int, int]:
    """(m, e) with x = m 2^e (a float's denominator is a power of two)."""
    num, den = x.as_integer_ratio()
    return num, 1 - den.bit_length()


def _scaled(*pairs: tuple[int, int]) -> list[int]:
    """The numbers m 2^e as integers over their smallest power of two."""
    low = min(e for _, e in pairs)
    return [m << (e - low) for m, e in pairs]


def _rounded(value, dtype) -> float:
    """An mpmath value rounded once to `dtype`, as a float (mpmath's own float() rounds
    to 53 bits, then to a subnormal's fewer: twice)."""
    if not mpmath.isfinite(value):
        return float(value)
    fi = np.finfo(dtype)
    _, _, exp, bc = value._mpf_
    if exp + bc <= fi.minexp:  # |value| < 2^minexp: a multiple of the smallest subnormal
        return float(mpmath.nint(mpmath.ldexp(value, fi.nmant - fi.minexp))) \
            * float(fi.smallest_subnormal)
    # to dtype's bits, to nearest even (exact as a float after that; past dtype's range,
    # a float that the caller's cast to dtype makes inf)
    return libmp.to_float(libmp.mpf_pos(value._mpf_, fi.nmant + 1, libmp.round_nearest))


def ulp_errors(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of `exact` (in got's dtype; where exact is
    subnormal, the smallest subnormal), elementwise; 0 where both are equal (inf, NaN)."""
    got, exact = np.asarray(got), np.asarray(exact)
    ulp = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - exact.astype(np.float64)) / ulp
    same = (got == exact) | (np.isnan(got) & np.isnan(exact))
    return np.where(same, 0.0, err)

