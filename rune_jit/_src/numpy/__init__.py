"""The implementation of rune_jit.numpy (its docstring is the public module's)."""

import numpy as _np

from . import fft, linalg
from .creation import (arange, array, asarray, eye, full, full_like, linspace, ones,
                                   ones_like, zeros, zeros_like)
from .math import (abs, absolute, add, arctan, arctan2, bitwise_and, bitwise_count,
                               bitwise_not, bitwise_or, bitwise_xor, clip, cos, cosh, divide, equal,
                               exp, expm1, floor_divide, greater, greater_equal, invert, isfinite,
                               isnan, left_shift, less, less_equal, log, log1p, logical_and,
                               logical_not, logical_or, logical_xor, maximum, minimum, mod,
                               multiply, negative, not_equal, positive, power, remainder,
                               right_shift, sign, sin, sinh, sqrt, square, subtract, tan, tanh,
                               true_divide, where)
from .methods import install as _install
from .products import dot, matmul, outer
from .reductions import all, amax, amin, any, argmax, argmin, max, mean, min, prod, sum
from .shapes import (astype, broadcast_to, concatenate, expand_dims, moveaxis, ravel,
                                 reshape, squeeze, stack, transpose)

float64, float32, float16 = _np.float64, _np.float32, _np.float16
int64, int32, int16, int8 = _np.int64, _np.int32, _np.int16, _np.int8
uint64, uint32, uint16, uint8 = _np.uint64, _np.uint32, _np.uint16, _np.uint8
bool_ = _np.bool_
complex128, complex64 = _np.complex128, _np.complex64
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan

__all__ = [
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "arctan", "arctan2",
    "argmax", "argmin", "array", "asarray", "astype", "bitwise_and", "bitwise_count",
    "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast_to", "clip", "concatenate",
    "cos", "cosh", "divide", "dot", "equal", "exp", "expand_dims", "expm1", "eye",
    "fft", "floor_divide", "full", "full_like", "greater", "greater_equal", "invert", "isfinite",
    "isnan", "left_shift", "less", "less_equal", "linalg", "linspace", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "max", "maximum",
    "mean", "min", "minimum", "mod", "moveaxis", "multiply", "negative", "not_equal",
    "ones", "ones_like", "outer", "positive", "power", "prod", "ravel", "remainder",
    "reshape", "right_shift", "sign", "sin", "sinh", "sqrt", "square", "squeeze", "stack",
    "subtract", "sum", "tan", "tanh", "transpose", "true_divide", "where", "zeros",
    "zeros_like",
]

# indexing, sorting, searching and prefix operations (numpy/advanced.py, sorting.py)
from .advanced import at  # noqa: E402
from .sorting import (argpartition, argsort, bincount, cumprod, cumsum,  # noqa: E402
                                  cumulative_prod, cumulative_sum, diff, flatnonzero, median,
                                  nanmedian, nanpercentile, nanquantile, nonzero, partition,
                                  percentile, quantile, searchsorted, sort, take, take_along_axis,
                                  unique)

__all__ += [
    "argpartition", "argsort", "at", "bincount", "cumprod", "cumsum", "cumulative_prod",
    "cumulative_sum", "diff", "flatnonzero", "median", "nanmedian", "nanpercentile",
    "nanquantile", "nonzero", "partition", "percentile", "quantile", "searchsorted", "sort",
    "take", "take_along_axis", "unique",
]

# more elementwise math: rounding, inverse functions, compositions (numpy/ufuncs.py)
from . import ufuncs as _ufuncs  # noqa: E402
from .methods import UFUNCS as _UFUNCS  # noqa: E402
from .ufuncs import (angle, arccos, arccosh, arcsin, arcsinh, arctanh,  # noqa: E402, F401
                                 around, cbrt, ceil, conj, conjugate, copysign, deg2rad, degrees,
                                 exp2, fix, float_power, floor, fmax, fmin, fmod, heaviside, hypot,
                                 i0, imag, isinf, isneginf, isposinf, log10, log2, logaddexp,
                                 logaddexp2, nan_to_num, nextafter, rad2deg, radians, real,
                                 reciprocal, rint, round, signbit, sinc, trunc)

__all__ += _ufuncs.__all__
_UFUNCS.update(_ufuncs.UFUNCS)  # np.floor(traced), ... (methods.py's table)

# composite functions: statistics, creation and diagonals, shape functions, products,
# comparisons and value-dependent selections (numpy/statistics.py, arrays.py, arrange.py,
# contractions.py, comparisons.py); `where` here also takes the condition alone
from .arrays import (asanyarray, ascontiguousarray, asfortranarray,  # noqa: E402
                                 atleast_1d, atleast_2d, atleast_3d, copy, diag, diagflat, diagonal,
                                 empty, empty_like, geomspace, identity, iscomplexobj, logspace,
                                 meshgrid, trace, tri, tril, tril_indices, triu, triu_indices)
from .arrange import (append, apply_along_axis, array_split,  # noqa: E402
                                  broadcast_arrays, broadcast_shapes, column_stack, delete, dsplit,
                                  dstack, flip, fliplr, flipud, hsplit, hstack, insert, ix_, pad,
                                  repeat, roll, rot90, split, swapaxes, tile, vsplit, vstack)
from .comparisons import (allclose, argwhere, array_equal, array_equiv,  # noqa: E402
                                      compress, extract, isclose, isin, where)
from .contractions import (cross, einsum, inner, kron, polyval, tensordot,  # noqa: E402
                                       vdot)
from .statistics import (average, corrcoef, count_nonzero, cov, nanargmax,  # noqa: E402
                                     nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin,
                                     nanprod, nanstd, nansum, nanvar, ptp, std, var)

from .complex_values import iscomplex, isreal, real_if_close, sort_complex  # noqa: E402

__all__ += [
    "allclose", "append", "apply_along_axis", "argwhere", "array_equal", "array_equiv",
    "array_split", "asanyarray", "ascontiguousarray", "asfortranarray", "iscomplexobj",
    "tril_indices", "triu_indices", "atleast_1d", "atleast_2d", "atleast_3d", "average",
    "broadcast_arrays", "broadcast_shapes", "column_stack", "compress", "copy", "corrcoef",
    "count_nonzero", "cov", "cross", "delete", "diag", "diagflat", "diagonal", "dsplit",
    "dstack", "einsum",
    "empty", "empty_like", "extract", "flip", "fliplr", "flipud", "geomspace", "hsplit",
    "hstack", "identity", "inner", "insert", "isclose", "isin", "ix_", "kron", "logspace",
    "meshgrid", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmin", "nanprod", "nanstd", "nansum", "nanvar",
    "pad", "polyval", "ptp", "repeat", "roll", "rot90", "split", "std", "swapaxes",
    "iscomplex", "isreal", "real_if_close", "sort_complex",
    "tensordot", "tile", "trace", "tri", "tril", "triu", "var", "vdot", "vsplit", "vstack",
]

_install()


def _named_here() -> None:
    """Functions made by a factory (`tanh` from `_unary_float`) are found by pickle, and
    named in reprs, by the name and the module that define them (whose globals their
    annotations are read in, as by the API reference)."""
    import sys

    ours = [m for n, m in sys.modules.items() if n.startswith(__name__ + ".")]
    for name in __all__:
        f = globals().get(name)
        if callable(f) and "<locals>" in getattr(f, "__qualname__", ""):
            f.__qualname__ = name
            home = next((m for m in ours if getattr(m, name, None) is f), None)
            f.__module__ = home.__name__ if home is not None else __name__


_named_here()

# NumPy's ufunc methods and attributes (rnp.add.reduce, rnp.maximum.accumulate, ...), also
# reached by np.add.reduce(traced) (rune_jit/_src/ufunc.py)
from ..ufunc import ufunc, wrap_ufuncs  # noqa: E402

_UFUNCS.update(wrap_ufuncs(globals(), __all__))
__all__ += ["ufunc"]

# NumPy's type and shape vocabulary, vectorize, block and other names library code written
# for JAX uses (rune_jit/_src/array_type.py, dtype_vocabulary.py, vectorize.py,
# numpy_extras.py)
from ..array_type import Array as ndarray  # noqa: E402
from ..dtype_vocabulary import (can_cast, dtype, finfo, iinfo,  # noqa: E402
                                     isscalar, issubdtype, ndim, promote_types,
                                     result_type, shape, size)
from ..numpy_extras import (block, diag_indices, diag_indices_from,  # noqa: E402
                                 digitize, save, unravel_index)
from ..vectorize import vectorize  # noqa: E402

newaxis = None
generic, number, inexact, floating = _np.generic, _np.number, _np.inexact, _np.floating
complexfloating, integer = _np.complexfloating, _np.integer
signedinteger, unsignedinteger = _np.signedinteger, _np.unsignedinteger
bool = _np.bool  # noqa: A001 (NumPy's name)
float_ = _np.float64  # NumPy 1's name for float64, which JAX keeps
euler_gamma = _np.euler_gamma

__all__ += [
    "block", "bool", "bool_", "can_cast", "complex128", "complex64", "complexfloating",
    "diag_indices", "diag_indices_from", "digitize", "dtype", "e", "euler_gamma", "finfo",
    "float16", "float32", "float64", "float_", "floating", "generic", "iinfo", "inexact", "inf",
    "int16", "int32", "int64", "int8", "integer", "isscalar", "issubdtype", "nan",
    "ndarray", "ndim", "newaxis", "number", "pi", "promote_types", "result_type", "save",
    "shape", "signedinteger", "size", "uint16", "uint32", "uint64", "uint8",
    "unravel_index", "unsignedinteger", "vectorize",
]

