"""How a `rune_jit.lax` operation takes its operands: one dtype, no promotion.

`jax.lax` does not promote: `lax.add(float32, float64)` is a TypeError naming both
dtypes. A Python scalar (and a traced one: a Python number passed to `jit`) is weak
here, as it was in JAX before 0.5: it takes the dtype of the array operands when its
kind fits (a bool anywhere, an int into integers and floats, a float into floats).
Shapes broadcast as NumPy's do, as `jax.lax`'s n-ary operations do today.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..dtypes import check_supported, name, python_scalar_dtype
from ..numpy._core import (accept, broadcast_to_shape, is_python_scalar, narrows, shape_of,
                           weak_int_converted)
from ..ops import elementwise as ew
from ..trace import Tracer, type_of_value

FLOAT, INT, BOOL, COMPLEX = "f", "iu", "b", "c"
NUMERIC = FLOAT + INT
SIGNED = FLOAT + "i"
ANY = NUMERIC + BOOL
KIND_WORDS = {FLOAT: "floating-point", INT: "integer", NUMERIC: "integer or floating-point",
              SIGNED: "signed integer or floating-point",
              INT + BOOL: "integer or bool", ANY: "bool, integer or floating-point"}
# the array kinds a weak scalar of each kind may join
WEAK_JOINS = {"b": ANY, "i": NUMERIC, "u": NUMERIC, "f": FLOAT}


def is_weak(x: Any) -> bool:
    return is_python_scalar(x) or (isinstance(x, Tracer) and x.weak)


def dtype_of(x: Any) -> np.dtype:
    """The dtype `x` has standing alone (a Python scalar's: NumPy's default)."""
    return python_scalar_dtype(x) if is_python_scalar(x) else type_of_value(x).dtype


def same_dtype(xs: Sequence[Any], where: str) -> np.dtype:
    """The one dtype of the strong operands (or, all weak, of the weak ones)."""
    strong = [dtype_of(x) for x in xs if not is_weak(x)]
    candidates = strong or [dtype_of(x) for x in xs]
    if len(set(candidates)) > 1:
        raise TypeError(f"{where} requires arguments to have the same dtypes, got "
                        f"{', '.join(name(d) for d in candidates)}")
    dtype = candidates[0]
    for x in xs:
        if is_weak(x) and dtype.kind not in WEAK_JOINS[dtype_of(x).kind]:
            raise TypeError(f"{where} requires arguments to have the same dtypes, got "
                            f"{name(dtype)}, {name(dtype_of(x))} (a Python scalar)")
    return dtype


def check_kind(dtype: np.dtype, kinds: str, where: str) -> None:
    if dtype.kind not in kinds:
        raise TypeError(f"{where} does not accept dtype {name(dtype)}: it takes "
                        f"{KIND_WORDS[kinds]} operands")


def as_dtype(x: Any, dtype: np.dtype) -> Any:
    """`x` (of `dtype`, or weak) as a value of `dtype`. A Python int that does not fit is
    NumPy's OverflowError (a traced one's value is checked when it is known)."""
    if is_python_scalar(x):
        return np.asarray(x, dtype)
    if is_weak(x) and dtype_of(x).kind == "i" and narrows(dtype_of(x), dtype):
        weak_int_converted(x, dtype)
    return ew.convert(x, dtype)


def out_shape(xs: Sequence[Any], where: str) -> tuple[int, ...]:
    shapes = [shape_of(x) for x in xs]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise TypeError(f"{where} got incompatible shapes for broadcasting: "
                        f"{', '.join(str(tuple(s)) for s in shapes)}") from None


def operands(xs: Sequence[Any], kinds: str, where: str) -> list:
    """The operands of one dtype (checked against `kinds`) and broadcast to one shape,
    or left 0-d (the elementwise primitives take scalars among arrays)."""
    xs = [accept(x, where) for x in xs]
    dtype = same_dtype(xs, where)
    check_supported(dtype, where)
    check_kind(dtype, kinds, where)
    shape = out_shape(xs, where)
    xs = [as_dtype(x, dtype) for x in xs]
    return [x if shape_of(x) in ((), shape) else broadcast_to_shape(x, shape) for x in xs]


def array(x: Any, where: str) -> Any:
    """One operand as a strong value (a Python scalar as a 0-d array of its default
    dtype)."""
    x = accept(x, where)
    return np.asarray(x, python_scalar_dtype(x)) if is_python_scalar(x) else x
