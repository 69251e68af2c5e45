"""Elementwise functions with NumPy's promotion and broadcasting."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ops import elementwise as ew
from ._core import accept, broadcast, dtype_weak, float_operands, promote, to_dtype


def _unary_float(name: str, op: Callable) -> Callable:
    def f(x: Any) -> Any:
        (x,) = float_operands(x, where=f"rune_jit.numpy.{name}")
        return op(x)

    f.__name__ = name
    return f


def _binary(name: str, op: Callable, make_float: bool = False,
            numeric: bool = False) -> Callable:
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, b: Any) -> Any:
        ops = float_operands(a, b, where=where) if make_float else promote(a, b, where=where)
        if numeric and dtype_weak(ops[0])[0].kind == "b":
            # NumPy computes these in int8, a dtype rune_jit does not have
            raise TypeError(f"{where} is not supported for bool operands; convert them to "
                            "an integer dtype first")
        return op(*broadcast(*ops, where=where))

    f.__name__ = name
    return f


sqrt = _unary_float("sqrt", ew.sqrt)
exp = _unary_float("exp", ew.exp)
expm1 = _unary_float("expm1", ew.expm1)
log = _unary_float("log", ew.log)
log1p = _unary_float("log1p", ew.log1p)
sin = _unary_float("sin", ew.sin)
cos = _unary_float("cos", ew.cos)
tan = _unary_float("tan", ew.tan)
tanh = _unary_float("tanh", ew.tanh)
sinh = _unary_float("sinh", ew.sinh)
cosh = _unary_float("cosh", ew.cosh)
arctan = _unary_float("arctan", ew.arctan)

add = _binary("add", ew.add)
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", ew.mul)
divide = _binary("divide", ew.div, make_float=True)
true_divide = divide
power = _binary("power", ew.pow, numeric=True)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
arctan2 = _binary("arctan2", ew.arctan2, make_float=True)
floor_divide = _binary("floor_divide", ew.floor_divide, numeric=True)
remainder = _binary("remainder", ew.remainder, numeric=True)
mod = remainder
less = _binary("less", ew.lt)
less_equal = _binary("less_equal", ew.le)
greater = _binary("greater", ew.gt)
greater_equal = _binary("greater_equal", ew.ge)
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)


def _as_bool(x: Any) -> Any:
    x = accept(x)
    if dtype_weak(x)[0].kind == "b":
        return to_dtype(x, np.dtype(bool))
    return not_equal(x, 0)


def _logical(name: str, op: Callable) -> Callable:
    def f(a: Any, b: Any) -> Any:
        return op(*broadcast(_as_bool(a), _as_bool(b), where=f"rune_jit.numpy.{name}"))

    f.__name__ = name
    return f


logical_and = _logical("logical_and", ew.logical_and)
logical_or = _logical("logical_or", ew.logical_or)
logical_xor = _logical("logical_xor", ew.logical_xor)


def logical_not(x: Any) -> Any:
    return ew.logical_not(_as_bool(x))


def negative(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.negative")
    return ew.neg(x)


def positive(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.positive")
    return x


def abs(x: Any) -> Any:  # noqa: A001 (NumPy's name)
    (x,) = promote(x, where="rune_jit.numpy.abs")
    return x if dtype_weak(x)[0].kind == "b" else ew.abs(x)


absolute = abs


def sign(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.sign")
    return ew.sign(x)


def square(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.square")
    return ew.mul(x, x)


def isnan(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.isnan")
    if dtype_weak(x)[0].kind != "f":
        return not_equal(x, x)  # never NaN; stays traced so shapes and staging agree
    return ew.isnan(x)


def isfinite(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.isfinite")
    if dtype_weak(x)[0].kind != "f":
        return equal(x, x)
    return ew.isfinite(x)


def where(condition: Any, x: Any, y: Any) -> Any:
    """Elements of `x` where `condition` holds, else of `y` (the three-argument form)."""
    x, y = promote(x, y, where="rune_jit.numpy.where")
    return ew.select(*broadcast(_as_bool(condition), x, y, where="rune_jit.numpy.where"))


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    if a_min is None and a_max is None:
        raise ValueError("rune_jit.numpy.clip: one of a_min and a_max must be given")
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out
