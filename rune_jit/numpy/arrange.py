"""Shape functions composed of slices, concatenations, broadcasts and gathers at static
positions: hstack, vstack, dstack, column_stack, split, array_split, hsplit, vsplit,
dsplit, tile, repeat, roll, flip, fliplr, flipud, rot90, pad, swapaxes,
broadcast_arrays, broadcast_shapes, append, insert, delete, ix_, apply_along_axis.

Positions that fix the result's shape (split points, repeat counts, insert and delete
positions, pad widths) are static: Python ints or concrete arrays. A traced one is a
TypeError that says so (roll's shift may be traced: it does not change the shape).
"""

from __future__ import annotations

import math as _math
from typing import Any, Callable, Sequence

import numpy as np

from ..dtypes import check_supported
from ..ops.shape import broadcast_in_dim, rev, slice_op
from ..trace import Tracer
from . import math as mt
from ._core import accept, as_value, normalize_axes, normalize_axis, shape_of, to_dtype
from .arrays import atleast_1d, atleast_2d, atleast_3d
from .shapes import astype, broadcast_to, concatenate, moveaxis, ravel, reshape, transpose
from .sorting import cumsum, searchsorted, take

INDEX = np.dtype(np.int64)


def _arr(x: Any, where: str) -> Any:
    return as_value(accept(x, where))


def along_axis(a: Any, axis: int | None, where: str) -> tuple[Any, int, int]:
    """(a, its axis `axis` normalized, that axis's size); a flattened if axis is None."""
    x = _arr(a, where)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis(axis, len(shape_of(x)), where)
    return x, ax, shape_of(x)[ax]


def _static(x: Any, what: str, where: str) -> Any:
    if isinstance(x, Tracer):
        raise TypeError(f"{where}: {what} must be static (Python ints or a NumPy array), "
                        "since it fixes the shape of the result; got a traced value")
    return x


def _take_static(x: Any, idx: np.ndarray, axis: int) -> Any:
    """x at the static in-bounds positions `idx` along `axis` (a gather)."""
    return take(x, np.asarray(idx, INDEX), axis, mode="clip")


def _slice_axis(x: Any, axis: int, start: int, stop: int) -> Any:
    shape = shape_of(x)
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return slice_op(x, starts, limits)


# ------------------------------------------------------------- stacking


def _column(x: Any) -> Any:
    s = shape_of(x)
    return reshape(x, (s[0] if s else 1, 1)) if len(s) < 2 else x


STACKERS: dict[str, tuple[Callable, Callable]] = {
    # name: (what each array becomes, the axis they are joined along)
    "hstack": (atleast_1d, lambda xs: 0 if len(shape_of(xs[0])) == 1 else 1),
    "vstack": (atleast_2d, lambda xs: 0),
    "dstack": (atleast_3d, lambda xs: 2),
    "column_stack": (_column, lambda xs: 1),
}


def _stacker(name: str) -> Callable:
    prepare, axis_of = STACKERS[name]

    def f(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
        xs = [prepare(_arr(x, f"rune_jit.numpy.{name}")) for x in tup]
        if dtype is not None:
            xs = [astype(x, dtype) for x in xs]
        return concatenate(xs, axis_of(xs) if xs else 0)

    f.__name__ = f.__qualname__ = name
    return f


hstack, vstack, dstack, column_stack = (_stacker(n) for n in STACKERS)
hstack.__doc__ = """NumPy's hstack: concatenated along the second axis (the first for 1-d).

    >>> print(rnp.hstack([np.array([1, 2]), np.array([3])]))
    [1 2 3]
    """
vstack.__doc__ = """NumPy's vstack: concatenated along the first axis, 1-d as rows.

    >>> print(rnp.vstack([np.array([1, 2]), np.array([3, 4])]))
    [[1 2]
     [3 4]]
    """
dstack.__doc__ = """NumPy's dstack: concatenated along the third axis.

    >>> print(rnp.dstack([np.array([1, 2]), np.array([3, 4])]).shape)
    (1, 2, 2)
    """
column_stack.__doc__ = """NumPy's column_stack: 1-d arrays as columns of a 2-d array.

    >>> print(rnp.column_stack([np.array([1, 2]), np.array([3, 4])]))
    [[1 3]
     [2 4]]
    """


# ------------------------------------------------------------- splitting


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's array_split: `indices_or_sections` pieces (the first ones one longer when
    they do not divide the axis), or pieces between the given indices.

    >>> [p.tolist() for p in rnp.array_split(np.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    where = "rune_jit.numpy.array_split"
    x = _arr(ary, where)
    ax = normalize_axis(axis, len(shape_of(x)), where)
    n = shape_of(x)[ax]
    spec = _static(indices_or_sections, "indices_or_sections", where)
    if np.ndim(spec) == 0:
        sections = int(spec)
        if sections <= 0:
            raise ValueError(f"{where}: number sections must be larger than 0")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        bounds = [0] + [int(i) for i in spec] + [n]
    pieces = []
    for st, end in zip(bounds[:-1], bounds[1:]):
        lo, hi, _ = slice(st, end).indices(n)
        pieces.append(_slice_axis(x, ax, lo, max(lo, hi)))
    return pieces


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's split: array_split into equal pieces (a ValueError if they are not).

    >>> [p.tolist() for p in rnp.split(np.arange(4), [1])]
    [[0], [1, 2, 3]]
    """
    spec = _static(indices_or_sections, "indices_or_sections", "rune_jit.numpy.split")
    if np.ndim(spec) == 0:
        x = _arr(ary, "rune_jit.numpy.split")
        n = shape_of(x)[normalize_axis(axis, len(shape_of(x)), "rune_jit.numpy.split")]
        if int(spec) > 0 and n % int(spec):
            raise ValueError("rune_jit.numpy.split: array split does not result in an equal "
                             "division")
    return array_split(ary, spec, axis)


def _axis_split(name: str, min_ndim: int, axis_of: Callable[[int], int]) -> Callable:
    def f(ary: Any, indices_or_sections: Any) -> list:
        x = _arr(ary, f"rune_jit.numpy.{name}")
        nd = len(shape_of(x))
        if nd < min_ndim:
            raise ValueError(f"rune_jit.numpy.{name} only works on arrays of {min_ndim} or "
                             "more dimensions")
        return split(x, indices_or_sections, axis_of(nd))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""NumPy's {name}: split along axis {axis_of(max(min_ndim, 2))} \
(see split).

    >>> print(len(rnp.{name}(np.zeros((2, 2, 2)), 2)))
    2
    """
    return f


hsplit = _axis_split("hsplit", 1, lambda nd: 1 if nd > 1 else 0)
vsplit = _axis_split("vsplit", 2, lambda nd: 0)
dsplit = _axis_split("dsplit", 3, lambda nd: 2)


# ------------------------------------------------------------- repeating


def tile(A: Any, reps: Any) -> Any:
    """NumPy's tile: A repeated `reps` times along each axis (a broadcast, reshaped).

    >>> print(rnp.tile(np.array([1, 2]), (2, 2)))
    [[1 2 1 2]
     [1 2 1 2]]
    """
    where = "rune_jit.numpy.tile"
    x = _arr(A, where)
    reps = _static(reps, "reps", where)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    s = shape_of(x)
    d = max(len(reps), len(s))
    reps, s = (1,) * (d - len(reps)) + reps, (1,) * (d - len(s)) + s
    if any(r < 0 for r in reps):
        raise ValueError(f"{where}: negative dimensions are not allowed")
    big = broadcast_in_dim(reshape(x, s), tuple(v for p in zip(reps, s) for v in p),
                           tuple(range(1, 2 * d, 2)))
    return reshape(big, tuple(r * n for r, n in zip(reps, s)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """NumPy's repeat: each element `repeats` times (an int, or one count per element)
    along `axis` (the flattened array if None). Static counts; traced ones need
    `total_repeat_length=` (JAX's: the length of the result, which is cut there or
    filled with the last element).

    >>> print(rnp.repeat(np.array([1, 2]), [1, 3]))
    [1 2 2 2]
    """
    where = "rune_jit.numpy.repeat"
    x, ax, n = along_axis(a, axis, where)
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise TypeError(f"{where}: traced repeats make the size of the result depend "
                            "on values; give total_repeat_length= (the static length of "
                            "the result), or pass the repeats as static ints")
        counts = broadcast_to(to_dtype(repeats, INDEX), (n,))
        positions = np.arange(int(total_repeat_length), dtype=INDEX)
        return take(x, searchsorted(cumsum(counts), positions, side="right"), ax, mode="clip")
    counts = np.asarray(repeats)
    counts = counts.astype(INDEX) if counts.size == 0 else counts
    if counts.dtype.kind not in "iub":
        raise TypeError(f"{where}: repeats must be integers, got {counts.dtype}")
    if np.any(counts < 0):
        raise ValueError(f"{where}: repeats may not contain negative values")
    if counts.size == 1 and total_repeat_length is None:
        return _repeat_each(x, ax, int(counts.reshape(-1)[0]))
    idx = np.repeat(np.arange(n), counts)
    if total_repeat_length is not None:
        total = int(total_repeat_length)
        idx = np.concatenate([idx, np.full(max(total - idx.size, 0), n - 1)])[:total]
    return _take_static(x, idx, ax)


def _repeat_each(x: Any, ax: int, count: int) -> Any:
    s = shape_of(x)
    wide = s[:ax + 1] + (count,) + s[ax + 1:]
    dims = tuple(i if i <= ax else i + 1 for i in range(len(s)))
    return reshape(broadcast_in_dim(x, wide, dims), s[:ax] + (s[ax] * count,) + s[ax + 1:])


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """NumPy's roll: elements shifted along `axis` (the flattened array if None), those
    past the end coming round to the start. The shift may be traced.

    >>> print(rnp.roll(np.arange(5), 2))
    [3 4 0 1 2]
    """
    where = "rune_jit.numpy.roll"
    x = _arr(a, where)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), shape_of(x))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if isinstance(shift, Tracer):
        shifts = [shift[i] for i in range(shift.shape[0])] if shift.ndim else [shift]
    else:
        shifts = [shift] if np.ndim(shift) == 0 else list(shift)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(axes) != len(shifts):
        raise ValueError(f"{where}: shift and axis must have the same length")
    for sh, ax in zip(shifts, axes):
        x = _roll_one(x, sh, normalize_axis(ax, len(shape_of(x)), where))
    return x


def _roll_one(x: Any, shift: Any, ax: int) -> Any:
    n = shape_of(x)[ax]
    if n == 0:
        return x
    if isinstance(shift, Tracer):
        idx = mt.remainder(mt.subtract(np.arange(n, dtype=INDEX), to_dtype(shift, INDEX)), n)
        return take(x, idx, ax, mode="clip")
    k = int(shift) % n
    if k == 0:
        return x
    return concatenate([_slice_axis(x, ax, n - k, n), _slice_axis(x, ax, 0, n - k)], ax)


# ------------------------------------------------------------- flips and rotations

FLIPS = {"flipud": (0, 1), "fliplr": (1, 2)}  # name: (axis, the fewest dimensions)


def flip(m: Any, axis: Any = None) -> Any:
    """NumPy's flip: the order of elements reversed along `axis` (all axes if None).

    >>> print(rnp.flip(np.array([1, 2, 3])))
    [3 2 1]
    """
    x = _arr(m, "rune_jit.numpy.flip")
    return rev(x, normalize_axes(axis, len(shape_of(x)), "rune_jit.numpy.flip"))


def _flipper(name: str) -> Callable:
    axis, fewest = FLIPS[name]

    def f(m: Any) -> Any:
        x = _arr(m, f"rune_jit.numpy.{name}")
        if len(shape_of(x)) < fewest:
            raise ValueError(f"rune_jit.numpy.{name}: input must be >= {fewest}-d")
        return rev(x, (axis,))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""NumPy's {name}: flip along axis {axis}.

    >>> print(rnp.{name}(np.eye(2, dtype=int)))
    [[0 1]
     [1 0]]
    """
    return f


flipud, fliplr = _flipper("flipud"), _flipper("fliplr")


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """NumPy's rot90: rotated by 90 degrees k times, from the first axis of `axes`
    towards the second.

    >>> print(rnp.rot90(np.array([[1, 2], [3, 4]])))
    [[2 4]
     [1 3]]
    """
    where = "rune_jit.numpy.rot90"
    x = _arr(m, where)
    axes = tuple(axes)
    nd = len(shape_of(x))
    if len(axes) != 2:
        raise ValueError(f"{where}: len(axes) must be 2")
    a0, a1 = (normalize_axis(a, nd, where) for a in axes)
    if a0 == a1:
        raise ValueError(f"{where}: axes must be different")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return rev(x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(rev(x, (a1,)), perm) if k == 1 else rev(transpose(x, perm), (a1,))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """NumPy's swapaxes.

    >>> print(rnp.swapaxes(np.zeros((2, 3)), 0, 1).shape)
    (3, 2)
    """
    x = _arr(a, "rune_jit.numpy.swapaxes")
    nd = len(shape_of(x))
    i, j = (normalize_axis(v, nd, "rune_jit.numpy.swapaxes") for v in (axis1, axis2))
    perm = list(range(nd))
    perm[i], perm[j] = j, i
    return transpose(x, perm)


# ------------------------------------------------------------- pad

# the source position of each position of a padded axis, for each mode that reads the
# array (n > 0): positions -before .. n + after - 1 of the axis, mapped into 0 .. n - 1
PAD_SOURCES: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "edge": lambda i, n: np.clip(i, 0, n - 1),
    "wrap": lambda i, n: i % n,
    "symmetric": lambda i, n: np.where(i % (2 * n) < n, i % (2 * n), 2 * n - 1 - i % (2 * n)),
    "reflect": lambda i, n: (np.zeros_like(i) if n == 1 else np.where(
        i % (2 * n - 2) < n, i % (2 * n - 2), 2 * n - 2 - i % (2 * n - 2))),
}


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """NumPy's pad with modes "constant" (`constant_values=`, which may be traced),
    "empty" (zeros here), "edge", "wrap", "reflect" and "symmetric" (reflect_type
    "even"). Widths are static.

    >>> print(rnp.pad(np.array([1, 2, 3]), (2, 1), mode="reflect"))
    [3 2 1 2 3 2]
    """
    where = "rune_jit.numpy.pad"
    x = _arr(array, where)
    nd = len(shape_of(x))
    widths = np.broadcast_to(np.asarray(_static(pad_width, "pad_width", where)), (nd, 2))
    if widths.dtype.kind not in "iu":
        raise TypeError(f"{where}: pad_width must be of integral type")
    if np.any(widths < 0):
        raise ValueError(f"{where}: index can't contain negative values")
    allowed = {"constant": {"constant_values"}, "empty": set(),
               **{k: {"reflect_type"} for k in ("reflect", "symmetric")}}
    if mode not in allowed and mode not in PAD_SOURCES:
        raise ValueError(f"{where}: mode {mode!r} is not supported (constant, empty, edge, "
                         "wrap, reflect, symmetric)")
    unknown = set(kwargs) - allowed.get(mode, set())
    if unknown:
        raise ValueError(f"{where}: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(unknown)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError(f"{where}: only reflect_type='even' is supported")
    for ax, (before, after) in enumerate(widths.tolist()):
        if mode in ("constant", "empty"):
            values = kwargs.get("constant_values", 0)
            x = _pad_constant(x, ax, before, after, values, nd)
            continue
        n = shape_of(x)[ax]
        if n == 0 and before + after:
            raise ValueError(f"{where}: can't extend empty axis {ax} using modes other than "
                             "'constant' or 'empty'")
        if before or after:
            idx = PAD_SOURCES[mode](np.arange(-before, n + after), n)
            x = _take_static(x, idx, ax)
    return x


def _pad_constant(x: Any, ax: int, before: int, after: int, values: Any, nd: int) -> Any:
    if not before and not after:
        return x
    pairs = broadcast_to(_arr(values, "rune_jit.numpy.pad"), (nd, 2))
    parts = []
    for side, width in ((0, before), (1, after)):
        shape = list(shape_of(x))
        shape[ax] = width
        v = to_dtype(pairs[ax, side], x.dtype)
        parts.append(broadcast_to(v, tuple(shape)))
    return concatenate([parts[0], x, parts[1]], ax)


# ------------------------------------------------------------- broadcasting


def broadcast_shapes(*shapes: Any) -> tuple:
    """NumPy's broadcast_shapes (of static shapes).

    >>> rnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_arrays(*args: Any) -> tuple:
    """NumPy's broadcast_arrays: the arguments broadcast to their common shape.

    >>> print([x.shape for x in rnp.broadcast_arrays(np.zeros((2, 1)), np.zeros(3))])
    [(2, 3), (2, 3)]
    """
    xs = [_arr(a, "rune_jit.numpy.broadcast_arrays") for a in args]
    shape = np.broadcast_shapes(*[shape_of(x) for x in xs])
    return tuple(broadcast_to(x, shape) for x in xs)


# ------------------------------------------------------------- append, insert, delete


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """NumPy's append: concatenated (both flattened if axis is None).

    >>> print(rnp.append(np.array([1, 2]), [[3], [4]]))
    [1 2 3 4]
    """
    x, v = _arr(arr, "rune_jit.numpy.append"), _arr(values, "rune_jit.numpy.append")
    if axis is None:
        x, v, axis = ravel(x), ravel(v), 0
    return concatenate([x, v], axis)


def _positions(obj: Any, n: int, where: str) -> np.ndarray:
    """Static positions along an axis of length n: from a slice, ints or a mask."""
    obj = _static(obj, "the positions (obj)", where)
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    idx = np.asarray(obj)
    if idx.dtype.kind == "b":
        if idx.ndim != 1:
            raise ValueError(f"{where}: boolean array argument obj must be one dimensional")
        return np.flatnonzero(idx)
    if idx.size == 0:
        return idx.astype(INDEX)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{where}: arrays used as indices must be of integer type")
    return idx


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """NumPy's delete: the array without the positions `obj` (static: an int, ints, a
    slice or a mask) along `axis` (the flattened array if None).

    >>> print(rnp.delete(np.arange(5), [0, 3]))
    [1 2 4]
    """
    where = "rune_jit.numpy.delete"
    x, ax, n = along_axis(arr, axis, where)
    if isinstance(obj, (list, np.ndarray)) and np.asarray(obj).dtype.kind == "b" \
            and np.asarray(obj).shape != (n,):
        raise ValueError(f"{where}: boolean array argument obj must be one dimensional and "
                         f"match the axis length of {n}")
    idx = _positions(obj, n, where)
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"{where}: index {int(bad[0])} is out of bounds for axis {ax} with "
                         f"size {n}")
    keep = np.ones(n, bool)
    keep[idx] = False
    return _take_static(x, np.flatnonzero(keep), ax)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """NumPy's insert: `values` placed before the static positions `obj` along `axis`
    (the flattened array if None), cast to the array's dtype.

    >>> print(rnp.insert(np.array([1, 2, 3]), 1, 9))
    [1 9 2 3]
    """
    where = "rune_jit.numpy.insert"
    x = _arr(arr, where)
    if axis is None:
        x, axis = ravel(x), 0
    s = shape_of(x)
    ax = normalize_axis(axis, len(s), where)
    n = s[ax]
    idx = _positions(obj, n, where)
    v = to_dtype(_arr(values, where), x.dtype)
    if idx.size == 1:
        index = int(idx.reshape(-1)[0])
        if not -n <= index <= n:
            raise IndexError(f"{where}: index {obj} is out of bounds for axis {ax} with "
                             f"size {n}")
        index += n if index < 0 else 0
        vs = shape_of(v)
        v = reshape(v, (1,) * (len(s) - len(vs)) + vs) if len(vs) < len(s) else v
        if idx.ndim == 0:
            v = moveaxis(v, 0, ax)
        numnew = shape_of(v)[ax]
        v = broadcast_to(v, s[:ax] + (numnew,) + s[ax + 1:])
        return concatenate([_slice_axis(x, ax, 0, index), v, _slice_axis(x, ax, index, n)], ax)
    idx = np.where(idx < 0, idx + n, idx)
    numnew = idx.size
    placed = idx.copy()
    placed[np.argsort(idx, kind="stable")] += np.arange(numnew)
    source = np.empty(n + numnew, INDEX)
    old = np.ones(n + numnew, bool)
    old[placed] = False
    source[old] = np.arange(n)
    source[placed] = n + np.arange(numnew)
    v = broadcast_to(v, s[:ax] + (numnew,) + s[ax + 1:])
    return _take_static(concatenate([x, v], ax), source, ax)


def ix_(*args: Any) -> tuple:
    """NumPy's ix_: 1-d index arrays shaped to index an open mesh (x[ix_(rows, cols)]).

    >>> print([i.shape for i in rnp.ix_(np.array([0, 1]), np.array([2, 0, 1]))])
    [(2, 1), (1, 3)]
    """
    where = "rune_jit.numpy.ix_"
    out = []
    for k, a in enumerate(args):
        if isinstance(a, Tracer):
            if a.dtype.kind == "b":
                raise TypeError(f"{where}: a traced boolean argument selects a number of "
                                "positions known only from its values; pass "
                                "rnp.nonzero(mask, size=n)[0]")
            x = a
        else:
            x = np.asarray(a)
            x = x.astype(INDEX) if x.size == 0 else x
            x = np.flatnonzero(x) if x.dtype.kind == "b" else x
            check_supported(x.dtype, where)
        if len(shape_of(x)) != 1:
            raise ValueError(f"{where}: cross index must be 1 dimensional")
        out.append(reshape(x, (1,) * k + shape_of(x) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """NumPy's apply_along_axis, as rune_jit.vmap of func1d over the 1-d slices along
    `axis` (func1d is traced once, not called per slice); its result's axes take the
    place of `axis`.

    >>> print(rnp.apply_along_axis(lambda v: v[0] + v[-1], 1, np.arange(6).reshape(2, 3)))
    [2 8]
    """
    from ..api import vmap

    where = "rune_jit.numpy.apply_along_axis"
    x = _arr(arr, where)
    s = shape_of(x)
    ax = normalize_axis(axis, len(s), where)
    batch = s[:ax] + s[ax + 1:]
    if 0 in batch:
        raise ValueError(f"{where}: cannot apply_along_axis when any iteration dimensions "
                         "are 0")
    rows = reshape(moveaxis(x, ax, -1), (_math.prod(batch), s[ax]))
    out = as_value(accept(vmap(lambda row: func1d(row, *args, **kwargs))(rows), where))
    res = shape_of(out)[1:]
    out = reshape(out, batch + res)
    k = len(res)
    return moveaxis(out, tuple(range(len(batch), len(batch) + k)), tuple(range(ax, ax + k)))
