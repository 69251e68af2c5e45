"""Elementwise functions with NumPy's promotion and broadcasting."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..dtypes import int_bounds, result_type
from ..ops import elementwise as ew
from ..trace import Tracer
from . import complex_order, fast
from ._core import (accept, broadcast, dtype_weak, float_operands,
                    is_python_scalar, promote, shape_of, to_dtype)

INT8 = np.dtype(np.int8)


def _takes_complex(op: Callable) -> bool:
    """Whether the elementwise primitive behind `op` has a complex form (sin; not cbrt)."""
    return "c" in ew.NUMPY[op.__name__][1]


def _unary_float(name: str, op: Callable) -> Callable:
    def f(x: Any) -> Any:
        (x,) = float_operands(x, where=f"rune_jit.numpy.{name}",
                              complex_ok=_takes_complex(op))
        return op(x)

    f.__name__ = name
    return fast.unary(f, op)


def _binary(name: str, op: Callable, make_float: str | None = None,
            numeric: bool = False) -> Callable:
    """A NumPy binary function: promoted, broadcast. `make_float` "smallest" computes ints
    in the smallest float that holds them (np.arctan2), "widest" in float64 (np.divide);
    `numeric` computes bools in int8, as NumPy's integer loops do."""
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, b: Any) -> Any:
        if make_float:
            ops = float_operands(a, b, where=where, widest=make_float == "widest",
                                 complex_ok=_takes_complex(op))
        else:
            ops = promote(a, b, where=where)
        if numeric and dtype_weak(ops[0])[0].kind == "b":
            ops = [to_dtype(x, INT8) for x in ops]
        if op in ORDERED and dtype_weak(ops[0])[0].kind == "c":
            return ORDERED[op](op, *broadcast(*ops, where=where))
        return op(*broadcast(*ops, where=where))

    f.__name__ = name
    return fast.binary(f, op, fast.accepted(op, floats_only=bool(make_float),
                                            bools=not numeric))


# the operations that order their operands: of complex values, NumPy's lexicographic order
ORDERED = {**dict.fromkeys((ew.lt, ew.le, ew.gt, ew.ge), complex_order.compare),
           ew.max: complex_order.pick, ew.min: complex_order.pick}


def _comparison(name: str, op: Callable, python_op: Callable) -> Callable:
    """A comparison, which NumPy 2 defines for any Python int, in range of the other
    operand's dtype or not (`np.uint8(3) < -1` is False, where `np.uint8(3) + (-1)`
    raises OverflowError)."""
    plain = _binary(name, op)

    def f(a: Any, b: Any) -> Any:
        exact = _compare_python_int(a, b, op, python_op, f"rune_jit.numpy.{name}")
        return plain(a, b) if exact is None else exact

    f.__name__ = name
    # two arrays only: a Python int may lie outside the array's dtype (the general path)
    return fast.binary(f, op, fast.accepted(op), scalars=False)


def _compare_python_int(a, b, op, python_op, where):
    """The comparison of an integer array with a weak int that its dtype may not hold, or
    None for any other operands. A Python int outside the dtype's range compares the same
    with every element (a constant); a traced weak int (an int64 of unknown value)
    compares exactly in int64 (uint64: by its sign first)."""
    weak_at = [i for i, x in enumerate((a, b)) if _weak_int(x)]
    if len(weak_at) != 1:
        return None
    k = weak_at[0]
    v, x = (a, b)[k], accept((a, b)[1 - k])
    dtype = dtype_weak(x)[0]
    if dtype.kind not in "iu" or dtype_weak(x)[1]:
        return None
    order = (lambda p, q: (q, p)) if k == 0 else (lambda p, q: (p, q))  # back to (a, b)
    if not isinstance(v, Tracer):
        lo, hi = int_bounds(dtype)
        if lo <= v <= hi:
            return None
        # every element is inside the range, and v past one end of it
        value = python_op(*order(0, 1 if v > hi else -1))
        return np.full(shape_of(x), value)
    if dtype == np.int64:
        return None
    if dtype == np.uint64:
        below = np.asarray(python_op(*order(0, -1)))  # v < 0: below every element
        exact = op(*broadcast(*order(x, ew.convert(v, dtype))))
        return ew.select(*broadcast(ew.lt(v, np.int64(0)), below, exact))
    return op(*broadcast(*order(ew.convert(x, np.dtype(np.int64)), v)))


def _weak_int(x: Any) -> bool:
    if is_python_scalar(x):
        return isinstance(x, int) and not isinstance(x, bool)
    return isinstance(x, Tracer) and x.weak and x.dtype.kind == "i"


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
divide = _binary("divide", ew.div, make_float="widest")
true_divide = divide
power = _binary("power", ew.pow, numeric=True)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
arctan2 = _binary("arctan2", ew.arctan2, make_float="smallest")
floor_divide = _binary("floor_divide", ew.floor_divide, numeric=True)
remainder = _binary("remainder", ew.remainder, numeric=True)
mod = remainder
less = _comparison("less", ew.lt, operator.lt)
less_equal = _comparison("less_equal", ew.le, operator.le)
greater = _comparison("greater", ew.gt, operator.gt)
greater_equal = _comparison("greater_equal", ew.ge, operator.ge)
equal = _comparison("equal", ew.eq, operator.eq)
not_equal = _comparison("not_equal", ew.ne, operator.ne)


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
    if dtype_weak(x)[0].kind == "b":
        raise TypeError("rune_jit.numpy.positive is not defined for bool (as in NumPy)")
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
    if dtype_weak(x)[0].kind == "b":
        x = to_dtype(x, INT8)  # NumPy squares bools in int8
    return ew.mul(x, x)


def isnan(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.isnan")
    if dtype_weak(x)[0].kind not in "fc":
        return not_equal(x, x)  # never NaN; stays traced so shapes and staging agree
    return ew.isnan(x)


def isfinite(x: Any) -> Any:
    (x,) = promote(x, where="rune_jit.numpy.isfinite")
    if dtype_weak(x)[0].kind not in "fc":
        return equal(x, x)
    return ew.isfinite(x)


def where(condition: Any, x: Any, y: Any) -> Any:
    """Elements of `x` where `condition` holds, else of `y` (the three-argument form). A
    Python int that the result's integer dtype does not hold wraps into it, as NumPy's
    where casts it (np.where(False, uint8_array, -1) is 255)."""
    dtype = result_type(*[dtype_weak(accept(v, "rune_jit.numpy.where")) for v in (x, y)])
    x, y = (_wrapped(v, dtype) for v in (x, y))
    x, y = promote(x, y, where="rune_jit.numpy.where")
    return ew.select(*broadcast(_as_bool(condition), x, y, where="rune_jit.numpy.where"))


def _wrapped(v: Any, dtype: np.dtype) -> Any:
    """A Python int out of an integer dtype's range as that dtype wraps it; else v."""
    if not (_weak_int(v) and not isinstance(v, Tracer) and dtype.kind in "iu"):
        return v
    lo, hi = int_bounds(dtype)
    if lo <= v <= hi:
        return v
    bits = 8 * dtype.itemsize
    return np.asarray(v % 2**bits, f"u{dtype.itemsize}").view(dtype)


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    if a_min is None and a_max is None:
        raise ValueError("rune_jit.numpy.clip: one of a_min and a_max must be given")
    dtype, weak = dtype_weak(accept(a, "rune_jit.numpy.clip"))
    if dtype.kind in "iu" and not weak:  # as NumPy 2: a Python int bound past the end of
        lo, hi = int_bounds(dtype)        # the range it does not bind is no bound at all
        a_min = None if _weak_int(a_min) and not isinstance(a_min, Tracer) and a_min < lo \
            else a_min
        a_max = None if _weak_int(a_max) and not isinstance(a_max, Tracer) and a_max > hi \
            else a_max
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


# ------------------------------------------------------------- bits


def _bits_operands(name: str, *xs: Any) -> tuple[list, bool]:
    """Promoted integer or bool operands, and whether they are bools (NumPy has no
    bitwise loops for floats: a TypeError)."""
    where = f"rune_jit.numpy.{name}"
    xs = promote(*xs, where=where)
    dtype = dtype_weak(xs[0])[0]
    if dtype.kind not in "iub":
        raise TypeError(f"{where} is not supported for {dtype} (NumPy's {name} takes "
                        "integers and bools)")
    return xs, dtype.kind == "b"


def _bitwise(name: str, op: Callable, logical: Callable) -> Callable:
    def f(a: Any, b: Any) -> Any:
        (a, b), bools = _bits_operands(name, a, b)
        return (logical if bools else op)(*broadcast(a, b, where=f"rune_jit.numpy.{name}"))

    f.__name__ = name
    f.__doc__ = (f"NumPy's {name}: the bits of integers (`{name}(12, 10)` on int arrays), "
                 "or the logical operation of bools.")
    return f


bitwise_and = _bitwise("bitwise_and", ew.bitwise_and, ew.logical_and)
bitwise_or = _bitwise("bitwise_or", ew.bitwise_or, ew.logical_or)
bitwise_xor = _bitwise("bitwise_xor", ew.bitwise_xor, ew.logical_xor)


def invert(x: Any) -> Any:
    """NumPy's invert (bitwise_not): ~x of integers, logical not of bools.

    >>> invert(np.array([0, 5], np.uint8))
    array([255, 250], dtype=uint8)
    """
    (x,), bools = _bits_operands("invert", x)
    return ew.logical_not(x) if bools else ew.bitwise_not(x)


bitwise_not = invert


def _shift(name: str, op: Callable) -> Callable:
    def f(a: Any, b: Any) -> Any:
        (a, b), bools = _bits_operands(name, a, b)
        if bools:  # NumPy shifts bools in int8
            a, b = to_dtype(a, INT8), to_dtype(b, INT8)
        return op(*broadcast(a, b, where=f"rune_jit.numpy.{name}"))

    f.__name__ = name
    f.__doc__ = (f"NumPy's {name}: arithmetic for signed integers, logical for unsigned; a "
                 "count of the bit width or more (or a negative one) shifts all bits out.")
    return f


left_shift = _shift("left_shift", ew.shift_left)
right_shift = _shift("right_shift", ew.shift_right)


def bitwise_count(x: Any) -> Any:
    """NumPy's bitwise_count: the number of one bits of |x|, as uint8.

    >>> bitwise_count(np.array([7, -1]))
    array([3, 1], dtype=uint8)
    """
    (x,), bools = _bits_operands("bitwise_count", x)
    return ew.bitwise_count(to_dtype(x, np.dtype(np.uint8)) if bools else x)
