"""More of NumPy's elementwise functions: rounding, inverse trigonometric and hyperbolic,
base 2 and 10, and the compositions (logaddexp, fmax, nan_to_num, i0, ...), with NumPy's
dtypes (NEP 50; integer arguments of float functions compute in `dtypes.float_for`).

Primitives where a composition would lose exactness (floor, rint, arcsin, log2, cbrt,
hypot, copysign, fmod: libm or LLVM's intrinsics in compiled code), compositions of
primitives otherwise. Derivatives of the piecewise constant ones (floor, ceil, trunc,
rint, round, fix, signbit, nextafter in its second argument) are 0, as in JAX;
nextafter(x, y) has derivative 0 in x too (it moves bits, not values).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..ops import complex_parts as cp
from ..ops import elementwise as ew
from ._core import (accept, broadcast, dtype_weak, each_part, float_operands, promote,
                    real_only, to_dtype)
from . import fast
from .math import _binary, _unary_float, arctan2, not_equal

F64, F32, F16 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16)
C128 = np.dtype(np.complex128)
INT8 = np.dtype(np.int8)
BITS = {F64: np.dtype(np.int64), F32: np.dtype(np.int32), F16: np.dtype(np.int16)}


def _kind(x: Any) -> str:
    return dtype_weak(x)[0].kind


def _integral(name: str, op: Callable) -> Callable:
    """floor, ceil, trunc: integers and bools are their own value (NumPy 2 keeps the
    dtype); floats call the primitive."""
    def f(x: Any, out: None = None) -> Any:
        _no_out(out, name)
        (x,) = promote(x, where=f"rune_jit.numpy.{name}")
        return x if _kind(x) in "iub" else op(x)

    f.__name__ = name
    return f


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"rune_jit.numpy.{name}: out= is not supported (arrays are immutable "
                        "under a trace); use the result")


floor = _integral("floor", ew.floor)
ceil = _integral("ceil", ew.ceil)
trunc = _integral("trunc", ew.trunc)
fix = _integral("fix", ew.trunc)


def _rint(x: Any) -> Any:
    (x,) = float_operands(x, where="rune_jit.numpy.rint", complex_ok=True)
    return each_part(ew.rint, x) if _kind(x) == "c" else ew.rint(x)


_rint.__name__ = "rint"
rint = fast.unary(_rint, ew.rint)
arcsin = _unary_float("arcsin", ew.arcsin)
arccos = _unary_float("arccos", ew.arccos)
arcsinh = _unary_float("arcsinh", ew.arcsinh)
arccosh = _unary_float("arccosh", ew.arccosh)
arctanh = _unary_float("arctanh", ew.arctanh)
cbrt = _unary_float("cbrt", ew.cbrt)
log2 = _unary_float("log2", ew.log2)
log10 = _unary_float("log10", ew.log10)
exp2 = _unary_float("exp2", ew.exp2)
hypot = _binary("hypot", ew.hypot, make_float="smallest")
copysign = _binary("copysign", ew.copysign, make_float="smallest")
fmod = _binary("fmod", ew.fmod, numeric=True)


def _float_binary(name: str) -> Callable:
    """A decorator: fn(a, b) on operands in np.NAME's float dtype, broadcast; float16
    computes in float32 and rounds once, as NumPy's float16 loops do."""
    def deco(fn: Callable) -> Callable:
        where = f"rune_jit.numpy.{name}"

        def f(x1: Any, x2: Any) -> Any:
            a, b = broadcast(*float_operands(x1, x2, where=where), where=where)
            dtype = dtype_weak(a)[0]
            if dtype != F16:
                return fn(a, b)
            return to_dtype(fn(to_dtype(a, F32), to_dtype(b, F32)), F16)  # as NumPy's loop

        f.__name__, f.__doc__ = name, fn.__doc__
        return f

    return deco


def _softmax_pair(a, b, log1p_exp):
    """max(a, b) + log1p_exp(-|a - b|), with a - b taken as 0 where a == b (equal
    infinities): derivatives split at a tie as max's do, and are never NaN."""
    same = ew.eq(a, b)
    d = ew.select(same, ew.const(0.0, a), ew.sub(a, b))
    return ew.add(ew.max(a, b), log1p_exp(ew.neg(ew.abs(d))))


@_float_binary("logaddexp")
def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow.

    >>> print(logaddexp(1000.0, 1000.0).round(4))
    1000.6931
    """
    return _softmax_pair(x1, x2, lambda v: ew.log1p(ew.exp(v)))


@_float_binary("logaddexp2")
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2) without overflow.

    >>> print(logaddexp2(3.0, 3.0).round(4))
    4.0
    """
    return _softmax_pair(x1, x2, lambda v: ew.mul(ew.log1p(ew.exp2(v)),
                                                  ew.const(1 / np.log(2), v)))


@_float_binary("heaviside")
def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays NaN).

    >>> heaviside(np.array([-1.0, 0.0, 2.0]), 0.5)
    array([0. , 0.5, 1. ])
    """
    real_only(x1, "rune_jit.numpy.heaviside")
    zero, one = ew.const(0.0, x1), ew.const(1.0, x1)
    step = ew.select(ew.lt(x1, zero), zero, ew.select(ew.gt(x1, zero), one, x2))
    return ew.select(ew.isnan(x1), x1, step)


def nextafter(x1: Any, x2: Any) -> Any:
    """The float after x1 in the direction of x2 (its bits moved by one).

    >>> print(nextafter(1.0, 2.0) - 1.0 == np.finfo(np.float64).eps)
    True
    """
    x, y = broadcast(*float_operands(x1, x2, where="rune_jit.numpy.nextafter"),
                     where="rune_jit.numpy.nextafter")
    bits = BITS[dtype_weak(x)[0]]
    i = ew.bitcast_convert(x, bits)
    one = np.asarray(1, bits)
    up = ew.eq(ew.lt(x, y), ew.gt(x, ew.const(0.0, x)))  # away from 0 or toward it
    dtype = dtype_weak(x)[0]
    moved = ew.bitcast_convert(ew.select(up, ew.add(i, one), ew.sub(i, one)), dtype)
    tiny = ew.copysign(ew.bitcast_convert(one, dtype), y)  # the smallest subnormal
    out = ew.select(ew.eq(x, ew.const(0.0, x)), tiny, moved)
    half = dtype == F16  # NumPy's npy_half_nextafter: x at equality, a positive NaN
    out = ew.select(ew.eq(x, y), x if half else y, out)
    nan = ew.const(np.nan, x) if half else ew.add(x, y)
    return ew.select(ew.logical_or(ew.isnan(x), ew.isnan(y)), nan, out)


def _nan_aware(name: str, op: Callable, wins: Callable) -> Callable:
    """fmax, fmin: NumPy's maximum and minimum that ignore a NaN (NaN only if both are).
    float16 is NumPy's npy_half loop: a where `wins(a, b)` (a >= b for fmax) or b is NaN,
    so that of ±0 the first comes back."""
    where = f"rune_jit.numpy.{name}"

    def f(x1: Any, x2: Any) -> Any:
        a, b = broadcast(*promote(x1, x2, where=where), where=where)
        if _kind(a) != "f":
            return op(a, b)
        if dtype_weak(a)[0] == F16:
            return ew.select(ew.logical_or(wins(a, b), ew.isnan(b)), a, b)
        return ew.select(ew.isnan(b), a, ew.select(ew.isnan(a), b, op(a, b)))

    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: a NaN on one side gives the other side."
    return f


fmax = _nan_aware("fmax", ew.max, ew.ge)
fmin = _nan_aware("fmin", ew.min, ew.le)


def float_power(x1: Any, x2: Any) -> Any:
    """x1 ** x2 in float64, or complex128 if an operand is complex (NumPy's float_power:
    float16, float32 and complex64 too).

    >>> print(float_power(2, -1))
    0.5
    """
    ops = float_operands(x1, x2, where="rune_jit.numpy.float_power", complex_ok=True)
    wide = C128 if _kind(ops[0]) == "c" else F64  # (operands share a dtype)
    return ew.pow(*broadcast(*[to_dtype(v, wide) for v in ops]))


# NumPy's constants for degrees and radians, per dtype (float16 computes in float32)
_DEGREES = {F64: 180.0 / np.pi, F32: np.float32(180.0) / np.float32(np.pi)}
_RADIANS = {F64: np.pi / 180.0, F32: np.float32(np.pi / 180.0)}


def _scaling(name: str, table: dict) -> Callable:
    factors = tuple(table.items())  # a tuple, which a code digest sees through (a dict not)

    def f(x: Any) -> Any:
        (x,) = float_operands(x, where=f"rune_jit.numpy.{name}")
        dtype = dtype_weak(x)[0]
        wide = to_dtype(x, F32) if dtype == F16 else x
        factor = next(v for d, v in factors if d == dtype_weak(wide)[0])
        out = ew.mul(wide, np.asarray(factor, dtype_weak(wide)[0]))
        return to_dtype(out, dtype) if dtype == F16 else out

    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: x times NumPy's constant (float16 in float32)."
    return f


degrees = rad2deg = _scaling("degrees", _DEGREES)
radians = deg2rad = _scaling("radians", _RADIANS)


def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0, as NumPy computes it (integers in float64; x = 0
    replaced by eps, 1e-20 for complex x).

    >>> print(sinc(np.array([0.0, 0.5])).round(4))
    [1.     0.6366]
    """
    x = accept(x, "rune_jit.numpy.sinc")
    if _kind(x) not in "fc":
        x = to_dtype(x, F64)
    (y,) = promote(x, where="rune_jit.numpy.sinc")
    y = ew.mul(y, ew.const(np.pi, y))
    eps = ew.const(np.finfo(dtype_weak(y)[0]).eps if _kind(y) == "f" else 1e-20, y)
    y = ew.select(ew.ne(y, ew.const(0.0, y)), y, eps)
    return ew.div(ew.sin(y), y)


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (-0.0 and -nan included).

    >>> signbit(np.array([-0.0, 0.0, -2.0]))
    array([ True, False,  True])
    """
    (x,) = promote(x, where="rune_jit.numpy.signbit")
    dtype = dtype_weak(real_only(x, "rune_jit.numpy.signbit"))[0]
    if dtype.kind == "f":
        return ew.lt(ew.bitcast_convert(x, BITS[dtype]), np.asarray(0, BITS[dtype]))
    if dtype.kind == "i":
        return ew.lt(x, np.asarray(0, dtype))
    return not_equal(x, x)  # unsigned and bool: never


def _infinity(name: str, test: Callable) -> Callable:
    def f(x: Any, out: None = None) -> Any:
        _no_out(out, name)
        (x,) = promote(x, where=f"rune_jit.numpy.{name}")
        if _kind(x) == "c" and name == "isinf":  # either part infinite
            return ew.logical_or(*(test(p) for p in cp.parts(x)))
        real_only(x, f"rune_jit.numpy.{name}")
        return test(x) if _kind(x) == "f" else not_equal(x, x)

    f.__name__ = name
    f.__doc__ = f"NumPy's {name} (never true of integers and bools)."
    return f


isinf = _infinity("isinf", lambda x: ew.eq(ew.abs(x), ew.const(np.inf, x)))
isposinf = _infinity("isposinf", lambda x: ew.eq(x, ew.const(np.inf, x)))
isneginf = _infinity("isneginf", lambda x: ew.eq(x, ew.const(-np.inf, x)))


def reciprocal(x: Any) -> Any:
    """1 / x; of integers 1.0 / x converted back, as NumPy's C loop computes it (1 and -1
    are their own reciprocals, other nonzero integers give 0).

    >>> reciprocal(np.array([1, 2, -1]))
    array([ 1,  0, -1])
    """
    (x,) = promote(x, where="rune_jit.numpy.reciprocal")
    if _kind(x) == "b":
        x = to_dtype(x, INT8)
    if _kind(x) == "c":
        return _complex_reciprocal(x)
    if _kind(x) == "f":
        return ew.div(ew.const(1.0, x), x)
    # NumPy's integer loop is C's `out = 1.0 / in`: a double converted as casts convert it
    return to_dtype(ew.div(np.float64(1.0), to_dtype(x, F64)), dtype_weak(x)[0])


def _complex_reciprocal(z: Any) -> Any:
    """1 / z in NumPy's reciprocal loop's order (not its division's: 1 / 0j is nan there),
    dividing by the larger part first."""
    x, y = cp.parts(z)
    one = ew.const(1.0, x)
    small_imag = ew.le(ew.abs(y), ew.abs(x))
    r1 = ew.div(y, x)
    d1 = ew.add(x, ew.mul(y, r1))
    r2 = ew.div(x, y)
    d2 = ew.add(ew.mul(x, r2), y)
    re = ew.select(small_imag, ew.div(one, d1), ew.div(r2, d2))
    im = ew.select(small_imag, ew.neg(ew.div(r1, d1)), ew.neg(ew.div(one, d2)))
    return cp.complex_(re, im)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NaN to `nan`, ±inf to `posinf`/`neginf` (default: the dtype's largest finite values).

    >>> nan_to_num(np.array([np.nan, -np.inf, 1.0]))[:2]
    array([ 0.00000000e+000, -1.79769313e+308])
    """
    (x,) = promote(x, where="rune_jit.numpy.nan_to_num")
    if _kind(x) != "f":
        return x
    big = float(np.finfo(dtype_weak(x)[0]).max)
    out = ew.select(ew.isnan(x), ew.const(nan, x), x)
    out = ew.select(ew.eq(x, ew.const(np.inf, x)), ew.const(big if posinf is None else posinf,
                                                             x), out)
    return ew.select(ew.eq(x, ew.const(-np.inf, x)),
                     ew.const(-big if neginf is None else neginf, x), out)


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001 (NumPy's name)
    """Round half to even at `decimals` digits, as NumPy does (x * 10**d, rint, / 10**d;
    integers with decimals < 0 in float64, then back).

    >>> round(np.array([0.5, 1.5, 2.675]), 2)
    array([0.5 , 1.5 , 2.68])
    >>> round(np.array([15, 25]), -1)
    array([20, 20])
    """
    _no_out(out, "round")
    decimals = int(decimals)
    (x,) = promote(a, where="rune_jit.numpy.round")
    dtype = dtype_weak(x)[0]
    if dtype.kind == "c":
        return each_part(lambda part: round(part, decimals), x)
    if dtype.kind in "iu" and decimals >= 0:
        return x
    if dtype.kind == "b" and decimals:
        raise TypeError("rune_jit.numpy.round: bools round with decimals=0 only (NumPy "
                        "cannot cast the scaled float64 back to bool)")
    if dtype.kind != "f":
        x = to_dtype(x, F16 if dtype.kind == "b" else F64)
    if decimals == 0:
        return ew.rint(x)
    with np.errstate(over="ignore"):  # 10**d past float16's range is inf, as in NumPy
        f = ew.const(10.0 ** abs(decimals), x)
    scale, back = (ew.mul, ew.div) if decimals > 0 else (ew.div, ew.mul)
    y = back(ew.rint(scale(x, f)), f)
    return to_dtype(y, dtype) if dtype.kind in "iu" else y


around = round


def conjugate(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.conjugate")
    if _kind(x) == "c":
        return cp.conj(x)
    return to_dtype(x, INT8) if _kind(x) == "b" else x


conj = conjugate


def real(val: Any) -> Any:
    (x,) = promote(val, where="rune_jit.numpy.real")
    return cp.real(x) if _kind(x) == "c" else x


def imag(val: Any) -> Any:
    (x,) = promote(val, where="rune_jit.numpy.imag")
    return cp.imag(x) if _kind(x) == "c" else _zeros_like(x)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of z, in (-pi, pi] (degrees with `deg`), as arctan2(imag, real).

    >>> print(angle(np.array([1j, -1.0])).tolist())
    [1.5707963267948966, 3.141592653589793]
    """
    (x,) = promote(z, where="rune_jit.numpy.angle")
    # NumPy's: arctan2(imag, real), of a real z arctan2(0, z) (a Python 0: its dtype rule)
    out = ew.arctan2(*cp.parts(x)[::-1]) if _kind(x) == "c" else arctan2(0, x)
    return ew.mul(out, ew.const(180.0 / math.pi, out)) if deg else out


def _zeros_like(x: Any) -> Any:
    from .creation import zeros_like

    return zeros_like(x)


_I0_SERIES = [1 / math.factorial(k) ** 2 for k in range(46)]  # in (x/2)², for |x| <= 20
_I0_ASYMPTOTIC = [math.prod(range(1, 2 * k, 2)) ** 2 / (math.factorial(k) * 8 ** k)
                  for k in range(30)]  # in 1/|x|, times exp(|x|) / sqrt(2 pi |x|)


def _horner(z, coefs):
    p = ew.add(ew.mul(z, ew.const(0.0, z)), ew.const(coefs[-1], z))
    for c in reversed(coefs[:-1]):
        p = ew.add(ew.mul(p, z), ew.const(c, z))
    return p


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0: its power series up to
    |x| = 20, the asymptotic series past it (computed in float64; floats keep their
    dtype, integers and bools give float64, as NumPy's).

    >>> print(np.round(i0(np.array([0.0, 1.0, -3.0])), 4).tolist())
    [1.0, 1.2661, 4.8808]
    """
    (x,) = promote(x, where="rune_jit.numpy.i0")
    dtype = dtype_weak(x)[0]
    a = ew.abs(to_dtype(x, F64))
    small = ew.le(a, np.float64(20.0))
    s = ew.select(small, a, np.float64(0.0))
    series = _horner(ew.mul(ew.mul(s, s), np.float64(0.25)), _I0_SERIES)
    b = ew.select(small, np.float64(21.0), a)
    half = ew.exp(ew.mul(b, np.float64(0.5)))  # exp(b) in two halves: finite up to I0's own
    scale = ew.mul(half, ew.div(half, ew.sqrt(ew.mul(np.float64(2 * math.pi), b))))
    asymptotic = ew.mul(scale, _horner(ew.div(np.float64(1.0), b), _I0_ASYMPTOTIC))
    out = ew.select(small, series, asymptotic)
    return to_dtype(out, dtype) if dtype.kind == "f" else out


# docstrings of the functions made by the factories above: (what, example, its output)
_DOCS = {
    "floor": ("The largest integer <= x (integers and bools are their own floor).",
              "floor(np.array([-1.5, 0.5, 2.0]))", "[-2.0, 0.0, 2.0]"),
    "ceil": ("The smallest integer >= x.", "ceil(np.array([-1.5, 0.5, 2.0]))",
             "[-1.0, 1.0, 2.0]"),
    "trunc": ("x rounded toward 0.", "trunc(np.array([-1.5, 0.5, 2.0]))", "[-1.0, 0.0, 2.0]"),
    "fix": ("x rounded toward 0 (trunc).", "fix(np.array([-1.5, 0.5, 2.0]))",
            "[-1.0, 0.0, 2.0]"),
    "rint": ("x rounded to the nearest integer, half to even.",
             "rint(np.array([0.5, 1.5, -2.5]))", "[0.0, 2.0, -2.0]"),
    "arcsin": ("The inverse sine.", "np.round(arcsin(np.array([0.0, 0.5, 1.0])), 4)",
               "[0.0, 0.5236, 1.5708]"),
    "arccos": ("The inverse cosine.", "np.round(arccos(np.array([0.0, 0.5, 1.0])), 4)",
               "[1.5708, 1.0472, 0.0]"),
    "arcsinh": ("The inverse hyperbolic sine.", "np.round(arcsinh(np.array([0.0, 1.0])), 4)",
                "[0.0, 0.8814]"),
    "arccosh": ("The inverse hyperbolic cosine.", "np.round(arccosh(np.array([1.0, 2.0])), 4)",
                "[0.0, 1.317]"),
    "arctanh": ("The inverse hyperbolic tangent.", "np.round(arctanh(np.array([0.0, 0.5])), 4)",
                "[0.0, 0.5493]"),
    # rounded: the last bit of a cube root, a logarithm or a power depends on the CPU's
    # vector paths (NumPy's and libmvec's): cbrt(27.0) is 3.0000000000000004 on an AVX2 CPU
    "cbrt": ("The real cube root.", "np.round(cbrt(np.array([-8.0, 27.0])), 4)", "[-2.0, 3.0]"),
    "log2": ("The base-2 logarithm.", "np.round(log2(np.array([1.0, 8.0, 0.5])), 4)",
             "[0.0, 3.0, -1.0]"),
    "log10": ("The base-10 logarithm.", "np.round(log10(np.array([1.0, 1000.0])), 4)",
              "[0.0, 3.0]"),
    "exp2": ("2 ** x.", "np.round(exp2(np.array([-1.0, 3.0])), 4)", "[0.5, 8.0]"),
    "hypot": ("sqrt(x1² + x2²) without overflow.", "np.round(hypot(np.array([3.0, 5.0]), 4.0), 4)",
              "[5.0, 6.4031]"),
    "copysign": ("|x1| with the sign of x2.", "copysign(np.array([1.5, -2.0]), -0.0)",
                 "[-1.5, -2.0]"),
    "fmod": ("C's remainder: the sign of the dividend (remainder/mod takes the divisor's).",
             "fmod(np.array([-7, 7]), 3)", "[-1, 1]"),
    "fmax": ("The larger of x1 and x2, ignoring a NaN.",
             "fmax(np.array([np.nan, 1.0]), np.array([2.0, np.nan]))", "[2.0, 1.0]"),
    "fmin": ("The smaller of x1 and x2, ignoring a NaN.",
             "fmin(np.array([np.nan, 1.0]), np.array([2.0, np.nan]))", "[2.0, 1.0]"),
    "degrees": ("Radians to degrees (rad2deg).", "degrees(np.array([np.pi, 1.0]))",
                "[180.0, 57.29577951308232]"),
    "radians": ("Degrees to radians (deg2rad).", "radians(np.array([180.0, 90.0]))",
                "[3.141592653589793, 1.5707963267948966]"),
    "isinf": ("Whether x is ±inf.", "isinf(np.array([np.inf, -np.inf, 1.0]))",
              "[True, True, False]"),
    "isposinf": ("Whether x is +inf.", "isposinf(np.array([np.inf, -np.inf, 1.0]))",
                 "[True, False, False]"),
    "isneginf": ("Whether x is -inf.", "isneginf(np.array([np.inf, -np.inf, 1.0]))",
                 "[False, True, False]"),
    "conjugate": ("The complex conjugate; a real x itself (bools become int8, as NumPy's "
                  "ufunc makes them).", "conjugate(np.array([1.5 + 2j, -2.0]))",
                  "[(1.5-2j), (-2-0j)]"),
    "real": ("The real part (a real array itself).",
             "real(np.array([1.5 + 2j, -2.0]))", "[1.5, -2.0]"),
    "imag": ("The imaginary part (zeros of a real array's dtype).",
             "imag(np.array([1.5 + 2j, -2.0]))", "[2.0, 0.0]"),
}
for _name, (_what, _call, _out) in _DOCS.items():
    globals()[_name].__doc__ = f"""{_what}

    >>> print({_call}.tolist())
    {_out}
    """

__all__ = [
    "angle", "arccos", "arccosh", "arcsin", "arcsinh", "arctanh", "around", "cbrt", "ceil", "conj",
    "conjugate", "copysign", "deg2rad", "degrees", "exp2", "fix", "float_power", "floor",
    "i0",
    "fmax", "fmin", "fmod", "heaviside", "hypot", "imag", "isinf", "isneginf", "isposinf",
    "log10", "log2", "logaddexp", "logaddexp2", "nan_to_num", "nextafter", "rad2deg",
    "radians", "real", "reciprocal", "rint", "round", "signbit", "sinc", "trunc",
]
# the ufuncs among them by NumPy's ufunc names, for np.NAME(traced) (__array_ufunc__, see
# numpy/__init__.py); the functions (round, fix, sinc, ...) dispatch through
# __array_function__ by their names
UFUNCS = {getattr(np, n).__name__: globals()[n] for n in __all__
          if isinstance(getattr(np, n, None), np.ufunc)}
