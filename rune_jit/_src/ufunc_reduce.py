"""`ufunc.reduce` and `ufunc.accumulate` (rune_jit/_src/ufunc.py): the reductions and
running reductions where rune_jit.numpy has them, else a `scan` of the ufunc along the
axis (one step traced, whatever the length)."""

from __future__ import annotations

from typing import Any

from .numpy import asarray, astype, concatenate, full, moveaxis, reshape
from .numpy._core import normalize_axes, normalize_axis
from .numpy.sorting import accumulate as running
from .control_flow import scan

# ufunc -> the rune_jit.numpy reduction that is its reduce
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_RUNNING = ("add", "multiply", "maximum", "minimum")  # sorting.accumulate's


def reduce(u: Any, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any,
           where: Any) -> Any:
    """NumPy's `u.reduce(a, axis, dtype, keepdims=, initial=, where=)`."""
    from . import numpy as rnp

    name = f"rune_jit.numpy.{u.__name__}.reduce"
    a = asarray(a) if dtype is None else astype(asarray(a), dtype)
    axes = normalize_axes(axis, a.ndim, name)
    empty = any(a.shape[i] == 0 for i in axes)
    if u.__name__ not in _REDUCTIONS:
        out = _folded(u, a, axes, initial, where, empty, name)
        return reshape(out, _kept_shape(a.shape, axes, True)) if keepdims else out
    fill = u.identity if u.identity is not None else initial  # maximum, minimum: initial
    if fill is None and (where is not None or empty):
        raise _no_start(name, u, empty)
    if where is not None:
        a = rnp.where(where, a, fill)
    if empty and u.identity is None:
        return full(_kept_shape(a.shape, axes, keepdims), initial, dtype=a.dtype)
    op = _REDUCTIONS[u.__name__]
    extra = {"dtype": dtype} if op in ("sum", "prod") else {}
    out = getattr(rnp, op)(a, axes, keepdims=keepdims, **extra)
    return out if initial is None else u(out, initial)  # these are commutative


def _no_start(name: str, u: Any, empty: bool) -> ValueError:
    if empty:
        return ValueError(f"{name}: zero-size array to reduction operation {u.__name__} "
                          "which has no identity")
    return ValueError(f"{name}: where= needs initial= ({u.__name__} has no identity)")


def _kept_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _folded(u: Any, a: Any, axes: tuple, initial: Any, where: Any, empty: bool,
            name: str) -> Any:
    """The left fold of `u` over `axes` (taken in order, as one), from `initial` (else
    from the identity where some elements are left out, else from the first element)."""
    from . import numpy as rnp

    if not axes:
        return a
    start = initial if initial is not None else (
        u.identity if where is not None or empty else None)
    if start is None and (where is not None or empty):
        raise _no_start(name, u, empty)
    rest = tuple(n for i, n in enumerate(a.shape) if i not in axes)

    def rows(x: Any) -> Any:
        return reshape(moveaxis(x, axes, tuple(range(len(axes)))), (-1,) + rest)

    mask = None if where is None else rows(rnp.broadcast_to(where, a.shape))
    return _fold(u, rows(a), start, mask)


def _fold(u: Any, rows: Any, start: Any, mask: Any) -> Any:
    """u(...u(u(start, rows[0]), rows[1])..., rows[-1]) (start None: rows[0] is the
    start), skipping the rows where `mask` is false. The first step is taken before the
    scan of the others: it gives the carry its dtype (an int's divide is a float)."""
    from . import numpy as rnp

    if start is None:
        start, rows = rows[0], rows[1:]
    else:
        # in the result's dtype, as NumPy casts initial (and an empty fold returns it)
        start = full(rows.shape[1:], start, dtype=u(rows[:1], rows[:1]).dtype)

    def step(c: Any, x: Any, m: Any) -> Any:
        return u(c, x) if m is None else rnp.where(m, u(c, x), c)

    if rows.shape[0] == 0:
        return start
    first = step(start, rows[0], None if mask is None else mask[0])
    if rows.shape[0] == 1:
        return first
    if mask is None:
        return scan(lambda c, x: (step(c, x, None), None), first, rows[1:])[0]
    return scan(lambda c, xm: (step(c, *xm), None), first, (rows[1:], mask[1:]))[0]


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
    def step(c: Any, x: Any) -> tuple:
        y = u(c, x)
        return y, y

    _, ys = scan(step, head, rows[1:])
    return moveaxis(concatenate([head[None], ys]), 0, ax)
