"""jax.lax's operations on bits and dtypes: shifts, population_count, clz,
convert_element_type, bitcast_convert_type and reduce_precision.

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

from ..dtypes import check_supported, int_bounds, name
from ..numpy._core import shape_of
from ..ops import elementwise as ew
from ..ops.shape import concatenate, reshape, slice_op
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


def _reduced(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """XLA's ReducePrecision on x's bits: the mantissa rounded to nearest (ties to even)
    at `mantissa_bits`, then exponents outside the narrower range flushed to ±0 or ±inf."""
    info = np.finfo(dtype_of(x))
    src_mantissa, src_exponent = int(info.nmant), int(info.iexp)
    unsigned = UNSIGNED[dtype_of(x).itemsize]
    bits = ew.bitcast_convert(x, unsigned)
    u = lambda v: np.asarray(v, unsigned)  # noqa: E731 (a constant of the bits' dtype)
    if mantissa_bits < src_mantissa:
        drop = src_mantissa - mantissa_bits
        last = 1 << drop
        last_bit = ew.shift_right(ew.bitwise_and(bits, u(last)), u(drop))
        bias = ew.add(last_bit, u((last >> 1) - 1))
        keep = ~(last - 1) & (2 ** (8 * unsigned.itemsize) - 1)  # the bits above the dropped
        bits = ew.bitwise_and(ew.add(bits, bias), u(keep))
    if exponent_bits < src_exponent:
        sign = ew.bitwise_and(bits, u(1 << (8 * unsigned.itemsize - 1)))
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        exponent = ew.bitwise_and(bits, u(exponent_mask))
        bias, reduced_bias = (1 << (src_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        over = ew.gt(exponent, u((bias + reduced_bias) << src_mantissa))
        under = ew.le(exponent, u((bias - reduced_bias) << src_mantissa))
        bits = ew.select(over, ew.bitwise_or(sign, u(exponent_mask)),
                         ew.select(under, sign, bits))
    out = ew.bitcast_convert(bits, dtype_of(x))
    return ew.select(ew.ne(x, x), x, out)  # a nan stays nan (rounding could make it inf)


def _reduce_precision_jvp(exponent_bits, mantissa_bits, primals, tangents):
    # the tangent passes unchanged: the derivative of the value the rounding stands for
    # (JAX rounds the tangent too, which is not linear, so it cannot be transposed here)
    (x,), (t,) = primals, tangents
    return _reduced(x, exponent_bits, mantissa_bits), t


def reduce_precision(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    """operand rounded to the nearest float of `exponent_bits` and `mantissa_bits` (ties
    to even), kept in its dtype: (8, 23) rounds float64s to float32's values, (5, 10)
    to float16's. Exponents out of the narrower range become ±inf or ±0, as XLA's do; nan
    stays nan. Its derivative is 1 (JAX's rounds the tangent too).

    >>> print(reduce_precision(np.array([1 / 3]), 8, 23)[0] == np.float32(1 / 3))
    True
    """
    from ..control_flow import custom_jvp

    where = "lax.reduce_precision"
    (x,) = operands([operand], FLOAT, where)
    if not (isinstance(exponent_bits, int) and exponent_bits >= 1
            and isinstance(mantissa_bits, int) and mantissa_bits >= 0):
        raise ValueError(f"{where}: exponent_bits must be an int >= 1 and mantissa_bits an "
                         f"int >= 0, got {exponent_bits!r} and {mantissa_bits!r}")
    reduced = custom_jvp(lambda e, m, v: _reduced(v, e, m), nondiff_argnums=(0, 1))
    reduced.defjvp(_reduce_precision_jvp)
    return reduced(exponent_bits, mantissa_bits, x)
