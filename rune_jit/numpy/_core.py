"""What every rune_jit.numpy function does first: accept, promote, broadcast."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import check_supported, python_scalar_dtype, result_type
from ..ops import elementwise as ew
from ..ops.shape import broadcast_in_dim
from ..trace import Tracer, type_of_value

PY_SCALARS = (bool, int, float)


def is_python_scalar(x: Any) -> bool:
    """A weak operand. np.float64 subclasses float, but NumPy scalars are strong (NEP 50)."""
    return isinstance(x, PY_SCALARS) and not isinstance(x, np.generic)


def as_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as NumPy takes one: an int or a sequence of ints."""
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def strong(x: Tracer) -> Tracer:
    """`x` as a strong value, as np.asarray makes a Python scalar a strong 0-d array."""
    return Tracer(x.var, x.builder) if x.weak else x


def weak(x: Tracer) -> Tracer:
    """A weak view of `x`: a new Tracer, since the builder shares tracers between equal
    equations (CSE) and marking one in place would make its other uses weak too."""
    return x if x.weak else Tracer(x.var, x.builder, weak=True)


def accept(x: Any, where: str = "rune_jit.numpy") -> Any:
    """A Tracer, a NumPy array of a supported dtype, or a Python scalar (kept weak)."""
    if isinstance(x, Tracer) or is_python_scalar(x):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        check_supported(x.dtype, where)
        return np.asarray(x)
    if isinstance(x, (list, tuple)):
        from .creation import array

        return array(x)
    raise TypeError(f"{where}: expected an array or a number, got {type(x).__name__}")


def dtype_weak(x: Any) -> tuple[np.dtype, bool]:
    if is_python_scalar(x):
        return python_scalar_dtype(x), True
    if isinstance(x, Tracer):
        return x.dtype, x.weak
    return x.dtype, False


def to_dtype(x: Any, dtype: np.dtype) -> Any:
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, dtype)
    return ew.convert(x, dtype)


def promote(*xs: Any, where: str = "rune_jit.numpy") -> list:
    """Operands converted to their NumPy 2 (NEP 50) common dtype."""
    xs = [accept(x, where) for x in xs]
    dtype = check_supported(result_type(*[dtype_weak(x) for x in xs]), where)
    return [to_dtype(x, dtype) for x in xs]


def shape_of(x: Any) -> tuple[int, ...]:
    return () if isinstance(x, PY_SCALARS) else type_of_value(x).shape


def broadcast_shapes(*shapes: tuple[int, ...], where: str = "rune_jit.numpy") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"{where}: operands could not be broadcast together with shapes {shown}"
        ) from None


def broadcast(*xs: Any, where: str = "rune_jit.numpy") -> list:
    """Operands of one shape, or 0-d (elementwise primitives broadcast scalars)."""
    shape = broadcast_shapes(*[shape_of(x) for x in xs], where=where)
    return [x if shape_of(x) in ((), shape) else broadcast_to_shape(x, shape) for x in xs]


def broadcast_to_shape(x: Any, shape: tuple) -> Any:
    xs = shape_of(x)
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def float_operands(*xs: Any, where: str) -> list:
    """Promoted, then made float (float64 for ints and bools), as np.sin and np.divide do."""
    xs = promote(*xs, where=where)
    dtype = dtype_weak(xs[0])[0]
    return xs if dtype.kind == "f" else [to_dtype(x, np.dtype(np.float64)) for x in xs]


def normalize_axis(axis: int, ndim: int, where: str) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{where}: axis {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return axis % ndim


def normalize_axes(axis: Any, ndim: int, where: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(normalize_axis(int(a), ndim, where) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axis in {axis}")
    return out


def as_value(x: Any) -> Any:
    """Python scalars become 0-d arrays of NumPy's default dtype for them."""
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, python_scalar_dtype(x))
    return x
