"""jax.lax's elementwise operations over rune_jit's elementwise primitives.

Operands are taken as `operands.py` says (one dtype, no promotion; weak Python
scalars; NumPy broadcasting). Integer `div` truncates toward zero and `rem` takes
the dividend's sign, as C and XLA do (`rune_jit.numpy`'s `//` and `%` floor);
an integer divided by zero gives -1 (all bits set) and its remainder the dividend,
as XLA's CPU code does. Derivatives, batching and compilation come from the
primitives each operation is made of.
"""

from __future__ import annotations

import builtins
import enum
from typing import Any, Callable

import numpy as np

from ..ops import elementwise as ew
from ..ops import complex_parts as cp
from .operands import ANY, BOOL, COMPLEX, FLOAT, INT, NUMERIC, SIGNED, operands

ArrayLike = Any
Array = Any


def _function(name: str, compute: Callable, kinds: str, arity: int, doc: str) -> Callable:
    """The public `lax.<name>`: operands checked, then `compute` on them."""
    where = f"lax.{name}"

    if arity == 1:
        def op(x: ArrayLike) -> Array:
            return compute(*operands([x], kinds, where))
    else:
        def op(x: ArrayLike, y: ArrayLike) -> Array:
            return compute(*operands([x, y], kinds, where))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _int_div(a: Any, b: Any) -> Any:
    """Division truncated toward zero: the floor quotient, one more where the exact
    quotient is negative and not whole."""
    if ew.const(0, a).dtype.kind == "u":
        q = ew.floor_divide(a, b)
    else:
        zero = ew.const(0, a)
        inexact = ew.ne(ew.remainder(a, b), zero)
        negative = ew.ne(ew.lt(a, zero), ew.lt(b, zero))
        floor = ew.floor_divide(a, b)
        q = ew.select(ew.logical_and(inexact, negative), ew.add(floor, 1), floor)
    all_ones = np.asarray(-1).astype(ew.const(0, q).dtype)  # -1, or the unsigned maximum
    return ew.select(ew.eq(b, ew.const(0, b)), all_ones, q)


def _div(a: Any, b: Any) -> Any:
    return ew.div(a, b) if ew.const(0, a).dtype.kind == "f" else _int_div(a, b)


def _rem(a: Any, b: Any) -> Any:
    if ew.const(0, a).dtype.kind == "f":
        return ew.fmod(a, b)
    return ew.select(ew.eq(b, ew.const(0, b)), a, ew.fmod(a, b))


def _logistic(x: Any) -> Any:
    from ..nn import sigmoid

    return ew.convert(sigmoid(x), ew.const(0, x).dtype)


def _special(fn_name: str) -> Callable:
    """A scipy.special function of rune_jit, its result in the operand's dtype."""
    def compute(x: Any) -> Any:
        from ..scipy import special

        return ew.convert(getattr(special, fn_name)(x), ew.const(0, x).dtype)

    return compute


def _bitwise(logical: Callable, bits: Callable) -> Callable:
    """A bitwise operation: bools by their logical twin."""
    return lambda *xs: (logical if ew.const(0, xs[0]).dtype.kind == BOOL else bits)(*xs)


# name: (computation on checked operands, operand kinds, arity, docstring)
TABLE: dict[str, tuple[Callable, str, int, str]] = {
    "add": (ew.add, NUMERIC, 2, """x + y, elementwise.

    >>> add(np.array([1, 2]), np.array([10, 20])).tolist()
    [11, 22]
    """),
    "sub": (ew.sub, NUMERIC, 2, """x - y, elementwise.

    >>> sub(np.array([1.5, 2.0]), 1.0).tolist()
    [0.5, 1.0]
    """),
    "mul": (ew.mul, NUMERIC, 2, """x * y, elementwise.

    >>> mul(np.array([1.5, 2.0]), 2.0).tolist()
    [3.0, 4.0]
    """),
    "div": (_div, NUMERIC, 2, """x / y; integers truncate toward zero (C's, not Python's //).

    >>> div(np.array([7, -7]), np.array([2, 2])).tolist()
    [3, -3]
    """),
    "rem": (_rem, NUMERIC, 2, """The remainder of div, of the dividend's sign (C's fmod).

    >>> rem(np.array([7, -7]), np.array([2, 2])).tolist()
    [1, -1]
    """),
    "max": (ew.max, ANY, 2, """The larger of x and y (nan if either is nan).

    >>> max(np.array([1.0, 5.0]), np.array([3.0, 2.0])).tolist()
    [3.0, 5.0]
    """),
    "min": (ew.min, ANY, 2, """The smaller of x and y (nan if either is nan).

    >>> min(np.array([1.0, 5.0]), np.array([3.0, 2.0])).tolist()
    [1.0, 2.0]
    """),
    "real": (cp.real, COMPLEX, 1, """The real part of complex x.

    >>> real(np.array([1.5 + 2j])).tolist()
    [1.5]
    """),
    "imag": (cp.imag, COMPLEX, 1, """The imaginary part of complex x.

    >>> imag(np.array([1.5 + 2j])).tolist()
    [2.0]
    """),
    "conj": (cp.conj, COMPLEX, 1, """The complex conjugate of complex x.

    >>> conj(np.array([1.5 + 2j])).tolist()
    [(1.5-2j)]
    """),
    "complex": (cp.complex_, FLOAT, 2, """x + iy from floats of one dtype (float32: complex64).

    >>> complex(np.array([1.5]), np.array([2.0])).tolist()
    [(1.5+2j)]
    """),
    "atan2": (ew.arctan2, FLOAT, 2, """The angle of the point (y=x, x=y): atan2(x, y).

    >>> print(np.round(atan2(np.array([1.0]), np.array([-1.0])), 4))
    [2.3562]
    """),
    "neg": (ew.neg, NUMERIC, 1, """-x (integers wrap: -INT_MIN is INT_MIN).

    >>> neg(np.array([1, -2])).tolist()
    [-1, 2]
    """),
    "abs": (ew.abs, SIGNED, 1, """|x|.

    >>> abs(np.array([-1.5, 2.0])).tolist()
    [1.5, 2.0]
    """),
    "sign": (ew.sign, NUMERIC, 1, """-1, 0 or 1 by the sign of x (nan for nan, -0.0 for -0.0).

    >>> sign(np.array([-3, 0, 4])).tolist()
    [-1, 0, 1]
    """),
    "square": (ew.square, NUMERIC, 1, """x * x.

    >>> square(np.array([3, -2])).tolist()
    [9, 4]
    """),
    "reciprocal": (lambda x: ew.div(ew.const(1, x), x), FLOAT, 1, """1 / x.

    >>> reciprocal(np.array([4.0, -0.5])).tolist()
    [0.25, -2.0]
    """),
    "exp": (ew.exp, FLOAT, 1, """e ** x.

    >>> print(np.round(exp(np.array([0.0, 1.0])), 4))
    [1.     2.7183]
    """),
    "exp2": (ew.exp2, FLOAT, 1, """2 ** x.

    >>> exp2(np.array([3.0, -1.0])).tolist()
    [8.0, 0.5]
    """),
    "expm1": (ew.expm1, FLOAT, 1, """e ** x - 1, exact near 0.

    >>> print(expm1(np.array([1e-20]))[0])
    1e-20
    """),
    "log": (ew.log, FLOAT, 1, """The natural logarithm.

    >>> print(np.round(log(np.array([1.0, np.e])), 4))
    [0. 1.]
    """),
    "log1p": (ew.log1p, FLOAT, 1, """log(1 + x), exact near 0.

    >>> print(log1p(np.array([1e-20]))[0])
    1e-20
    """),
    "sqrt": (ew.sqrt, FLOAT, 1, """The square root.

    >>> sqrt(np.array([4.0, 2.25])).tolist()
    [2.0, 1.5]
    """),
    "rsqrt": (lambda x: ew.div(ew.const(1, x), ew.sqrt(x)), FLOAT, 1, """1 / sqrt(x).

    >>> rsqrt(np.array([4.0, 0.25])).tolist()
    [0.5, 2.0]
    """),
    "cbrt": (ew.cbrt, FLOAT, 1, """The cube root (real, of either sign).

    >>> print(np.round(cbrt(np.array([-8.0, 27.0])), 4))
    [-2.  3.]
    """),
    "sin": (ew.sin, FLOAT, 1, """The sine.

    >>> print(np.round(sin(np.array([0.0, np.pi / 2])), 4))
    [0. 1.]
    """),
    "cos": (ew.cos, FLOAT, 1, """The cosine.

    >>> print(np.round(cos(np.array([0.0, np.pi])), 4))
    [ 1. -1.]
    """),
    "tan": (ew.tan, FLOAT, 1, """The tangent.

    >>> print(np.round(tan(np.array([0.0, np.pi / 4])), 4))
    [0. 1.]
    """),
    "asin": (ew.arcsin, FLOAT, 1, """The inverse sine.

    >>> print(np.round(asin(np.array([0.0, 1.0])), 4))
    [0.     1.5708]
    """),
    "acos": (ew.arccos, FLOAT, 1, """The inverse cosine.

    >>> print(np.round(acos(np.array([1.0, 0.0])), 4))
    [0.     1.5708]
    """),
    "atan": (ew.arctan, FLOAT, 1, """The inverse tangent.

    >>> print(np.round(atan(np.array([0.0, 1.0])), 4))
    [0.     0.7854]
    """),
    "sinh": (ew.sinh, FLOAT, 1, """The hyperbolic sine.

    >>> print(np.round(sinh(np.array([0.0, 1.0])), 4))
    [0.     1.1752]
    """),
    "cosh": (ew.cosh, FLOAT, 1, """The hyperbolic cosine.

    >>> print(np.round(cosh(np.array([0.0, 1.0])), 4))
    [1.     1.5431]
    """),
    "tanh": (ew.tanh, FLOAT, 1, """The hyperbolic tangent.

    >>> print(np.round(tanh(np.array([0.0, 1.0])), 4))
    [0.     0.7616]
    """),
    "asinh": (ew.arcsinh, FLOAT, 1, """The inverse hyperbolic sine.

    >>> print(np.round(asinh(np.array([0.0, 1.0])), 4))
    [0.     0.8814]
    """),
    "acosh": (ew.arccosh, FLOAT, 1, """The inverse hyperbolic cosine.

    >>> print(np.round(acosh(np.array([1.0, 2.0])), 4))
    [0.    1.317]
    """),
    "atanh": (ew.arctanh, FLOAT, 1, """The inverse hyperbolic tangent.

    >>> print(np.round(atanh(np.array([0.0, 0.5])), 4))
    [0.     0.5493]
    """),
    "logistic": (_logistic, FLOAT, 1, """1 / (1 + exp(-x)), without overflow for either sign.

    >>> print(np.round(logistic(np.array([-1000.0, 0.0, 2.0])), 4))
    [0.     0.5    0.8808]
    """),
    "erf": (ew.erf, FLOAT, 1, """The error function.

    >>> print(np.round(erf(np.array([0.0, 1.0])), 4))
    [0.     0.8427]
    """),
    "erfc": (ew.erfc, FLOAT, 1, """1 - erf(x), exact for large x.

    >>> print(np.round(erfc(np.array([0.0, 1.0])), 4))
    [1.     0.1573]
    """),
    "erf_inv": (ew.erfinv, FLOAT, 1, """The inverse of erf (±inf at ±1).

    >>> print(np.round(erf_inv(np.array([0.0, 0.5, 1.0])), 4))
    [0.     0.4769    inf]
    """),
    "lgamma": (_special("gammaln"), FLOAT, 1, """log |Γ(x)|.

    >>> print(np.round(lgamma(np.array([0.5, 10.0])), 4))
    [ 0.5724 12.8018]
    """),
    "digamma": (_special("digamma"), FLOAT, 1, """ψ(x), the derivative of lgamma.

    >>> print(np.round(digamma(np.array([1.0, 10.0])), 4))
    [-0.5772  2.2518]
    """),
    "floor": (ew.floor, FLOAT, 1, """The largest whole number <= x.

    >>> floor(np.array([-1.5, 1.5])).tolist()
    [-2.0, 1.0]
    """),
    "ceil": (ew.ceil, FLOAT, 1, """The smallest whole number >= x.

    >>> ceil(np.array([-1.5, 1.5])).tolist()
    [-1.0, 2.0]
    """),
    "is_finite": (ew.isfinite, FLOAT, 1, """Whether x is neither infinite nor nan.

    >>> is_finite(np.array([1.0, np.inf, np.nan])).tolist()
    [True, False, False]
    """),
    "nextafter": (lambda x, y: _nextafter(x, y), FLOAT, 2, """The float after x toward y.

    >>> bool(nextafter(np.array(1.0), np.array(2.0)) - 1.0 == np.finfo(np.float64).eps)
    True
    """),
    "eq": (ew.eq, ANY, 2, """x == y, elementwise.

    >>> eq(np.array([1, 2]), np.array([1, 3])).tolist()
    [True, False]
    """),
    "ne": (ew.ne, ANY, 2, """x != y, elementwise.

    >>> ne(np.array([1, 2]), np.array([1, 3])).tolist()
    [False, True]
    """),
    "lt": (ew.lt, ANY, 2, """x < y, elementwise.

    >>> lt(np.array([1, 2]), np.array([2, 2])).tolist()
    [True, False]
    """),
    "le": (ew.le, ANY, 2, """x <= y, elementwise.

    >>> le(np.array([1, 2]), np.array([2, 2])).tolist()
    [True, True]
    """),
    "gt": (ew.gt, ANY, 2, """x > y, elementwise.

    >>> gt(np.array([1, 2]), np.array([2, 1])).tolist()
    [False, True]
    """),
    "ge": (ew.ge, ANY, 2, """x >= y, elementwise.

    >>> ge(np.array([1, 2]), np.array([2, 2])).tolist()
    [False, True]
    """),
    "bitwise_and": (_bitwise(ew.logical_and, ew.bitwise_and), INT + BOOL, 2,
                    """x & y (bools: logical and).

    >>> bitwise_and(np.array([12]), np.array([10])).tolist()
    [8]
    """),
    "bitwise_or": (_bitwise(ew.logical_or, ew.bitwise_or), INT + BOOL, 2,
                   """x | y (bools: logical or).

    >>> bitwise_or(np.array([12]), np.array([10])).tolist()
    [14]
    """),
    "bitwise_xor": (_bitwise(ew.logical_xor, ew.bitwise_xor), INT + BOOL, 2,
                    """x ^ y (bools: logical xor).

    >>> bitwise_xor(np.array([12]), np.array([10])).tolist()
    [6]
    """),
    "bitwise_not": (_bitwise(ew.logical_not, ew.bitwise_not), INT + BOOL, 1,
                    """~x (bools: logical not).

    >>> bitwise_not(np.array([0, -1])).tolist(), bitwise_not(np.array([True])).tolist()
    ([-1, 0], [False])
    """),
}


def _nextafter(x: Any, y: Any) -> Any:
    from ..numpy.ufuncs import nextafter

    return nextafter(x, y)


for _name, (_compute, _kinds, _arity, _doc) in TABLE.items():
    globals()[_name] = _function(_name, _compute, _kinds, _arity, _doc)


def pow(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (lax.pow's name)
    """x ** y for a float x; y a float of x's dtype or an integer (of any width).

    >>> pow(np.array([2.0, 9.0]), np.array([3, -1])).tolist()
    [8.0, 0.1111111111111111]
    """
    from .operands import array, as_dtype, check_kind, dtype_of

    base, exponent = array(x, "lax.pow"), array(y, "lax.pow")
    check_kind(dtype_of(base), FLOAT, "lax.pow")
    if dtype_of(exponent).kind in INT:
        exponent = as_dtype(exponent, dtype_of(base))
    return ew.pow(*operands([base, exponent], FLOAT, "lax.pow"))


def integer_pow(x: ArrayLike, y: int) -> Array:
    """x ** y for a static int y, by repeated squaring (as XLA computes it); a negative y
    is the reciprocal of x ** -y (floats only).

    >>> integer_pow(np.array([2.0, 3.0]), -2).tolist()
    [0.25, 0.1111111111111111]
    >>> integer_pow(np.array([2, 3]), 3).tolist()
    [8, 27]
    """
    if not isinstance(y, (int, np.integer)) or isinstance(y, (bool, np.bool_)):
        raise TypeError(f"lax.integer_pow: the exponent must be a Python int, got {y!r}")
    (x,) = operands([x], NUMERIC, "lax.integer_pow")
    if y < 0 and ew.const(0, x).dtype.kind != FLOAT:
        raise TypeError(f"lax.integer_pow: a negative exponent ({y}) needs a float operand, "
                        f"got {ew.const(0, x).dtype}")
    out, power, n = None, x, builtins.abs(int(y))
    while n:
        if n & 1:
            out = power if out is None else ew.mul(out, power)
        n >>= 1
        if n:
            power = ew.mul(power, power)
    if out is None:
        from ..numpy._core import shape_of
        from ..ops.shape import full

        out = full(shape_of(x), ew.const(1, x))
    return ew.div(ew.const(1, out), out) if y < 0 else out


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties, as jax.lax.RoundingMethod.

    >>> int(RoundingMethod.TO_NEAREST_EVEN)
    1
    """

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: ArrayLike,  # noqa: A001 (lax.round's name)
          rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Array:
    """x rounded to a whole number, ties away from zero (the default) or to even.

    >>> round(np.array([0.5, 1.5, -2.5])).tolist()
    [1.0, 2.0, -3.0]
    >>> round(np.array([0.5, 1.5, -2.5]), RoundingMethod.TO_NEAREST_EVEN).tolist()
    [0.0, 2.0, -2.0]
    """
    (x,) = operands([x], FLOAT, "lax.round")
    method = RoundingMethod(int(rounding_method))
    if method is RoundingMethod.TO_NEAREST_EVEN:
        return ew.rint(x)
    # x - trunc(x) is exact, so the tie test is too (floor(|x| + 0.5) would round up
    # the float just below 0.5)
    t = ew.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf, computed eagerly: not a tie
        half_or_more = ew.ge(ew.abs(ew.sub(x, t)), ew.const(0.5, x))
    return ew.select(half_or_more, ew.add(t, ew.sign(x)), t)
