"""What every rune_jit.numpy function does first: accept, promote, broadcast."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..dtypes import check_supported, float_for, int_bounds, python_scalar_dtype, result_type
from ..ops import complex_parts as cp
from ..ops import elementwise as ew
from ..ops.shape import broadcast_in_dim
from ..trace import Tracer, type_of_value
from ..call.weak_ints import weak_int_converted
from ..values import PY_SCALARS, array_of, as_value, is_python_scalar  # noqa: F401 (shared)

def as_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as NumPy takes one: an int or a sequence of ints."""
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def strong(x: Tracer) -> Tracer:
    """`x` as a strong value, as np.asarray makes a Python scalar a strong 0-d array."""
    return Tracer(x.ir_var, x.builder) if x.weak else x


def weak(x: Tracer) -> Tracer:
    """A weak view of `x`: a new Tracer, since the builder shares tracers between equal
    equations (CSE) and marking one in place would make its other uses weak too."""
    return x if x.weak else Tracer(x.ir_var, x.builder, weak=True)


def accept(x: Any, where: str = "rune_jit.numpy") -> Any:
    """A Tracer, an array of a supported dtype (see `array_of`: array-likes are
    converted, ndarray subclasses rejected), or a Python scalar (kept weak)."""
    if isinstance(x, Tracer) or is_python_scalar(x):
        return x
    arr = array_of(x, f"{where}: an operand")
    if arr is not None:
        check_supported(arr.dtype, where)
        return arr
    if isinstance(x, (list, tuple)):
        from .creation import array

        return array(x)
    raise TypeError(f"{where}: expected an array or a number, got {type(x).__name__}")


def static(x: Any, what: str, where: str) -> Any:
    """x, unless it is traced: a TypeError naming `what` (a length, a shift...) that fixes
    the shape of the result."""
    if isinstance(x, Tracer):
        raise TypeError(f"{where}: {what} must be static (Python ints or a NumPy array), "
                        "since it fixes the shape of the result; got a traced value")
    return x


def dtype_weak(x: Any) -> tuple[np.dtype, bool]:
    if is_python_scalar(x):
        if isinstance(x, int) and not isinstance(x, bool):
            # any Python int promotes as a weak int; whether it fits the result is its
            # conversion's question (`to_dtype`), as in NumPy (2**63 fits uint64)
            return np.dtype(np.int64), True
        return python_scalar_dtype(x), True
    if isinstance(x, Tracer):
        return x.dtype, x.weak
    return x.dtype, False


def to_dtype(x: Any, dtype: np.dtype) -> Any:
    """`x` converted to `dtype`. A complex `x` to a real dtype is a TypeError: a function
    that converts its operands to floats has no complex form, and dropping the imaginary
    part would be a wrong answer (the user's casts go through `cast`)."""
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, dtype)
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind != "c":
        raise TypeError(f"rune_jit: this function does not take complex values (it would "
                        f"compute in {np.dtype(dtype).name}); pass rnp.real(z), rnp.imag(z) "
                        "or rnp.abs(z) if that is what you mean")
    return ew.convert(x, dtype)


def cast(x: Any, dtype: np.dtype) -> Any:
    """The user's cast (astype, array(..., dtype=)): complex to real warns and keeps the
    real part, as NumPy's casts do (ComplexWarning); to bool it is x != 0, silently."""
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind == "b":
        return ew.ne(x, ew.const(0.0, x))
    if dtype_weak(x)[0].kind == "c" and np.dtype(dtype).kind != "c":
        warnings.warn(np.exceptions.ComplexWarning(
            "Casting complex values to real discards the imaginary part"), stacklevel=3)
        x = cp.real(x)
    return to_dtype(x, dtype)


def promote(*xs: Any, where: str = "rune_jit.numpy") -> list:
    """Operands converted to their NumPy 2 (NEP 50) common dtype. A weak int that does
    not fit it is an OverflowError, as in NumPy: a Python int here (np.asarray raises),
    a traced one when its value is known (`weak_int_converted`)."""
    xs = [accept(x, where) for x in xs]
    dtype = check_supported(result_type(*[dtype_weak(x) for x in xs]), where)
    for x in xs:
        if isinstance(x, Tracer) and x.weak and x.dtype.kind == "i" and narrows(x.dtype, dtype):
            weak_int_converted(x, dtype)
    return [to_dtype(x, dtype) for x in xs]


def real_only(x: Any, where: str) -> Any:
    """`x`, unless it is complex: a TypeError that names `where` (a function with no
    complex form refuses rather than drop the imaginary part)."""
    if dtype_weak(x)[0].kind == "c":
        raise TypeError(f"{where} does not take complex values (got "
                        f"{dtype_weak(x)[0].name})")
    return x


def each_part(f: Any, x: Any) -> Any:
    """f of each part of a complex x, put together (NumPy rounds complex values so, and
    corrcoef clips them)."""
    re, im = cp.parts(x)
    return cp.complex_(f(re), f(im))


def narrows(src: np.dtype, dst: np.dtype) -> bool:
    """Converting integers of `src` to `dst` can lose values (a weak int64 to uint8)."""
    if dst.kind not in "iu":
        return False
    lo, hi = int_bounds(src)
    dlo, dhi = int_bounds(dst)
    return lo < dlo or hi > dhi


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


def float_operands(*xs: Any, where: str, widest: bool = False,
                   complex_ok: bool = False) -> list:
    """The operands in the float dtype NumPy's loop search picks for np.sin, np.arctan2:
    the smallest float that every operand casts to safely (`dtypes.float_for`: float16
    for bool, int8, uint8; float32 for int16, uint16), or, with `widest`, float64 when no
    operand is a float (np.divide's rule). Complex operands stay complex with
    `complex_ok`, else they are a TypeError (`real_only`)."""
    xs = [accept(x, where) for x in xs]
    to = _float_dtype([dtype_weak(x) for x in xs], widest)
    if not complex_ok:
        real_only(np.empty(0, to), where)
    promote(*xs, where=where)  # for its checks (a weak int narrowed: OverflowError)
    return [to_dtype(x, to) for x in xs]


KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _float_dtype(pairs: list[tuple[np.dtype, bool]], widest: bool) -> np.dtype:
    """NumPy's loop search with weak scalars: a Python scalar of a kind above every
    array's (a float with integer arrays) counts as its default dtype (float64); one of a
    kind the arrays have counts for nothing."""
    strong = [d for d, w in pairs if not w]
    if not strong:
        return float_for(result_type(*pairs))
    top = max(KIND_RANK[d.kind] for d in strong)
    counted = strong + [d for d, w in pairs if w and KIND_RANK[d.kind] > top]
    if widest and all(d.kind not in "fc" for d in counted):
        return np.dtype(np.float64)
    return np.result_type(*[float_for(d) for d in counted])


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
