"""Sliding windows: lax.reduce_window, the padding helper padtype_to_pads, and the two
pieces convolutions share with it (dilate-and-pad, one strided view per window offset).

A window reduction is built from existing primitives: the operand is dilated and padded
(`pad` with strides places it, a padded mask selects the fill), each window offset is a
strided `slice`, and the views are stacked and reduced by the recognised computation.
Every derivative, batching rule and compiled loop comes from those primitives. The cost
is a stack of prod(window_dimensions) views of the output's size: a direct window loop
would read less memory, but would need a new primitive with all its rules.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..numpy import _core
from ..ops import elementwise as ew
from ..ops.shape import concatenate, full, pad_p, reshape, slice_op
from ..trace import bind1, type_of_value
from .reductions import apply_init, fold, monoid, scalar_init

PADDINGS = ("SAME", "SAME_LOWER", "VALID")


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """The (low, high) padding of each dimension that "SAME", "SAME_LOWER" or "VALID"
    means for a window of `window_shape` moved by `window_strides` (lax.padtype_to_pads):
    "SAME" gives ceil(n / stride) outputs, putting an odd pad's extra element last
    ("SAME_LOWER": first).

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    kind = str(padding).upper()
    if kind not in PADDINGS:
        raise ValueError(f"rune_jit.lax.padtype_to_pads: padding must be one of {PADDINGS} "
                         f"or a sequence of (low, high) pairs, got {padding!r}")
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        total = max(0, (-(-int(n) // int(s)) - 1) * int(s) + int(w) - int(n))
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def pairs(padding: Any, n: int, where: str) -> list[tuple[int, int]]:
    """Explicit padding as n (low, high) int pairs, checked."""
    try:
        out = [(int(lo), int(hi)) for lo, hi in padding]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a "
                        f"sequence of (low, high) int pairs, got {padding!r}") from None
    if len(out) != n:
        raise TypeError(f"{where}: padding has {len(out)} pairs for {n} dimensions")
    return out


def dilated(n: int, d: int) -> int:
    """The length of n elements with d - 1 holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def dilate_pad(x: Any, pads: Sequence[tuple[int, int]], dilation: Sequence[int],
               fill: Any, where: str) -> Any:
    """x with dilation[i] - 1 holes between neighbours along axis i, then pads[i] added
    low and high (a negative pad crops); holes and pads hold `fill`."""
    shape = type_of_value(x).shape
    grown = [max(lo, 0) + dilated(n, d) + max(hi, 0)
             for n, (lo, hi), d in zip(shape, pads, dilation)]
    if any(g + min(lo, 0) + min(hi, 0) < 0 for g, (lo, hi) in zip(grown, pads)):
        raise ValueError(f"{where}: negative padding {list(pads)} is larger than the "
                         f"dilated operand's shape {tuple(grown)}")
    lows = tuple(max(lo, 0) for lo, _ in pads)
    if tuple(grown) != shape:
        place = dict(shape=tuple(grown), starts=lows, strides=tuple(dilation))
        placed = bind1(pad_p, x, **place)
        if not _is_zero(fill):
            inside = bind1(pad_p, full(shape, np.asarray(True)), **place)
            placed = ew.select(inside, placed, full(tuple(grown), fill))
        x = placed
    starts = [-min(lo, 0) for lo, _ in pads]
    limits = [g + min(hi, 0) for g, (_, hi) in zip(grown, pads)]
    return slice_op(x, starts, limits)


def _is_zero(fill: Any) -> bool:
    return isinstance(fill, np.ndarray) and bool(fill == 0)


def window_views(x: Any, window: Sequence[int], strides: Sequence[int],
                 dilation: Sequence[int]) -> tuple[list, tuple[int, ...]]:
    """One strided view of x per window offset (offsets in row-major order) and the
    output shape: view[k][o] is the element at offset k of the window at output o."""
    shape = type_of_value(x).shape
    spans = [dilated(w, d) for w, d in zip(window, dilation)]
    out = tuple(0 if n < span else (n - span) // s + 1
                for n, span, s in zip(shape, spans, strides))
    views = []
    for offset in itertools.product(*(range(w) for w in window)):
        starts = [k * d if o else 0 for k, d, o in zip(offset, dilation, out)]
        limits = [b + (o - 1) * s + 1 if o else 0 for b, o, s in zip(starts, out, strides)]
        views.append(slice_op(x, starts, limits, strides))
    return views, out


def stacked(views: list, out: tuple[int, ...]) -> Any:
    """The views stacked along a new leading axis."""
    return concatenate([reshape(v, (1,) + out) for v in views], 0)


def _per_dim(value: Any, n: int, name: str, where: str) -> tuple[int, ...]:
    if value is None:
        return (1,) * n
    out = tuple(int(v) for v in value)
    if len(out) != n or any(v < 1 for v in out):
        raise TypeError(f"{where}: {name} must be {n} positive ints, got {value!r}")
    return out


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """lax.reduce_window: `computation` (add, mul, max or min) over each window of
    `window_dimensions`, moved by `window_strides`, over the operand dilated by
    `base_dilation` and padded by `padding` with `init_value`, which each window's result
    also folds in once (as XLA's). A max or min splits the gradient equally between tied
    elements of a window.

    >>> import numpy as np
    >>> print(reduce_window(np.arange(5.0), -np.inf, np.maximum, (2,), (1,), "VALID"))
    [1. 2. 3. 4.]
    """
    where = "rune_jit.lax.reduce_window"
    name = monoid(computation, where)
    x = _core.as_value(_core.accept(operand, where))
    t = type_of_value(x)
    init = scalar_init(init_value, t.dtype, where)
    window = _per_dim(window_dimensions, t.ndim, "window_dimensions", where)
    strides = _per_dim(window_strides, t.ndim, "window_strides", where)
    base = _per_dim(base_dilation, t.ndim, "base_dilation", where)
    wdil = _per_dim(window_dilation, t.ndim, "window_dilation", where)
    if isinstance(padding, str):
        grown = [dilated(n, b) for n, b in zip(t.shape, base)]
        pads = padtype_to_pads(grown, [dilated(w, d) for w, d in zip(window, wdil)],
                               strides, padding)
    else:
        pads = pairs(padding, t.ndim, where)
    x = dilate_pad(x, pads, base, init, where)
    views, out = window_views(x, window, strides, wdil)
    return apply_init(name, fold(name, stacked(views, out), (0,)), init)
