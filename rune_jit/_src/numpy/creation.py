"""Array creation. Outside a trace these return plain NumPy arrays; inside one,
`zeros`/`ones`/`full` and friends are staged as a broadcast of a scalar so the
IR does not carry large constants."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import check_supported, python_scalar_dtype
from ..ops.shape import broadcast_in_dim_p, full as staged_full
from ..trace import Tracer, current, type_of_value
from ._core import PY_SCALARS, as_shape, cast, strong, to_dtype

FLOAT64 = np.dtype(np.float64)


def _dtype(dtype: Any, default: np.dtype, where: str) -> np.dtype:
    return check_supported(np.dtype(dtype) if dtype is not None else default, where)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    where = "rune_jit.numpy.full"
    shape = as_shape(shape)
    if isinstance(fill_value, Tracer):
        dt = _dtype(dtype, fill_value.dtype, where)
        value = to_dtype(fill_value, dt)
        if fill_value.shape != ():
            from .shapes import broadcast_to

            return broadcast_to(value, shape)
        return staged_full(shape, value)
    default = (python_scalar_dtype(fill_value) if isinstance(fill_value, PY_SCALARS)
               else np.asarray(fill_value).dtype)
    dt = _dtype(dtype, default, where)
    if current() is None or np.ndim(fill_value) != 0:
        return np.full(shape, fill_value, dt)
    return staged_full(shape, np.asarray(fill_value, dt))


def zeros(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 0, _dtype(dtype, FLOAT64, "rune_jit.numpy.zeros"))


def ones(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 1, _dtype(dtype, FLOAT64, "rune_jit.numpy.ones"))


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Any:
    t = type_of_value(a)
    return full(t.shape, fill_value, dtype if dtype is not None else t.dtype)


def zeros_like(a: Any, dtype: Any = None) -> Any:
    return full_like(a, 0, dtype)


def ones_like(a: Any, dtype: Any = None) -> Any:
    return full_like(a, 1, dtype)


def array(obj: Any, dtype: Any = None) -> Any:
    """Like np.array; a (nested) list holding traced values is stacked."""
    if isinstance(obj, Tracer):
        return cast(strong(obj), _dtype(dtype, obj.dtype, "rune_jit.numpy.array"))
    if isinstance(obj, (list, tuple)) and _holds_tracer(obj):
        from .shapes import astype, stack

        out = stack([array(x) for x in obj])
        return astype(out, dtype) if dtype is not None else out
    out = np.array(obj, dtype=dtype)
    check_supported(out.dtype, "rune_jit.numpy.array")
    return _staged(out) if current() is not None and out.ndim else out


def _staged(x: np.ndarray) -> Tracer:
    """A constant as a value of the trace being recorded, as every rune_jit.numpy result
    there is: so that `rnp.asarray(table)[:, i]` with a traced `i` indexes with
    rune_jit's rules (a NumPy array cannot be indexed by a traced value). Never folded
    back into a NumPy array, as a constant of one element would be."""
    (out,) = current().emit(broadcast_in_dim_p, [x], dict(
        shape=x.shape, broadcast_dims=tuple(range(x.ndim))), fold=False)
    return out


def _holds_tracer(obj: Any) -> bool:
    if isinstance(obj, Tracer):
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_tracer(x) for x in obj)


def asarray(obj: Any, dtype: Any = None) -> Any:
    return array(obj, dtype)


def _concrete(x: Any, where: str) -> Any:
    if isinstance(x, Tracer):
        x._concrete(where)
    return x


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Sizes are static: the bounds must be concrete numbers."""
    args = [_concrete(a, "rune_jit.numpy.arange (its bounds fix the shape)")
            for a in (start, stop, step) if a is not None]
    out = np.arange(*args, dtype=dtype)
    check_supported(out.dtype, "rune_jit.numpy.arange")
    return out


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             dtype: Any = None) -> Any:
    where = "rune_jit.numpy.linspace (traced bounds are not supported)"
    out = np.linspace(_concrete(start, where), _concrete(stop, where), num, endpoint,
                      dtype=dtype)
    check_supported(out.dtype, "rune_jit.numpy.linspace")
    return out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    return np.eye(N, M, k, dtype=_dtype(dtype, FLOAT64, "rune_jit.numpy.eye"))
