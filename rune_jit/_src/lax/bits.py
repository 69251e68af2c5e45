"""jax.lax's operations on bits and dtypes: shifts, population_count, clz,
convert_element_type and bitcast_convert_type.

Each is a composition of rune_jit's elementwise primitives that gives XLA's
answer exactly: a shift by a count outside [0, bits) shifts every bit out (0, or
-1 for an arithmetic right shift of a negative number); a float converts to an
integer truncating toward zero and saturating (nan gives 0, as in JAX); a bitcast
to a narrower dtype adds a trailing axis of the parts, lowest bits first (JAX's
order on little-endian machines).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...dtypes import check_supported, int_bounds, name
from ...numpy._core import shape_of
from ...ops import elementwise as ew
from ...ops.shape import concatenate, reshape, slice_op
from .operands import BOOL, FLOAT, INT, array, dtype_of, operands

ArrayLike = Any
Array = Any
UNSIGNED = {d.itemsize: d for d in map(np.dtype, (np.uint8, np.uint16, np.uint32, np.uint64))}
SIGNED = {d.itemsize: d for d in map(np.dtype, (np.int8, np.int16, np.int32, np.int64))}


def _viewed(table: dict, compute, *xs: Any) -> Any:
    """`compute` on the bits of `xs` read as the signed or unsigned dtype of their
    width (`table`), its result read back as their dtype."""
    dtype = dtype_of(xs[0])
    view = table[dtype.itemsize]
    return ew.bitcast_convert(compute(*[ew.bitcast_convert(x, view) for x in xs]), dtype)


def shift_left(x: ArrayLike, y: ArrayLike) -> Array:
    """x shifted left by y bits (0 where y is outside [0, bits)).

    >>> shift_left(np.array([1, 1], np.int32), np.array([3, 32], np.int32)).tolist()
    [8, 0]
    """
    return ew.shift_left(*operands([x, y], INT, "lax.shift_left"))


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Array:
    """x shifted right by y bits, zeros shifted in (of a signed x too).

    >>> shift_right_logical(np.array([-8], np.int32), np.array([28], np.int32)).tolist()
    [15]
    """
    x, y = operands([x, y], INT, "lax.shift_right_logical")
    return _viewed(UNSIGNED, ew.shift_right, x, y)


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Array:
    """x shifted right by y bits, copies of the sign bit shifted in (of an unsigned x too).

    >>> shift_right_arithmetic(np.array([-8], np.int32), np.array([1], np.int32)).tolist()
    [-4]
    """
    x, y = operands([x, y], INT, "lax.shift_right_arithmetic")
    return _viewed(SIGNED, ew.shift_right, x, y)


def population_count(x: ArrayLike) -> Array:
    """The number of one bits of x (of its two's complement: -1 has all bits set), in
    x's dtype.

    >>> population_count(np.array([-1, 7], np.int32)).tolist()
    [32, 3]
    """
    (x,) = operands([x], INT, "lax.population_count")
    bits = ew.bitcast_convert(x, UNSIGNED[dtype_of(x).itemsize])
    return ew.convert(ew.bitwise_count(bits), dtype_of(x))


def clz(x: ArrayLike) -> Array:
    """The number of leading zero bits of x, in x's dtype.

    >>> clz(np.array([0, 1, -1], np.int32)).tolist()
    [32, 31, 0]
    """
    (x,) = operands([x], INT, "lax.clz")
    width = 8 * dtype_of(x).itemsize
    bits = ew.bitcast_convert(x, UNSIGNED[dtype_of(x).itemsize])
    shift = 1
    while shift < width:  # every bit below the highest one set: the count of those is
        bits = ew.bitwise_or(bits, ew.shift_right(bits, shift))  # width - clz
        shift *= 2
    count = ew.convert(ew.bitwise_count(bits), dtype_of(x))
    return ew.sub(ew.const(width, count), count)


def convert_element_type(operand: ArrayLike, new_dtype: Any) -> Array:
    """operand as `new_dtype`. A float becomes an integer truncated toward zero and
    saturated (nan: 0); an integer wraps into a narrower one; anything becomes a bool by
    `!= 0`.

    >>> convert_element_type(np.array([-2.7, np.nan, 1e10]), np.int32).tolist()
    [-2, 0, 2147483647]
    """
    where = "lax.convert_element_type"
    dtype = check_supported(np.dtype(new_dtype), where)
    x = array(operand, where)
    check_supported(dtype_of(x), where)
    if dtype_of(x).kind == FLOAT and dtype.kind in INT:
        return _float_to_int(x, dtype)
    return ew.convert(x, dtype)


def _float_to_int(x: Any, dtype: np.dtype) -> Any:
    lo, hi = int_bounds(dtype)
    with np.errstate(over="ignore"):  # 2**32 is inf in float16: no float16 reaches it
        above = ew.ge(x, ew.const(float(hi) + 1.0, x))  # a power of two: exact
    below = ew.lt(x, ew.const(float(lo), x))
    nan = ew.ne(x, x)
    off = ew.logical_or(ew.logical_or(above, below), nan)
    inside = ew.convert(ew.select(off, ew.const(0.0, x), x), dtype)
    zero = np.zeros((), dtype)
    return ew.select(above, np.asarray(hi, dtype),
                     ew.select(below, np.asarray(lo, dtype), ew.select(nan, zero, inside)))


def bitcast_convert_type(operand: ArrayLike, new_dtype: Any) -> Array:
    """The bits of operand read as `new_dtype`. Of the same width: the same shape. To a
    narrower dtype: a trailing axis of the parts, lowest bits first; from a narrower one:
    the trailing axis (of the ratio's size) joined.

    >>> bitcast_convert_type(np.array([1.0], np.float32), np.uint8).tolist()
    [[0, 0, 128, 63]]
    >>> bitcast_convert_type(np.array([[0, 0, 128, 63]], np.uint8), np.float32).tolist()
    [1.0]
    """
    where = "lax.bitcast_convert_type"
    dtype = check_supported(np.dtype(new_dtype), where)
    x = array(operand, where)
    src = check_supported(dtype_of(x), where)
    if src == dtype:
        return x
    if BOOL in (src.kind, dtype.kind):
        raise TypeError(f"{where} does not read bool bits as another dtype: got operand "
                        f"dtype {name(src)} and new_dtype {name(dtype)}")
    if src.itemsize == dtype.itemsize:
        return ew.bitcast_convert(x, dtype)
    if src.itemsize > dtype.itemsize:
        return _split(x, dtype)
    return _join(x, dtype, where)


def _split(x: Any, dtype: np.dtype) -> Any:
    wide, narrow = UNSIGNED[dtype_of(x).itemsize], UNSIGNED[dtype.itemsize]
    bits = ew.bitcast_convert(x, wide)
    shape = shape_of(x)
    parts = [reshape(ew.convert(ew.shift_right(bits, 8 * dtype.itemsize * k), narrow),
                     shape + (1,))
             for k in range(dtype_of(x).itemsize // dtype.itemsize)]
    return ew.bitcast_convert(concatenate(parts, len(shape)), dtype)


def _join(x: Any, dtype: np.dtype, where: str) -> Any:
    ratio, shape = dtype.itemsize // dtype_of(x).itemsize, shape_of(x)
    if not shape or shape[-1] != ratio:
        raise TypeError(f"{where}: {name(dtype_of(x))} to {name(dtype)} needs a trailing "
                        f"axis of size {ratio}, got an operand of shape {shape}")
    wide = UNSIGNED[dtype.itemsize]
    bits = ew.bitcast_convert(x, UNSIGNED[dtype_of(x).itemsize])
    out = None
    for k in range(ratio):
        part = slice_op(bits, (0,) * (len(shape) - 1) + (k,), shape[:-1] + (k + 1,))
        part = ew.shift_left(ew.convert(reshape(part, shape[:-1]), wide),
                             8 * dtype_of(x).itemsize * k)
        out = part if out is None else ew.bitwise_or(out, part)
    return ew.bitcast_convert(out, dtype)
