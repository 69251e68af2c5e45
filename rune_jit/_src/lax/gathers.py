"""lax's XLA-style gather and scatter (gather, scatter, scatter_add, scatter_mul,
scatter_min, scatter_max) with Gather/ScatterDimensionNumbers and GatherScatterMode,
over rune_jit's pointwise gather and scatter primitives.

Every element of the result (of a gather) or of the updates (of a scatter) gets its
full operand position, one index array per operand axis built from the start indices,
iotas for the window offsets and the batching dimensions; one pointwise gather or
scatter then reads or writes them all, so derivatives (a gather's transpose is a
scatter-add) and batching are those primitives'. Modes, as JAX's: "clip" (and
"promise_in_bounds", and a gather's default) clamps each window's start into the
operand; "fill" / "drop" (a scatter's default) reads `fill_value` for, or skips, a
window that does not fit whole. "one_hot" is not provided.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..numpy import _core
from ..numpy.advanced import default_fill
from ..ops import elementwise as ew
from ..ops.gather import gather as gather_points
from ..ops.gather import scatter as scatter_points
from ..ops.shape import broadcast_in_dim, full, iota, reshape, slice_op
from ..trace import type_of_value

INDEX = np.dtype(np.int64)


class GatherDimensionNumbers(NamedTuple):
    """XLA's gather dimension numbers (lax.GatherDimensionNumbers): which result axes
    are the window's (`offset_dims`), which operand axes the window drops
    (`collapsed_slice_dims`, size 1), which operand axis each start index component
    indexes (`start_index_map`), and operand axes paired with start index axes.

    >>> GatherDimensionNumbers((1,), (0,), (0,)).start_index_map
    (0,)
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's scatter dimension numbers (lax.ScatterDimensionNumbers): which update axes
    are the window's, which operand axes the window lacks (`inserted_window_dims`),
    which operand axis each index component indexes, and paired batching axes.

    >>> ScatterDimensionNumbers((), (0,), (0,)).inserted_window_dims
    (0,)
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What an out-of-bounds window does (lax.GatherScatterMode): CLIP clamps its start,
    FILL_OR_DROP fills a gather's window or drops a scatter's update, PROMISE_IN_BOUNDS
    clamps here. `GatherScatterMode.from_any("clip")` reads JAX's strings.

    >>> GatherScatterMode.from_any("fill")
    <GatherScatterMode.FILL_OR_DROP: 2>
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        """A mode from a GatherScatterMode, None (FILL_OR_DROP) or JAX's strings."""
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if not isinstance(s, (str, type(None))) or s not in names:
            raise ValueError(f"unknown gather/scatter mode {s!r}: use 'clip', 'fill', "
                             "'drop', 'promise_in_bounds' or a GatherScatterMode")
        return names[s]


class Layout(NamedTuple):
    """How a grid (a gather's result, a scatter's updates) reaches the operand:
    grid axes that run over the indices' batch, the grid axis of each window axis of
    the operand, the operand axis of each index component, (operand axis, indices axis)
    batching pairs, and the window's size along each operand axis."""

    grid_batch: tuple[int, ...]
    window_axes: dict
    start_map: tuple[int, ...]
    batching: tuple[tuple[int, int], ...]
    sizes: tuple[int, ...]


def _clips(mode: Any, where: str) -> bool:
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{where}: mode 'one_hot' is not provided; use 'clip' or "
                                  "'fill'")
    return mode is not GatherScatterMode.FILL_OR_DROP


def _component(indices: Any, k: int, grid: tuple, layout: Layout) -> Any:
    """Start index component k, broadcast over the grid, as int64."""
    shape = type_of_value(indices).shape
    part = slice_op(indices, (0,) * (len(shape) - 1) + (k,), shape[:-1] + (k + 1,))
    part = ew.convert(reshape(part, shape[:-1]), INDEX)
    return broadcast_in_dim(part, grid, layout.grid_batch)


def positions(operand_shape: tuple, indices: Any, grid: tuple, layout: Layout, clip: bool
              ) -> tuple[list, Any]:
    """(one int64 index array of the grid's shape per operand axis, whether each grid
    element's window fits whole in the operand)."""
    out, fits = [], None
    batching = dict(layout.batching)
    for d, n in enumerate(operand_shape):
        pos = None
        if d in layout.start_map:
            start = _component(indices, layout.start_map.index(d), grid, layout)
            top = np.asarray(n - layout.sizes[d], INDEX)
            ok = ew.logical_and(ew.ge(start, np.asarray(0, INDEX)), ew.le(start, top))
            fits = ok if fits is None else ew.logical_and(fits, ok)
            pos = ew.min(ew.max(start, np.asarray(0, INDEX)), top) if clip else start
        if d in layout.window_axes:
            offset = iota(grid, layout.window_axes[d], INDEX)
            pos = offset if pos is None else ew.add(pos, offset)
        if d in batching:
            pos = iota(grid, layout.grid_batch[batching[d]], INDEX)
        out.append(full(grid, np.asarray(0, INDEX)) if pos is None else pos)
    return out, fits


def _dims(v: Any) -> tuple[int, ...]:
    return tuple(int(a) for a in v)


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """lax.gather: XLA's gather. Each start index vector (the last axis of
    `start_indices`) picks a window of `slice_sizes` from the operand; the result holds
    the windows, their axes at `offset_dims`, less the collapsed ones. Windows that do
    not fit are clamped (mode "clip", the default) or filled with `fill_value` ("fill":
    NaN, the least integer or True by default, as JAX's).

    >>> x = np.arange(10.0)
    >>> dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
    ...                             start_index_map=(0,))
    >>> print(gather(x, np.array([[1], [8]]), dn, (3,)))
    [[1. 2. 3.]
     [7. 8. 9.]]
    """
    where = "rune_jit.lax.gather"
    x = _core.as_value(_core.accept(operand, where))
    idx = _indices(start_indices, where)
    xs, ishape = type_of_value(x).shape, type_of_value(idx).shape
    dn = GatherDimensionNumbers(*(_dims(v) for v in dimension_numbers))
    sizes = _dims(slice_sizes)
    _check_gather(xs, ishape, dn, sizes, where)
    window = [d for d in range(len(xs))
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(ishape) - 1 + len(dn.offset_dims)
    grid_batch = tuple(a for a in range(rank) if a not in dn.offset_dims)
    grid = [0] * rank
    for a, n in zip(grid_batch, ishape[:-1]):
        grid[a] = n
    for a, d in zip(dn.offset_dims, window):
        grid[a] = sizes[d]
    layout = Layout(grid_batch, dict(zip(window, dn.offset_dims)), dn.start_index_map,
                    tuple(zip(dn.operand_batching_dims, dn.start_indices_batching_dims)),
                    sizes)
    clip = mode is None or _clips(mode, where)
    pos, fits = positions(xs, idx, tuple(grid), layout, clip)
    out = gather_points(x, pos, "clip")
    if clip or fits is None:
        return out
    dtype = type_of_value(x).dtype
    fill = default_fill(dtype) if fill_value is None else fill_value
    return ew.select(fits, out, full(tuple(grid), np.asarray(fill, dtype)))


def _indices(start_indices: Any, where: str) -> Any:
    idx = _core.as_value(_core.accept(start_indices, where))
    t = type_of_value(idx)
    if t.dtype.kind not in "iu" or t.ndim == 0:
        raise TypeError(f"{where}: indices must be an integer array with the index vector "
                        f"as its last axis, got {t.dtype.name} of shape {t.shape}")
    return idx


def _check_gather(xs: tuple, ishape: tuple, dn: GatherDimensionNumbers, sizes: tuple,
                  where: str) -> None:
    problem = None
    if len(sizes) != len(xs) or any(not 0 <= s <= n for s, n in zip(sizes, xs)):
        problem = f"slice_sizes {sizes} do not fit the operand"
    elif any(sizes[d] > 1 for d in dn.collapsed_slice_dims + dn.operand_batching_dims):
        problem = "collapsed and batching dimensions must have slice size 1"
    elif len(dn.start_index_map) != ishape[-1]:
        problem = (f"start_index_map {dn.start_index_map} must have one operand axis per "
                   f"index component ({ishape[-1]})")
    elif len(xs) - len(dn.collapsed_slice_dims) - len(dn.operand_batching_dims) != len(
            dn.offset_dims):
        problem = f"offset_dims {dn.offset_dims} must name each window axis of the operand"
    if problem:
        raise TypeError(f"{where}: {problem}: operand of shape {xs}, indices of shape "
                        f"{ishape}, {dn}")


def _scatter(op: str, name: str, doc: str):
    where = f"rune_jit.lax.{name}"

    def f(operand: Any, scatter_indices: Any, updates: Any,
          dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
          unique_indices: bool = False, mode: Any = None) -> Any:
        x = _core.as_value(_core.accept(operand, where))
        idx = _indices(scatter_indices, where)
        dtype = type_of_value(x).dtype
        u = _core.to_dtype(_core.as_value(_core.accept(updates, where)), dtype)
        dn = ScatterDimensionNumbers(*(_dims(v) for v in dimension_numbers))
        xs, us = type_of_value(x).shape, type_of_value(u).shape
        layout = _scatter_layout(xs, type_of_value(idx).shape, us, dn, where)
        clip = _clips(mode, where)
        pos, fits = positions(xs, idx, us, layout, clip)
        if not clip and fits is not None:  # an index past the end: the update is dropped
            pos[0] = ew.select(fits, pos[0], full(us, np.asarray(xs[0], INDEX)))
        return scatter_points(x, pos, u, op, "clip" if clip else "drop")

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _scatter_layout(xs: tuple, ishape: tuple, us: tuple, dn: ScatterDimensionNumbers,
                    where: str) -> Layout:
    window = [d for d in range(len(xs))
              if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    grid_batch = tuple(a for a in range(len(us)) if a not in dn.update_window_dims)
    sizes = [1] * len(xs)
    for d, a in zip(window, dn.update_window_dims):
        sizes[d] = us[a]
    if (len(window) != len(dn.update_window_dims) or len(dn.scatter_dims_to_operand_dims)
            != ishape[-1] or tuple(us[a] for a in grid_batch) != ishape[:-1]
            or any(s > n for s, n in zip(sizes, xs))):
        raise TypeError(f"{where}: updates of shape {us} do not fit operand of shape {xs} "
                        f"and indices of shape {ishape} under {dn}")
    return Layout(grid_batch, dict(zip(window, dn.update_window_dims)),
                  dn.scatter_dims_to_operand_dims,
                  tuple(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims)),
                  tuple(sizes))


_EXAMPLE = """
    >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                              scatter_dims_to_operand_dims=(0,))
    >>> print({name}(np.ones(4), np.array([[1], [1], [3]]), np.array([2.0, 3.0, 4.0]), dn))
    {shown}
    """
scatter = _scatter("set", "scatter", """lax.scatter: the operand with each update window
    written at its start index (one of repeated positions wins; windows that do not fit
    are dropped by default, clamped with mode="clip").""" + _EXAMPLE.format(
    name="scatter", shown="[1. 3. 1. 4.]"))
scatter_add = _scatter("add", "scatter_add", """lax.scatter_add: the operand with the
    update windows added at their start indices (repeated positions accumulate).""" +
    _EXAMPLE.format(name="scatter_add", shown="[1. 6. 1. 5.]"))
scatter_mul = _scatter("mul", "scatter_mul", """lax.scatter_mul: the operand multiplied
    by the update windows at their start indices.""" + _EXAMPLE.format(
    name="scatter_mul", shown="[1. 6. 1. 4.]"))
scatter_min = _scatter("min", "scatter_min", """lax.scatter_min: the least of the operand
    and the update windows at their start indices.""" + _EXAMPLE.format(
    name="scatter_min", shown="[1. 1. 1. 1.]"))
scatter_max = _scatter("max", "scatter_max", """lax.scatter_max: the greatest of the
    operand and the update windows at their start indices.""" + _EXAMPLE.format(
    name="scatter_max", shown="[1. 3. 1. 4.]"))
