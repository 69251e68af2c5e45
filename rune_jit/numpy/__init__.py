"""rune_jit.numpy: NumPy's names and semantics over traced and concrete arrays.

Outside any transformation these compute with NumPy and return NumPy arrays;
inside one they stage primitives. Promotion follows NumPy 2 (NEP 50).
"""

import numpy as _np

from . import linalg
from .creation import (arange, array, asarray, eye, full, full_like, linspace, ones,
                       ones_like, zeros, zeros_like)
from .math import (abs, absolute, add, arctan, arctan2, clip, cos, cosh, divide, equal, exp,
                   expm1, floor_divide, greater, greater_equal, isfinite, isnan, less,
                   less_equal, log, log1p, logical_and, logical_not, logical_or, logical_xor,
                   maximum, minimum, mod, multiply, negative, not_equal, positive, power,
                   remainder, sign, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide,
                   where)
from .methods import install as _install
from .products import dot, matmul, outer
from .reductions import all, amax, amin, any, argmax, argmin, max, mean, min, prod, sum
from .shapes import (astype, broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape,
                     squeeze, stack, transpose)

float64 = _np.float64
float32 = _np.float32
int64 = _np.int64
int32 = _np.int32
bool_ = _np.bool_
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan

__all__ = [
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "arctan", "arctan2",
    "argmax", "argmin", "array", "asarray", "astype", "broadcast_to", "clip", "concatenate",
    "cos", "cosh", "divide", "dot", "equal", "exp", "expand_dims", "expm1", "eye",
    "floor_divide", "full", "full_like", "greater", "greater_equal", "isfinite", "isnan",
    "less", "less_equal", "linalg", "linspace", "log", "log1p", "logical_and", "logical_not",
    "logical_or", "logical_xor", "matmul", "max", "maximum", "mean", "min", "minimum", "mod",
    "moveaxis", "multiply", "negative", "not_equal", "ones", "ones_like", "outer", "positive",
    "power", "prod", "ravel", "remainder", "reshape", "sign", "sin", "sinh", "sqrt", "square",
    "squeeze", "stack", "subtract", "sum", "tan", "tanh", "transpose", "true_divide", "where",
    "zeros", "zeros_like",
]

_install()
