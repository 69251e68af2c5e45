"""Elementwise primitives on registers: one element, or a vector of lanes (lane blocks).

One row per primitive. A primitive without a row here is lowered through its portable
element rule (see lower.py); math functions call libm and, vectorized, libmvec (tanh is
our own, defined once per module: tanh.py).
"""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir
import numpy as np

from ....ops import elementwise as ew
from ....ops.linalg import diag_solve_p
from ..codegen import arith as A
from ..codegen import mathlib
from ..codegen.lower import ELEMENTS, element_lowering
from ..codegen.tanh import tanh


def _math(name: str) -> Callable:
    return lambda lw, *xs: mathlib.call(lw.b, name, *xs)


def _compare(op: str) -> Callable:
    return lambda lw, x, y: A.compare(lw.b, op, x, y)


def _power(lw, x, y):
    if A.is_float(x) and _is_constant(y, 2.0):  # x * x is pow's correctly rounded square
        return A.mul(lw.b, x, x)
    if A.is_float(x) and _is_constant(y, 1.0):  # pow(x, 1) is x, NaN and -0.0 too: the
        return x  # derivative of x ** 2 (2 * x ** 1) calls no pow per element
    if A.is_float(x):
        return mathlib.call(lw.b, "pow", x, y)
    if not A.is_unsigned(y):
        lw.fail_if_any(lw.b.icmp_signed("<", y, A.const_like(y, 0)), "negative_power")
    return A.int_power(lw.fn, x, y)


def _is_constant(y, value: float) -> bool:
    """Whether y is the constant `value` (an exponent written as a literal), in every
    lane."""
    values = y.constant if isinstance(y, ir.Constant) else None
    values = values if isinstance(values, list) else [values]
    return all(isinstance(v, ir.Constant) and v.constant == value or v == value
               for v in values)


def _divmod(part: int) -> Callable:
    return lambda lw, x, y: (A.float_divmod if A.is_float(x) else A.int_divmod)(lw.b, x, y)[part]


def _rounding(intrinsic: str) -> Callable:
    return lambda lw, x: A.in_float32(lw.b, lambda v: A.intrinsic(lw.b, intrinsic, v), x)


ROWS: dict[str, Callable] = {
    "add": lambda lw, x, y: A.add(lw.b, x, y),
    "sub": lambda lw, x, y: A.sub(lw.b, x, y),
    "mul": lambda lw, x, y: A.mul(lw.b, x, y),
    "div": lambda lw, x, y: lw.b.fdiv(x, y),
    "neg": lambda lw, x: A.neg(lw.b, x),
    "abs": lambda lw, x: A.absolute(lw.b, x),
    "sign": lambda lw, x: A.sign(lw.b, x),
    "sqrt": lambda lw, x: A.intrinsic(lw.b, "sqrt", x),
    "max": lambda lw, x, y: A.maximum(lw.b, x, y, True),
    "min": lambda lw, x, y: A.maximum(lw.b, x, y, False),
    "pow": _power,
    "floor_divide": _divmod(0),
    "remainder": _divmod(1),
    "lt": _compare("<"), "le": _compare("<="), "gt": _compare(">"), "ge": _compare(">="),
    "eq": _compare("=="), "ne": _compare("!="),
    "logical_and": lambda lw, x, y: lw.b.and_(x, y),
    "logical_or": lambda lw, x, y: lw.b.or_(x, y),
    "logical_xor": lambda lw, x, y: lw.b.xor(x, y),
    "logical_not": lambda lw, x: lw.b.xor(x, A.const_like(x, 1)),
    "isnan": lambda lw, x: lw.b.fcmp_unordered("uno", x, x),
    "isfinite": lambda lw, x: lw.b.fcmp_ordered(
        "<", A.intrinsic(lw.b, "fabs", x), A.const_like(x, float("inf"))),
    "select": lambda lw, p, x, y: lw.b.select(p, x, y),
    "fma": lambda lw, x, y, z: A.in_float32(lw.b, lambda *v: A.intrinsic(lw.b, "fma", *v),
                                            x, y, z),
    "bitwise_and": lambda lw, x, y: lw.b.and_(x, y),
    "bitwise_or": lambda lw, x, y: lw.b.or_(x, y),
    "bitwise_xor": lambda lw, x, y: lw.b.xor(x, y),
    "bitwise_not": lambda lw, x: A.bitwise_not(lw.b, x),
    "shift_left": lambda lw, x, y: A.shift_left(lw.b, x, y),
    "shift_right": lambda lw, x, y: A.shift_right(lw.b, x, y),
    "bitwise_count": lambda lw, x: A.convert(
        lw.b, A.population_count(lw.b, A.absolute(lw.b, x)), np.dtype(np.uint8)),
    "bitcast_convert": lambda lw, x, *, dtype: A.bitcast(lw.b, x, np.dtype(dtype)),
    "convert": lambda lw, x, *, dtype: A.convert(lw.b, x, np.dtype(dtype)),
    **{n: _math(n) for n in ("sin", "cos", "tan", "exp", "log", "expm1", "log1p", "sinh",
                             "cosh", "arctan", "arctan2", "erf", "erfc", "arcsin", "arccos",
                             "arcsinh", "arccosh", "arctanh", "cbrt", "log2", "log10", "exp2",
                             "hypot")},
    "tanh": lambda lw, x: tanh(lw.b, x),  # our own, not libm's (see tanh.py)
    # rounding: LLVM's intrinsics (rint rounds half to even, as NumPy's); halves in float32
    **{n: _rounding(i) for n, i in (("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"),
                                    ("rint", "roundeven"))},
    "copysign": lambda lw, x, y: A.in_float32(
        lw.b, lambda *v: A.intrinsic(lw.b, "copysign", *v), x, y),
    "fmod": lambda lw, x, y: A.c_remainder(lw.b, x, y),
}
ELEMENTS.update({ew.P[name]: rule for name, rule in ROWS.items()})


@element_lowering(diag_solve_p)
def _diag_solve(lw, d, b):
    """b / d, where a zero on the diagonal fails as singular (not inf or NaN)."""
    lw.fail_if_any(lw.b.fcmp_ordered("==", d, A.const_like(d, 0)), "singular")
    return lw.b.fdiv(b, d)
