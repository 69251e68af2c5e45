"""x[key] for ints, slices, None, Ellipsis and traced integer scalars (index arrays and
masks: numpy/advanced.py).

A traced index i counts from the end when negative (as NumPy's does) and is
then clamped into bounds, since a compiled program cannot raise IndexError
without a round trip: x[i] with i >= n reads x[n-1], with i < -n reads x[0].
Static out-of-range ints raise IndexError, as in NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import elementwise as ew
from ..ops.index import dynamic_slice
from ..ops.shape import reshape, rev, slice_op
from ..trace import Tracer
from .advanced import is_advanced, take


def _index(k: Any) -> Any:
    """A key entry checked, with a 0-d integer array made the int it stands for (as in
    NumPy); a bool is a mask in NumPy (x[True] adds an axis), never the index 1."""
    if isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu":
        return int(k)
    if isinstance(k, (list, np.ndarray, bool, np.bool_)) or (
            isinstance(k, Tracer) and k.shape != ()):
        raise IndexError("rune_jit: indexing with arrays (advanced indexing) is not "
                         "supported; use ints, slices, None and integer scalars")
    if isinstance(k, Tracer) and k.dtype.kind not in "iu":
        raise IndexError(f"rune_jit: a traced index must be an integer, got {k.dtype}")
    if isinstance(k, Tracer) and k.dtype.kind == "u":  # starts are signed (they may count
        return ew.convert(k, np.dtype(np.int64))         # from the end)
    return k


def _expand(key: Any, ndim: int) -> list:
    key = [_index(k) for k in (key if isinstance(key, tuple) else (key,))]
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]  # `is`: == would trace
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {n_real} were indexed")
    fill = [slice(None)] * (ndim - n_real)
    if ellipses:
        i = ellipses[0]
        return key[:i] + fill + key[i + 1:]
    return key + fill


def getitem(x: Any, key: Any) -> Any:
    if is_advanced(key):  # index arrays or masks: a gather (numpy/advanced.py)
        return take(x, key)
    shape = x.shape
    key = _expand(key, len(shape))
    starts, limits, strides, flips, out_shape, dynamic = [], [], [], [], [], {}
    axis = 0
    for k in key:
        if k is None:
            out_shape.append(("new", 1))
            continue
        n = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step < 0:  # read forwards, then reverse
                count = len(range(start, stop, step))
                start, stop, step = start + (count - 1) * step, start + 1, -step
                start, stop = (start, stop) if count else (0, 0)
                flips.append(axis)
            starts.append(start), limits.append(max(stop, start)), strides.append(step)
            out_shape.append(("keep", axis))
        elif isinstance(k, Tracer):
            dynamic[axis] = k
            starts.append(0), limits.append(n), strides.append(1)
        else:
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            starts.append(i), limits.append(i + 1), strides.append(1)
        axis += 1
    y = slice_op(x, starts, limits, strides)
    if dynamic:
        y = _dynamic(y, dynamic)
    y = rev(y, tuple(flips))
    sliced = y.shape if hasattr(y, "shape") else np.shape(y)
    final = [1 if kind == "new" else sliced[ax] for kind, ax in out_shape]
    return reshape(y, tuple(final))


def _dynamic(y: Any, dynamic: dict[int, Tracer]) -> Any:
    """Read one element along each traced axis, clamped; other axes stay whole."""
    shape = y.shape
    starts = []
    for ax, n in enumerate(shape):
        if ax in dynamic:
            i = dynamic[ax]
            zero = np.zeros((), i.dtype)
            starts.append(ew.select(ew.lt(i, zero), ew.add(i, np.asarray(n, i.dtype)), i))
        else:
            starts.append(np.zeros((), np.int64))
    sizes = [1 if ax in dynamic else n for ax, n in enumerate(shape)]
    return dynamic_slice(y, starts, sizes)
