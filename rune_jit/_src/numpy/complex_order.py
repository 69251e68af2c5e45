"""NumPy's order of complex numbers: lexicographic, by the real parts, then the imaginary.

NumPy 2 (and jax.numpy) compare, take maxima and sort complex values in this order; a
NaN in either part makes a number larger than every other in a sort and wins a maximum
or a minimum (the first such number). Written over the real parts, so that compiled code
needs no rule of its own for it.

    CLT(a, b) = (ar < br and neither imag part is NaN) or (ar == br and ai < bi)

>>> import rune_jit.numpy as rnp
>>> print(rnp.less(np.array([1 + 2j, 1 + 1j]), np.array([1 + 1j, 2 + 0j])).tolist())
[False, True]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import complex_parts as cp
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops.gather import gather
from ..ops.shape import broadcast_in_dim, iota, moveaxis, reshape, transpose
from ..trace import type_of_value

INDEX = np.dtype(np.int64)
# the real comparison of the real parts, and of the imaginary parts when those are equal
_STRICT = {ew.lt: ew.lt, ew.le: ew.lt, ew.gt: ew.gt, ew.ge: ew.gt}


def compare(op: Any, a: Any, b: Any) -> Any:
    """op(a, b) (lt, le, gt or ge) of complex values of one shape, as NumPy orders them."""
    (ar, ai), (br, bi) = cp.parts(a), cp.parts(b)
    both = ew.logical_not(ew.logical_or(ew.isnan(ai), ew.isnan(bi)))
    by_real = ew.logical_and(_STRICT[op](ar, br), both)
    return ew.logical_or(by_real, ew.logical_and(ew.eq(ar, br), op(ai, bi)))


def sort_less(a: Any, b: Any) -> Any:
    """Whether a goes before b in NumPy's sort order of complex values (npysort's CLT):
    lexicographic, a NaN in a part placing the number after the others of its kind."""
    (ar, ai), (br, bi) = cp.parts(a), cp.parts(b)
    ai_num, bi_nan = ew.logical_not(ew.isnan(ai)), ew.isnan(bi)
    by_imag = ew.logical_or(ew.lt(ai, bi), ew.logical_and(bi_nan, ai_num))
    same_real = ew.logical_or(ew.eq(ar, br), ew.logical_and(ew.isnan(ar), ew.isnan(br)))
    return ew.select(ew.lt(ar, br), ew.logical_or(ai_num, bi_nan),
                     ew.select(ew.gt(ar, br), ew.logical_and(bi_nan, ai_num),
                               ew.select(same_real, by_imag, ew.isnan(br))))


def pick(op: Any, a: Any, b: Any) -> Any:
    """maximum (op ew.max) or minimum (ew.min) of complex values: a where a has a NaN or
    wins (ties to a), else b, as NumPy's loop."""
    ar, ai = cp.parts(a)
    wins = compare(ew.ge if op is ew.max else ew.le, a, b)
    keep = ew.logical_or(ew.logical_or(ew.isnan(ar), ew.isnan(ai)), wins)
    return ew.select(keep, a, b)


def arg_extremum(x: Any, axis: int, largest: bool, skip_nan: bool = False) -> Any:
    """The index along `axis` of the first largest (smallest) element, or of the first
    with a NaN, as NumPy's argmax (argmin) of complex values; with `skip_nan`, of the
    first largest (smallest) without a NaN, and 0 in a row of NaNs only (nanargmax)."""
    ndim = type_of_value(x).ndim
    x = moveaxis(x, axis % ndim, ndim - 1)
    re, im = cp.parts(x)
    nan = ew.logical_or(ew.isnan(re), ew.isnan(im))
    fill = ew.const(-np.inf if largest else np.inf, re)
    fold = red.reduce_max if largest else red.reduce_min

    def best(values, among):
        picked = ew.select(among, values, fill)
        top = _along_last(fold(picked, (type_of_value(picked).ndim - 1,)), picked)
        return ew.logical_and(among, ew.eq(values, top))

    hit = best(im, best(re, ew.logical_not(nan)))
    if skip_nan:
        return red.argmax(hit, type_of_value(nan).ndim - 1)
    any_nan = _along_last(red.reduce_max(nan, (type_of_value(nan).ndim - 1,)), nan)
    return red.argmax(ew.select(any_nan, nan, hit), type_of_value(nan).ndim - 1)


def extremum(x: Any, axes: tuple, largest: bool, skip_nan: bool = False) -> Any:
    """max (min) of complex values over `axes`: the element `arg_extremum` picks (with
    `skip_nan`, nanmax's: the first element of a row of NaNs only, as np.fmax.reduce)."""
    shape = type_of_value(x).shape
    kept = [a for a in range(len(shape)) if a not in axes]
    size = int(np.prod([shape[a] for a in axes]))
    flat = reshape(transpose(x, (*kept, *axes)), tuple(shape[a] for a in kept) + (size,))
    index = arg_extremum(flat, -1, largest, skip_nan)
    lead = type_of_value(index).shape
    return gather(flat, [*(iota(lead, a, INDEX) for a in range(len(lead))), index])


def _along_last(reduced: Any, like: Any) -> Any:
    """A value reduced over the last axis, broadcast back to `like`'s shape."""
    shape = type_of_value(like).shape
    return broadcast_in_dim(reduced, shape, tuple(range(len(shape) - 1)))
