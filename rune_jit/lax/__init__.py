"""rune_jit.lax: jax.lax's operations, with JAX's signatures and semantics.

Programs written for `jax.lax` port by importing `rune_jit.lax` instead. The
operations do not promote dtypes (a Python scalar takes its operands' dtype);
docs/porting-from-jax.md lists where rune_jit's choices differ from JAX's.

>>> from rune_jit import lax
>>> lax.div(np.array([7, -7]), np.array([2, 2])).tolist()
[3, -3]
>>> print(lax.cumsum(np.array([1.0, 2.0, 3.0])))
[1. 3. 6.]
"""

from .._src.lax.bessel import bessel_i0e, bessel_i1e
from .._src.lax.bits import (bitcast_convert_type, clz, convert_element_type,
                             population_count, reduce_precision, shift_left,
                             shift_right_arithmetic, shift_right_logical)
from .._src.lax.contractions import Precision, dot, dot_general
from .._src.lax.control import (associative_scan, cond, fori_loop, map, scan, stop_gradient,
                                switch, while_loop)
from .._src.lax.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,
                                    conv_general_dilated, conv_general_permutations,
                                    conv_general_shape_tuple, conv_shape_tuple,
                                    conv_transpose, conv_transpose_shape_tuple,
                                    conv_with_general_padding)
from .._src.lax.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum
from .._src.lax.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh, atan,
                                    atan2, atanh, bitwise_and, bitwise_not, bitwise_or,
                                    bitwise_xor, cbrt, ceil, complex, conj, cos, cosh,
                                    digamma, div, imag, real,
                                    eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt,
                                    integer_pow, is_finite, le, lgamma, log, log1p, logistic,
                                    lt, max, min, mul, ne, neg, nextafter, pow, reciprocal,
                                    rem, round, rsqrt, sign, sin, sinh,
                                    sqrt, square, sub, tan, tanh)
from .._src.lax.gathers import (GatherDimensionNumbers, GatherScatterMode,
                                ScatterDimensionNumbers, gather, scatter, scatter_add,
                                scatter_max, scatter_min, scatter_mul)
from .._src.lax.reductions import (argmax, argmin, reduce, reduce_and, reduce_max,
                                   reduce_min, reduce_or, reduce_prod, reduce_sum)
from .._src.lax.selection import clamp, select, select_n
from .._src.lax.solves import custom_linear_solve, custom_root
from .._src.lax.shapes import (broadcast, broadcast_in_dim, broadcast_shapes, collapse,
                               concatenate, dtype, dynamic_index_in_dim, dynamic_slice,
                               dynamic_slice_in_dim, dynamic_update_index_in_dim,
                               dynamic_update_slice, dynamic_update_slice_in_dim,
                               expand_dims, full, full_like, index_in_dim, iota, pad, reshape,
                               rev, slice, slice_in_dim, squeeze, transpose)
from .._src.lax.sorting import approx_max_k, approx_min_k, sort, sort_key_val, top_k
from .._src.lax.windows import padtype_to_pads, reduce_window
from .._src import absent as _absent

__all__ = ["ConvDimensionNumbers", "GatherDimensionNumbers", "GatherScatterMode",
    "Precision", "RoundingMethod", "ScatterDimensionNumbers", "abs", "acos", "acosh",
    "add", "approx_max_k", "approx_min_k", "argmax", "argmin", "asin", "asinh",
    "associative_scan", "atan", "atan2", "atanh", "bessel_i0e", "bessel_i1e",
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast", "broadcast_in_dim", "broadcast_shapes", "cbrt", "ceil", "clamp", "clz",
    "collapse", "complex", "concatenate", "cond", "conj", "conv", "conv_dimension_numbers",
    "conv_general_dilated", "conv_general_permutations", "conv_general_shape_tuple",
    "conv_shape_tuple", "conv_transpose", "conv_transpose_shape_tuple",
    "conv_with_general_padding", "convert_element_type", "cos", "cosh", "cumlogsumexp",
    "cummax", "cummin", "cumprod", "cumsum", "custom_linear_solve", "custom_root",
    "digamma", "div", "dot", "dot_general", "dtype", "dynamic_index_in_dim",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq", "erf", "erf_inv", "erfc",
    "exp", "exp2", "expand_dims", "expm1", "floor", "fori_loop", "full", "full_like",
    "gather", "ge", "gt", "imag", "index_in_dim", "integer_pow", "iota", "is_finite", "le",
    "lgamma", "log", "log1p", "logistic", "lt", "map", "max", "min", "mul", "ne", "neg",
    "nextafter", "pad", "padtype_to_pads", "population_count", "pow", "real", "reciprocal",
    "reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_precision",
    "reduce_prod", "reduce_sum", "reduce_window", "rem", "reshape", "rev", "round",
    "rsqrt", "scan", "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul",
    "select", "select_n", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "sign", "sin", "sinh", "slice", "slice_in_dim", "sort", "sort_key_val", "sqrt",
    "square", "squeeze", "stop_gradient", "sub", "switch", "tan", "tanh", "top_k",
    "transpose", "while_loop"]


def __getattr__(name: str):
    raise _absent.attribute_error(__name__, name)
