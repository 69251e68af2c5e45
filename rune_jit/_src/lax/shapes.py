"""jax.lax's shape operations over rune_jit's shape and slicing primitives.

Dynamic slices clamp their start indices so the slice fits, as JAX does: a start
below 0 (after a negative one is counted from the end, JAX's default
`allow_negative_indices=True`) reads from 0, and one past the end reads the last
full window. Concatenated operands and a pad value must have the operand's dtype
(a Python scalar takes it).
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from ..dtypes import check_supported, python_scalar_dtype
from ..numpy._core import is_python_scalar, shape_of
from ..ops import elementwise as ew
from ..ops import index as ix
from ..ops import shape as sh
from ..trace import bind1
from .bits import convert_element_type
from .operands import ANY, array, dtype_of, operands, same_dtype

ArrayLike = Any
Array = Any
INT64 = np.dtype(np.int64)


def _axis(axis: int, ndim: int, where: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{where}: axis {axis} is out of bounds for an array of "
                         f"{ndim} dimensions")
    return axis % ndim


def dtype(x: Any) -> np.dtype:  # noqa: A001 (lax.dtype's name)
    """The dtype of an array, a Python scalar (NumPy's default for it) or a dtype-like.

    >>> dtype(1.0), dtype(np.ones(2, np.int32)), dtype("float32")
    (dtype('float64'), dtype('int32'), dtype('float32'))
    """
    if is_python_scalar(x):
        return python_scalar_dtype(x)
    found = getattr(x, "dtype", None)
    return np.dtype(found if found is not None else x)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives operands of `shapes` (static).

    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"lax.broadcast_shapes: incompatible shapes for broadcasting: "
                         f"{[tuple(s) for s in shapes]}") from None


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Array:
    """operand placed in a value of `shape`: its axis i becomes axis
    broadcast_dimensions[i] (of the same size, or 1 stretched), the others repeat it.

    >>> broadcast_in_dim(np.array([1, 2]), (3, 2), (1,)).tolist()
    [[1, 2], [1, 2], [1, 2]]
    """
    return sh.broadcast_in_dim(array(operand, "lax.broadcast_in_dim"), tuple(shape),
                               tuple(broadcast_dimensions))


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """operand repeated along new leading axes of `sizes`.

    >>> broadcast(np.array([1, 2]), (2,)).tolist()
    [[1, 2], [1, 2]]
    """
    x = array(operand, "lax.broadcast")
    n, shape = len(sizes), shape_of(x)
    return sh.broadcast_in_dim(x, tuple(sizes) + shape, tuple(range(n, n + len(shape))))


def reshape(operand: ArrayLike, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Array:
    """operand's elements, in row-major order (after transposing by `dimensions` if
    given), in the shape `new_sizes`.

    >>> reshape(np.arange(6).reshape(2, 3), (3, 2), dimensions=(1, 0)).tolist()
    [[0, 3], [1, 4], [2, 5]]
    """
    x = array(operand, "lax.reshape")
    new_sizes = tuple(int(n) for n in new_sizes)
    if math.prod(new_sizes) != math.prod(shape_of(x)) or builtins.min(new_sizes, default=0) < 0:
        raise TypeError(f"lax.reshape: the total size must be unchanged, got new_sizes "
                        f"{new_sizes} for shape {shape_of(x)}")
    if dimensions is not None:
        x = transpose(x, dimensions)
    return sh.reshape(x, new_sizes)


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """operand's axes permuted: axis i of the result is axis permutation[i].

    >>> transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = array(operand, "lax.transpose")
    perm = tuple(int(p) for p in permutation)
    if sorted(perm) != list(range(len(shape_of(x)))):
        raise ValueError(f"lax.transpose: permutation {perm} is not a permutation of the "
                         f"axes of an array of shape {shape_of(x)}")
    return x if perm == tuple(range(len(perm))) else sh.transpose(x, perm)


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """array without the axes `dimensions`, each of size 1.

    >>> squeeze(np.ones((1, 3, 1)), (0, -1)).shape
    (3,)
    """
    x = _array(array, "lax.squeeze")
    shape = shape_of(x)
    dims = {_axis(d, len(shape), "lax.squeeze") for d in dimensions}
    if any(shape[d] != 1 for d in dims):
        raise ValueError(f"lax.squeeze: cannot remove an axis whose size is not one, got "
                         f"shape {shape} and dimensions {tuple(dimensions)}")
    return sh.reshape(x, tuple(n for i, n in enumerate(shape) if i not in dims))


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """array with new axes of size 1 at `dimensions` (positions in the result).

    >>> expand_dims(np.ones(3), (0, -1)).shape
    (1, 3, 1)
    """
    x = _array(array, "lax.expand_dims")
    ndim = len(shape_of(x)) + len(dimensions)
    dims = {_axis(d, ndim, "lax.expand_dims") for d in dimensions}
    if len(dims) != len(dimensions):
        raise ValueError(f"lax.expand_dims: repeated dimensions {tuple(dimensions)}")
    sizes = iter(shape_of(x))
    return sh.reshape(x, tuple(1 if i in dims else next(sizes) for i in range(ndim)))


def _array(x: Any, where: str) -> Any:
    return array(x, where)  # (squeeze and expand_dims name their operand `array`)


def collapse(operand: ArrayLike, start_dimension: int,
             stop_dimension: int | None = None) -> Array:
    """operand with the axes start_dimension..stop_dimension-1 merged into one.

    >>> collapse(np.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    x = array(operand, "lax.collapse")
    shape = shape_of(x)
    lo, hi = builtins.slice(start_dimension, stop_dimension).indices(len(shape))[:2]
    return sh.reshape(x, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """The operands (of one dtype and rank, equal but along `dimension`) joined along it.

    >>> concatenate([np.array([1, 2]), np.array([3])], 0).tolist()
    [1, 2, 3]
    """
    xs = [array(x, "lax.concatenate") for x in operands]
    if not xs:
        raise ValueError("lax.concatenate needs at least one operand")
    same_dtype(xs, "lax.concatenate")
    ranks = {len(shape_of(x)) for x in xs}
    if len(ranks) != 1 or ranks == {0}:
        raise TypeError(f"lax.concatenate: the operands must have one rank of at least 1, "
                        f"got shapes {[shape_of(x) for x in xs]}")
    return sh.concatenate(xs, _axis(dimension, ranks.pop(), "lax.concatenate"))


def iota(dtype: Any, size: int) -> Array:
    """0, 1, ..., size - 1 as `dtype`.

    >>> iota(np.int32, 4).tolist()
    [0, 1, 2, 3]
    """
    return sh.iota((int(size),), 0, check_supported(np.dtype(dtype), "lax.iota"))


def full(shape: Sequence[int], fill_value: ArrayLike, dtype: Any = None) -> Array:
    """A value of `shape` whose every element is the scalar fill_value, converted to
    `dtype` as convert_element_type converts (default: fill_value's dtype).

    >>> full((2,), 2.7, np.int32).tolist()
    [2, 2]
    """
    value = array(fill_value, "lax.full")
    if shape_of(value) != ():
        raise TypeError(f"lax.full: fill_value must be a scalar, got shape {shape_of(value)}")
    if dtype is not None:
        value = convert_element_type(value, dtype)
    return sh.full(tuple(int(n) for n in shape), value)


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: Any = None,
              shape: Sequence[int] | None = None) -> Array:
    """full() of x's shape and dtype, unless `shape` or `dtype` are given.

    >>> full_like(np.ones(2, np.int32), 2.7).tolist()
    [2, 2]
    """
    x = array(x, "lax.full_like")
    return full(shape_of(x) if shape is None else shape, fill_value,
                dtype_of(x) if dtype is None else dtype)


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """operand with the order of its elements reversed along each axis of `dimensions`.

    >>> rev(np.array([[1, 2], [3, 4]]), (1,)).tolist()
    [[2, 1], [4, 3]]
    """
    x = array(operand, "lax.rev")
    axes = tuple(sorted({_axis(d, len(shape_of(x)), "lax.rev") for d in dimensions}))
    return sh.rev(x, axes) if axes else x


def pad(operand: ArrayLike, padding_value: ArrayLike,
        padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """operand with, along each axis, (low, high, interior) padding: `low` values before,
    `high` after and `interior` between each two elements, all padding_value; a negative
    low or high removes elements from that end instead.

    >>> pad(np.array([1.0, 2.0, 3.0]), -1.0, [(1, 2, 1)]).tolist()
    [-1.0, 1.0, -1.0, 2.0, -1.0, 3.0, -1.0, -1.0]
    >>> pad(np.arange(5.0), 0.0, [(-1, -2, 0)]).tolist()
    [1.0, 2.0]
    """
    if shape_of(array(padding_value, "lax.pad")) != ():
        raise TypeError(f"lax.pad: padding_value must be a scalar, got shape "
                        f"{shape_of(array(padding_value, 'lax.pad'))}")
    x, value = operands([operand, padding_value], ANY, "lax.pad")
    shape = shape_of(x)
    config = [tuple(int(v) for v in c) for c in padding_config]
    if len(config) != len(shape) or any(len(c) != 3 or c[2] < 0 for c in config):
        raise ValueError(f"lax.pad: padding_config needs one (low, high, interior) per axis "
                         f"of shape {shape}, interior >= 0; got {padding_config}")
    grown = tuple(builtins.max(lo, 0) + n + builtins.max(n - 1, 0) * k + builtins.max(hi, 0)
                  for (lo, hi, k), n in zip(config, shape))
    place = dict(shape=grown, starts=tuple(builtins.max(lo, 0) for lo, _, _ in config),
                 strides=tuple(k + 1 for _, _, k in config))
    inside = bind1(sh.pad_p, sh.full(shape, np.True_), **place)
    padded = ew.select(inside, bind1(sh.pad_p, x, **place), value)
    starts = tuple(builtins.max(-lo, 0) for lo, _, _ in config)
    limits = tuple(n - builtins.max(-hi, 0) for (_, hi, _), n in zip(config, grown))
    if any(a > b for a, b in zip(starts, limits)):
        raise ValueError(f"lax.pad: padding_config {padding_config} removes more than the "
                         f"{grown} elements there are")
    return sh.slice_op(padded, starts, limits)


def slice(operand: ArrayLike, start_indices: Sequence[int],  # noqa: A001 (lax.slice)
          limit_indices: Sequence[int], strides: Sequence[int] | None = None) -> Array:
    """operand[start:limit:stride] along every axis (static, in range).

    >>> slice(np.arange(10), (1,), (8,), (3,)).tolist()
    [1, 4, 7]
    """
    x = array(operand, "lax.slice")
    shape = shape_of(x)
    strides = (1,) * len(shape) if strides is None else tuple(strides)
    if not len(start_indices) == len(limit_indices) == len(strides) == len(shape) or any(
            not 0 <= s <= lim <= n or k < 1
            for s, lim, k, n in zip(start_indices, limit_indices, strides, shape)):
        raise ValueError(f"lax.slice: start_indices {tuple(start_indices)}, limit_indices "
                         f"{tuple(limit_indices)} and strides {strides} do not fit shape "
                         f"{shape} (0 <= start <= limit <= size, stride >= 1)")
    return sh.slice_op(x, tuple(start_indices), tuple(limit_indices), strides)


def slice_in_dim(operand: ArrayLike, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """operand[start:limit:stride] along `axis` (None: the end; negative: from the end).

    >>> slice_in_dim(np.arange(5), -3, None).tolist()
    [2, 3, 4]
    """
    x = array(operand, "lax.slice_in_dim")
    shape = shape_of(x)
    axis = _axis(axis, len(shape), "lax.slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else int(start_index) + (n if start_index < 0 else 0)
    limit = n if limit_index is None else int(limit_index) + (n if limit_index < 0 else 0)
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(limit if i == axis else m for i, m in enumerate(shape))
    strides = tuple(stride if i == axis else 1 for i in range(len(shape)))
    return slice(x, starts, limits, strides)


def index_in_dim(operand: ArrayLike, index: int, axis: int = 0,
                 keepdims: bool = True) -> Array:
    """The slice at the static `index` (negative: from the end) along `axis`.

    >>> index_in_dim(np.arange(6).reshape(2, 3), -1, axis=1, keepdims=False).tolist()
    [2, 5]
    """
    x = array(operand, "lax.index_in_dim")
    shape = shape_of(x)
    axis = _axis(axis, len(shape), "lax.index_in_dim")
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"with size {shape[axis]}")
    index = int(index) % shape[axis]
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else sh.reshape(out, shape[:axis] + shape[axis + 1:])


def _starts(shape: tuple, start_indices: Any, allow_negative: Any, where: str) -> list:
    """The start indices as int64 scalars, a negative one counted from the end."""
    if hasattr(start_indices, "shape") and not is_python_scalar(start_indices):
        if len(start_indices.shape) != 1:
            raise TypeError(f"{where}: start_indices must be a sequence of scalars or a 1-d "
                            f"array, got shape {tuple(start_indices.shape)}")
        start_indices = [start_indices[i] for i in range(start_indices.shape[0])]
    starts = [array(s, where) for s in start_indices]
    if len(starts) != len(shape):
        raise TypeError(f"{where}: {len(starts)} start indices for an operand of shape {shape}")
    negative = (allow_negative if isinstance(allow_negative, (list, tuple))
                else [allow_negative] * len(shape))
    out = []
    for s, n, neg in zip(starts, shape, negative):
        if shape_of(s) != () or dtype_of(s).kind not in "iu":
            raise TypeError(f"{where}: a start index must be an integer scalar, got "
                            f"{dtype_of(s)}{list(shape_of(s))}")
        s = ew.convert(s, INT64)
        out.append(ew.select(ew.lt(s, np.int64(0)), ew.add(s, np.int64(n)), s) if neg else s)
    return out


def dynamic_slice(operand: ArrayLike, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """The slice of `slice_sizes` at the (traced or static) start_indices, each clamped so
    the slice fits, as JAX clamps them.

    >>> dynamic_slice(np.arange(5), (7,), (2,)).tolist()
    [3, 4]
    >>> dynamic_slice(np.arange(5), (-1,), (2,)).tolist()
    [3, 4]
    """
    where = "lax.dynamic_slice"
    x = array(operand, where)
    shape, sizes = shape_of(x), tuple(int(k) for k in slice_sizes)
    if len(sizes) != len(shape) or any(not 0 <= k <= n for k, n in zip(sizes, shape)):
        raise TypeError(f"{where}: slice_sizes {sizes} must fit in the operand's shape "
                        f"{shape} (one size per axis, 0 <= size <= the axis's size)")
    return ix.dynamic_slice(x, _starts(shape, start_indices, allow_negative_indices, where),
                            sizes)


def dynamic_update_slice(operand: ArrayLike, update: ArrayLike, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """operand with `update` written at start_indices, each clamped so it fits.

    >>> dynamic_update_slice(np.zeros(5), np.ones(2), (4,)).tolist()
    [0.0, 0.0, 0.0, 1.0, 1.0]
    """
    where = "lax.dynamic_update_slice"
    x, upd = array(operand, where), array(update, where)
    same_dtype([x, upd], where)
    shape, ushape = shape_of(x), shape_of(upd)
    if len(ushape) != len(shape) or any(k > n for k, n in zip(ushape, shape)):
        raise TypeError(f"{where}: an update of shape {ushape} does not fit in an operand "
                        f"of shape {shape}")
    return ix.dynamic_update_slice(
        x, upd, _starts(shape, start_indices, allow_negative_indices, where))


def _along(axis: int, ndim: int, value: Any, rest: Any) -> list:
    return [value if i == axis else rest for i in range(ndim)]


def dynamic_slice_in_dim(operand: ArrayLike, start_index: ArrayLike, slice_size: int,
                         axis: int = 0, *, allow_negative_indices: bool = True) -> Array:
    """dynamic_slice along one axis: slice_size elements from start_index (clamped).

    >>> dynamic_slice_in_dim(np.arange(6).reshape(2, 3), 1, 2, axis=1).tolist()
    [[1, 2], [4, 5]]
    """
    x = array(operand, "lax.dynamic_slice_in_dim")
    shape = shape_of(x)
    axis = _axis(axis, len(shape), "lax.dynamic_slice_in_dim")
    sizes = [slice_size if i == axis else n for i, n in enumerate(shape)]
    return dynamic_slice(x, _along(axis, len(shape), start_index, 0), sizes,
                         allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: ArrayLike, index: ArrayLike, axis: int = 0,
                         keepdims: bool = True, *, allow_negative_indices: bool = True) -> Array:
    """The slice at a (traced) index along `axis`, clamped into range.

    >>> dynamic_index_in_dim(np.arange(6).reshape(2, 3), 2, axis=1, keepdims=False).tolist()
    [2, 5]
    """
    x = array(operand, "lax.dynamic_index_in_dim")
    shape = shape_of(x)
    axis = _axis(axis, len(shape), "lax.dynamic_index_in_dim")
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else sh.reshape(out, shape[:axis] + shape[axis + 1:])


def dynamic_update_slice_in_dim(operand: ArrayLike, update: ArrayLike, start_index: ArrayLike,
                                axis: int, *, allow_negative_indices: bool = True) -> Array:
    """dynamic_update_slice along one axis, at start_index (clamped).

    >>> dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, 0).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    x = array(operand, "lax.dynamic_update_slice_in_dim")
    ndim = len(shape_of(x))
    axis = _axis(axis, ndim, "lax.dynamic_update_slice_in_dim")
    return dynamic_update_slice(x, update, _along(axis, ndim, start_index, 0),
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: ArrayLike, update: ArrayLike, index: ArrayLike,
                                axis: int, *, allow_negative_indices: bool = True) -> Array:
    """operand with `update` (of one axis fewer, or a slice of size 1) written at the
    (traced) index along `axis`.

    >>> dynamic_update_index_in_dim(np.zeros((2, 2)), np.ones(2), 1, 0).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    where = "lax.dynamic_update_index_in_dim"
    x, upd = array(operand, where), array(update, where)
    ndim = len(shape_of(x))
    axis = _axis(axis, ndim, where)
    if len(shape_of(upd)) == ndim - 1:
        upd = expand_dims(upd, (axis,))
    return dynamic_update_slice_in_dim(x, upd, index, axis,
                                       allow_negative_indices=allow_negative_indices)
