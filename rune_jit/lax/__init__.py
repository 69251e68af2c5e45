"""rune_jit.lax: jax.lax's operations, with JAX's signatures and semantics.

Programs written for `jax.lax` port by importing `rune_jit.lax` instead. The
operations do not promote dtypes (a Python scalar takes its operands' dtype);
docs/porting-from-jax.md lists where rune_jit's choices differ from JAX's.

>>> from rune_jit import lax
>>> lax.div(np.array([7, -7]), np.array([2, 2])).tolist()
[3, -3]
"""

from .._src.lax.bessel import bessel_i0e, bessel_i1e
from .._src.lax.bits import (bitcast_convert_type, clz, convert_element_type,
                             population_count, reduce_precision, shift_left,
                             shift_right_arithmetic, shift_right_logical)
from .._src.lax.control import (associative_scan, cond, fori_loop, map, scan, stop_gradient,
                                switch, while_loop)
from .._src.lax.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh, atan,
                                    atan2, atanh, bitwise_and, bitwise_not, bitwise_or,
                                    bitwise_xor, cbrt, ceil, cos, cosh, digamma, div,
                                    eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt,
                                    integer_pow, is_finite, le, lgamma, log, log1p, logistic,
                                    lt, max, min, mul, ne, neg, nextafter, pow, reciprocal,
                                    rem, round, rsqrt, sign, sin, sinh,
                                    sqrt, square, sub, tan, tanh)
from .._src.lax.selection import clamp, select, select_n
from .._src.lax.shapes import (broadcast, broadcast_in_dim, broadcast_shapes, collapse,
                               concatenate, dtype, dynamic_index_in_dim, dynamic_slice,
                               dynamic_slice_in_dim, dynamic_update_index_in_dim,
                               dynamic_update_slice, dynamic_update_slice_in_dim,
                               expand_dims, full, full_like, index_in_dim, iota, pad, reshape,
                               rev, slice, slice_in_dim, squeeze, transpose)

__all__ = [
    "bessel_i0e", "bessel_i1e",
    # bits and dtypes
    "bitcast_convert_type", "clz", "convert_element_type", "population_count", "reduce_precision",
    "shift_left",
    "shift_right_arithmetic", "shift_right_logical",
    # loops and control
    "associative_scan", "cond", "fori_loop", "map", "scan", "stop_gradient", "switch",
    "while_loop",
    # elementwise
    "RoundingMethod", "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2",
    "atanh", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil",
    "clamp", "cos", "cosh", "digamma", "div", "eq", "erf", "erf_inv", "erfc", "exp", "exp2",
    "expm1", "floor", "ge", "gt", "integer_pow", "is_finite", "le", "lgamma", "log", "log1p",
    "logistic", "lt", "max", "min", "mul", "ne", "neg", "nextafter", "pow", "reciprocal",
    "rem", "round", "rsqrt", "select", "select_n", "sign", "sin", "sinh", "sqrt", "square",
    "sub", "tan", "tanh",
    # shapes
    "broadcast", "broadcast_in_dim", "broadcast_shapes", "collapse", "concatenate", "dtype",
    "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
    "expand_dims", "full", "full_like", "index_in_dim", "iota", "pad", "reshape", "rev",
    "slice", "slice_in_dim", "squeeze", "transpose",
]
