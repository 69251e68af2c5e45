"""Errors in ulps against a correctly rounded reference (mpmath at high precision): the
oracle of the vector math's accuracy (backend/cpu/vecmath, docs/accuracy.md)."""

from __future__ import annotations

from typing import Callable

import mpmath
import numpy as np

PRECISION = 200  # bits: far more than any float64 result needs to round correctly


def correctly_rounded(fn: Callable, *xs: np.ndarray, dtype=np.float64) -> np.ndarray:
    """`fn` (an mpmath function) of each element of `xs`, rounded to `dtype` once.
    Non-finite or out-of-domain results come back as NaN (compare those with NumPy's)."""
    out = np.empty(np.broadcast(*xs).shape, np.float64)
    with mpmath.workprec(PRECISION):
        for i, args in enumerate(zip(*(np.broadcast_to(x, out.shape).ravel() for x in xs))):
            try:
                value = fn(*(mpmath.mpf(float(a)) for a in args))
                out.flat[i] = float(mpmath.re(value)) if mpmath.im(value) == 0 else np.nan
            except (ValueError, ZeroDivisionError, OverflowError):
                out.flat[i] = np.nan
    return out.astype(dtype)


def ulp_errors(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of `exact` (in got's dtype; where exact is
    subnormal, the smallest subnormal), elementwise; 0 where both are equal (inf, NaN)."""
    got, exact = np.asarray(got), np.asarray(exact)
    ulp = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - exact.astype(np.float64)) / ulp
    same = (got == exact) | (np.isnan(got) & np.isnan(exact))
    return np.where(same, 0.0, err)

