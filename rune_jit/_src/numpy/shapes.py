"""Shape functions: reshape, transpose, moveaxis, expand_dims, squeeze, broadcast_to,
concatenate, stack, ravel, astype."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..dtypes import check_supported
from ..ops import shape as sh
from ._core import (accept, as_shape, as_value, broadcast_shapes, broadcast_to_shape, cast,
                    normalize_axes, normalize_axis, promote, shape_of)


def _arr(x: Any, where: str) -> Any:
    return as_value(accept(x, where))


def _resolve_shape(shape: Any, size: int, where: str) -> tuple[int, ...]:
    shape = as_shape(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"{where}: can only specify one unknown dimension")
    if unknown:
        known = math.prod([s for s in shape if s != -1])
        if known == 0 or size % known:
            raise ValueError(f"{where}: cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"{where}: cannot reshape array of size {size} into shape {shape}")
    return shape


def reshape(a: Any, shape: Any) -> Any:
    a = _arr(a, "rune_jit.numpy.reshape")
    size = math.prod(shape_of(a))
    return sh.reshape(a, _resolve_shape(shape, size, "rune_jit.numpy.reshape"))


def ravel(a: Any) -> Any:
    return reshape(a, (-1,))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    a = _arr(a, "rune_jit.numpy.transpose")
    ndim = len(shape_of(a))
    if axes is None:
        return sh.transpose(a, tuple(reversed(range(ndim))))
    perm = tuple(normalize_axis(int(x), ndim, "rune_jit.numpy.transpose") for x in axes)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"rune_jit.numpy.transpose: axes {tuple(axes)} don't match array")
    return sh.transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    a = _arr(a, "rune_jit.numpy.moveaxis")
    ndim = len(shape_of(a))
    src = normalize_axes(source, ndim, "rune_jit.numpy.moveaxis")
    dst = normalize_axes(destination, ndim, "rune_jit.numpy.moveaxis")
    if len(src) != len(dst):
        raise ValueError("rune_jit.numpy.moveaxis: source and destination differ in length")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Any:
    a = _arr(a, "rune_jit.numpy.expand_dims")
    shape = shape_of(a)
    n = len(shape) + (1 if isinstance(axis, (int, np.integer)) else len(axis))
    axes = normalize_axes(axis, n, "rune_jit.numpy.expand_dims")
    it = iter(shape)
    return sh.reshape(a, tuple(1 if i in axes else next(it) for i in range(n)))


def squeeze(a: Any, axis: Any = None) -> Any:
    a = _arr(a, "rune_jit.numpy.squeeze")
    shape = shape_of(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        axes = normalize_axes(axis, len(shape), "rune_jit.numpy.squeeze")
        if any(shape[i] != 1 for i in axes):
            raise ValueError("rune_jit.numpy.squeeze: cannot select an axis to squeeze out "
                             "which has size not equal to one")
    return sh.reshape(a, tuple(s for i, s in enumerate(shape) if i not in axes))


def broadcast_to(a: Any, shape: Any) -> Any:
    a = _arr(a, "rune_jit.numpy.broadcast_to")
    shape = as_shape(shape)
    if broadcast_shapes(shape_of(a), shape, where="rune_jit.numpy.broadcast_to") != shape:
        raise ValueError(f"rune_jit.numpy.broadcast_to: cannot broadcast shape {shape_of(a)} "
                         f"to {shape}")
    out = broadcast_to_shape(a, shape)
    # results are writable arrays, unlike NumPy's read-only broadcast views
    return out.copy() if isinstance(out, np.ndarray) and not out.flags.writeable else out


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    where = "rune_jit.numpy.concatenate"
    if len(arrays) == 0:
        raise ValueError(f"{where}: need at least one array to concatenate")
    xs = [as_value(x) for x in promote(*arrays, where=where)]
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    shapes = [shape_of(x) for x in xs]
    if any(len(s) == 0 for s in shapes):
        raise ValueError(f"{where}: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, len(shapes[0]), where)
    for s in shapes[1:]:
        if len(s) != len(shapes[0]) or any(
            a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != ax
        ):
            raise ValueError(f"{where}: shapes {shapes[0]} and {s} differ outside axis {ax}")
    return sh.concatenate(xs, ax)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    where = "rune_jit.numpy.stack"
    if len(arrays) == 0:
        raise ValueError(f"{where}: need at least one array to stack")
    xs = [as_value(x) for x in promote(*arrays, where=where)]
    shapes = {shape_of(x) for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"{where}: all input arrays must have the same shape, got "
                         f"{sorted(shapes)}")
    ax = normalize_axis(axis, len(shapes.pop()) + 1, where)
    return sh.concatenate([expand_dims(x, ax) for x in xs], ax)


def astype(x: Any, dtype: Any) -> Any:
    dtype = check_supported(np.dtype(dtype), "rune_jit.numpy.astype")
    return cast(as_value(accept(x, "rune_jit.numpy.astype")), dtype)
