"""`ufunc.reduce` and `ufunc.accumulate` (rune_jit/_src/ufunc.py): the reductions and
running reductions where rune_jit.numpy has them, else a `scan` of the ufunc along the
axis (one step traced, whatever the length)."""

from __future__ import annotations

from typing import Any

from ..numpy import asarray, astype, concatenate, full, moveaxis, reshape
from ..numpy._core import normalize_axes, normalize_axis
from ..numpy.sorting import accumulate as running
from ..ops.scan import scan

# ufunc -> the rune_jit.numpy reduction that is its reduce
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_EMPTY_OK = ("add", "multiply", "logical_and", "logical_or")  # their reductions' identity
_RUNNING = ("add", "multiply", "maximum", "minimum")  # sorting.accumulate's


def reduce(u: Any, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any,
           where: Any) -> Any:
    """NumPy's `u.reduce(a, axis, dtype, keepdims=, initial=, where=)`."""
    from .. import numpy as rnp

    name = f"rune_jit.numpy.{u.__name__}.reduce"
    a = asarray(a) if dtype is None else astype(asarray(a), dtype)
    axes = normalize_axes(axis, a.ndim, name)
    fill = u.identity if initial is None else initial
    if where is not None:
        if fill is None:
            raise ValueError(f"{name}: where= needs initial= ({u.__name__} has no identity)")
        a = rnp.where(where, a, fill)
    if any(a.shape[i] == 0 for i in axes) and u.__name__ not in _EMPTY_OK:
        if fill is None:
            raise ValueError(f"{name}: zero-size array to reduction operation {u.__name__} "
                             "which has no identity")
        return full(_kept_shape(a.shape, axes, keepdims), fill, dtype=u(a, a).dtype)
    out = _reduced(u, a, axes, dtype, keepdims)
    return out if initial is None else u(out, initial)


def _kept_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _reduced(u: Any, a: Any, axes: tuple, dtype: Any, keepdims: bool) -> Any:
    from .. import numpy as rnp

    op = _REDUCTIONS.get(u.__name__)
    if op is not None:
        extra = {"dtype": dtype} if op in ("sum", "prod") else {}
        return getattr(rnp, op)(a, axes, keepdims=keepdims, **extra)
    if not axes:
        return a
    rest = tuple(n for i, n in enumerate(a.shape) if i not in axes)
    rows = reshape(moveaxis(a, axes, tuple(range(len(axes)))), (-1,) + rest)
    out = _fold(u, rows)
    return reshape(out, _kept_shape(a.shape, axes, True)) if keepdims else out


def _fold(u: Any, rows: Any) -> Any:
    """u(...u(u(rows[0], rows[1]), rows[2])..., rows[-1]), the steps after the first in a
    scan (the first gives the carry its dtype: an int's divide is a float)."""
    if rows.shape[0] == 1:
        return rows[0]
    first = u(rows[0], rows[1])
    if rows.shape[0] == 2:
        return first
    out, _ = scan(lambda c, x: (u(c, x), None), first, rows[2:])
    return out


def accumulate(u: Any, a: Any, axis: int, dtype: Any) -> Any:
    """NumPy's `u.accumulate(a, axis, dtype)`: out[i] = u(out[i-1], a[i]) along axis."""
    if u.__name__ in _RUNNING:
        return running(u.__name__, a, axis, dtype)
    a = asarray(a) if dtype is None else astype(asarray(a), dtype)
    ax = normalize_axis(axis, a.ndim, f"rune_jit.numpy.{u.__name__}.accumulate")
    rows = moveaxis(a, ax, 0)
    if rows.shape[0] == 0:
        return a
    head = astype(rows[0], u(rows[0], rows[0]).dtype)  # out[0] in the result's dtype
    if rows.shape[0] == 1:
        return moveaxis(head[None], 0, ax)
    _, ys = scan(lambda c, x: (u(c, x), u(c, x)), head, rows[1:])
    return moveaxis(concatenate([head[None], ys]), 0, ax)
