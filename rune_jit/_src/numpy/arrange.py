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

from ..dtypes import check_supported, result_type
from ..ops.shape import broadcast_in_dim, rev, slice_op
from ..trace import Tracer
from . import math as mt
from . import reductions as r
from . import ufuncs as uf
from ._core import (accept, as_value, dtype_weak, normalize_axes, normalize_axis, shape_of,
                    static, strong, to_dtype, weak)
from .arrays import atleast_1d, atleast_2d, atleast_3d
from .shapes import astype, broadcast_to, concatenate, moveaxis, ravel, reshape, transpose
from .sorting import cumsum, median, searchsorted, take

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
    spec = static(indices_or_sections, "indices_or_sections", where)
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
    spec = static(indices_or_sections, "indices_or_sections", "rune_jit.numpy.split")
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
    reps = static(reps, "reps", where)
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
#
# NumPy pads one axis after another, each seeing the axes before it already padded: the
# corners of a 2-d array come from the padding of axis 0, and the statistics of "mean"
# along axis 1 take in the rows that axis 0 added. rnp.pad does the same, and each mode
# follows numpy/lib/_arraypad_impl.py step for step, so that the values, and where they
# are rounded, are NumPy's.

# modes that write values of their own, and so can extend an empty axis
PAD_FILLS = ("constant", "empty")


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """NumPy's pad, with every mode NumPy names but a function: "constant"
    (`constant_values=`), "empty" (zeros here), "edge", "wrap", "linear_ramp"
    (`end_values=`), "maximum", "minimum", "mean", "median" (`stat_length=`), "reflect"
    and "symmetric" (`reflect_type=` "even" or "odd"). Widths and stat lengths are
    static; the array, constant_values and end_values may be traced.

    >>> print(rnp.pad(np.array([1, 2, 3]), (2, 1), mode="reflect"))
    [3 2 1 2 3 2]
    >>> print(rnp.pad(np.array([1, 2, 6]), (3, 2), mode="linear_ramp", end_values=(7, 0)))
    [7 5 3 1 2 6 3 0]
    >>> print(rnp.pad(np.array([1, 2, 6]), 1, mode="mean", stat_length=2))
    [2 1 2 6 4]
    >>> rnp.pad(np.ones((2, 3)), {1: (1, 2)}).shape  # NumPy 2.3's {axis: width}
    (2, 6)
    """
    where = "rune_jit.numpy.pad"
    x = _arr(array, where)
    shape = shape_of(x)
    widths = np.asarray(static(_widths_by_axis(pad_width, len(shape), where), "pad_width",
                                where))
    if widths.dtype.kind not in "iu":
        raise TypeError(f"{where}: pad_width must be of integral type")
    widths = _index_pairs(widths, len(shape), "pad_width", where)
    keyword, rule = _pad_mode(mode, kwargs, where)
    if 0 in shape and mode not in PAD_FILLS:
        grown = [ax for ax, (n, w) in enumerate(zip(shape, widths)) if n == 0 and any(w)]
        if grown:
            raise ValueError(f"{where}: can't extend empty axis {grown[0]} using modes other "
                             "than 'constant' or 'empty'")
        keyword, rule = PAD_MODES["empty"]  # no values to read, none to write
    default, prepare = PAD_KEYWORDS[keyword]
    args = prepare(kwargs.get(keyword, default), len(shape), mode, where)
    for ax, w in enumerate(widths):
        if any(w):
            x = rule(x, ax, w, args[ax])
    return x


def _widths_by_axis(pad_width: Any, nd: int, where: str) -> Any:
    """NumPy 2.3's dict form, {axis: width or (before, after)}, as one pair per axis (the
    axes it leaves out are not padded); any other form as it is."""
    if not isinstance(pad_width, dict):
        return pad_width
    pairs = [(0, 0)] * nd
    for axis, width in pad_width.items():
        if not isinstance(axis, (int, np.integer)) or not -nd <= axis < nd:
            raise ValueError(f"{where}: pad_width's key {axis!r} is not an axis of an array "
                             f"of {nd} dimensions")
        if isinstance(width, (int, np.integer)):
            pairs[axis] = (width, width)
        elif isinstance(width, tuple) and len(width) == 2:
            pairs[axis] = width
        else:
            raise TypeError(f"{where}: pad_width[{axis}] must be an int or a (before, after) "
                            f"pair of ints, got {width!r}")
    return pairs


def _pad_mode(mode: Any, kwargs: dict, where: str) -> tuple[str | None, Callable]:
    """The keyword and the rule of `mode`, once the keywords given are the mode's."""
    if callable(mode):
        raise TypeError(f"{where}: a function as mode is not supported: NumPy's calls it to "
                        "write into slices of the array in place, and a traced array is "
                        f"immutable; use one of the modes {', '.join(PAD_MODES)}")
    if not isinstance(mode, str) or mode not in PAD_MODES:
        raise ValueError(f"{where}: mode {mode!r} is not supported; the modes are "
                         f"{', '.join(PAD_MODES)}")
    keyword, rule = PAD_MODES[mode]
    unknown = sorted(set(kwargs) - {keyword})
    if unknown:
        takes = f"only {keyword}=" if keyword else "none"
        raise ValueError(f"{where}: unsupported keyword arguments for mode {mode!r}: "
                         f"{unknown} (it takes {takes})")
    return keyword, rule


def _index_pairs(value: Any, nd: int, what: str, where: str) -> list:
    """`value` (pad_width, stat_length) as nd (before, after) pairs of static ints,
    rounded as NumPy's pad rounds them."""
    v = np.round(np.asarray(static(value, what, where))).astype(np.intp)
    if np.any(v < 0):
        raise ValueError(f"{where}: {what} can't contain negative values")
    return [tuple(p) for p in np.broadcast_to(v, (nd, 2)).tolist()]


def _stat_lengths(value: Any, nd: int, mode: str, where: str) -> list:
    if value is None:
        return [(None, None)] * nd
    lengths = _index_pairs(value, nd, "stat_length", where)
    if not PAD_STATS[mode][1] and any(0 in p for p in lengths):
        raise ValueError(f"{where}: stat_length of 0 yields no value for padding with mode "
                         f"{mode!r}")
    return lengths


def _value_pairs(values: Any, nd: int, mode: str, where: str) -> list:
    """`values` (constant_values, end_values) as nd (before, after) pairs, read as NumPy's
    pad reads them: one value or one pair gives NumPy scalars (strong in promotion), more
    give Python scalars (weak), so that a float32 array ramps in float64 from one end
    value and in float32 from end values per axis, as in NumPy."""
    v = _arr(values, where)
    shape = shape_of(v)
    size = _math.prod(shape)
    one = len(shape) < 3 and (size == 1 or (size == 2 and shape != (2, 1)))
    rows = broadcast_to(reshape(v, (1, size)) if one else v, (nd, 2))

    def read(e: Any) -> Any:
        if isinstance(e, Tracer):
            return strong(e) if one else weak(e)
        return e if one else e.item()

    return [(read(rows[ax, 0]), read(rows[ax, 1])) for ax in range(nd)]


def _reflect_type(value: Any, nd: int, mode: str, where: str) -> list:
    if value not in ("even", "odd"):
        raise ValueError(f"{where}: reflect_type must be 'even' or 'odd', got {value!r}")
    return [value == "odd"] * nd


def _edges(x: Any, ax: int) -> tuple[Any, Any]:
    n = shape_of(x)[ax]
    return _slice_axis(x, ax, 0, 1), _slice_axis(x, ax, n - 1, n)


def _pad_sides(x: Any, ax: int, widths: tuple[int, int], values: Sequence[Any]) -> Any:
    """x between its two pad areas along ax, each filled with its value broadcast."""
    parts = []
    for width, v in zip(widths, values):
        shape = list(shape_of(x))
        shape[ax] = width
        parts.append(broadcast_to(v, tuple(shape)))
    return concatenate([parts[0], x, parts[1]], ax)


def _pad_constant(x: Any, ax: int, widths: tuple[int, int], values: tuple) -> Any:
    return _pad_sides(x, ax, widths, [to_dtype(v, x.dtype) for v in values])


def _pad_edge(x: Any, ax: int, widths: tuple[int, int], _: None) -> Any:
    return _pad_sides(x, ax, widths, _edges(x, ax))


def _pad_wrap(x: Any, ax: int, widths: tuple[int, int], _: None) -> Any:
    n = shape_of(x)[ax]
    return _take_static(x, np.arange(-widths[0], n + widths[1]) % n, ax)


def _pad_ramp(x: Any, ax: int, widths: tuple[int, int], ends: tuple) -> Any:
    left, right = (_ramp(end, edge, width, ax, x.dtype)
                   for end, edge, width in zip(ends, _edges(x, ax), widths))
    return concatenate([left, x, rev(right, (ax,))], ax)


def _ramp(end: Any, edge: Any, width: int, ax: int, dtype: np.dtype) -> Any:
    """NumPy's linspace(end, edge, width, endpoint=False, dtype=dtype, axis=ax) as pad
    calls it, step for step: in the float dtype of end and edge, its product by the
    step unless a step is 0 (then the position over width times the distance: NumPy's
    case for subnormal steps, taken if any lane has one), floored for integers, cast."""
    dt = result_type(dtype_weak(end), (dtype, False), (np.dtype(np.float64), True))
    start = to_dtype(end, dt)
    delta = mt.subtract(to_dtype(edge, dt), start)
    shape = [1] * len(shape_of(edge))
    shape[ax] = width
    k = np.arange(width, dtype=dt).reshape(shape)
    div = max(width, 1)  # width 0 has no positions, and so no division by 0
    step = mt.divide(delta, div)
    y = mt.where(r.any(mt.equal(step, 0)), mt.multiply(mt.divide(k, div), delta),
                 mt.multiply(k, step))
    y = mt.add(y, start)
    return to_dtype(uf.floor(y) if dtype.kind in "iu" else y, dtype)


def _pad_stat(stat: Callable) -> Callable:
    """The rule of a statistic's mode: each side the statistic of the stat_length values
    next to it (all of the axis if None), rounded half to even for an integer dtype."""
    def rule(x: Any, ax: int, widths: tuple[int, int], lengths: tuple) -> Any:
        n = shape_of(x)[ax]
        kl, kr = (n if k is None else min(k, n) for k in lengths)
        left = _stat_of(stat, _slice_axis(x, ax, 0, kl), ax, x.dtype)
        right = left if kl == kr == n else _stat_of(stat, _slice_axis(x, ax, n - kr, n), ax,
                                                     x.dtype)
        return _pad_sides(x, ax, widths, (left, right))

    return rule


def _stat_of(stat: Callable, chunk: Any, ax: int, dtype: np.dtype) -> Any:
    v = stat(chunk, axis=ax, keepdims=True)
    return to_dtype(uf.round(v) if dtype.kind in "iu" else v, dtype)


def _pad_reflect(include_edge: bool) -> Callable:
    """The rule of "symmetric" (the edge is mirrored too) or "reflect" (it is the mirror):
    NumPy's, a length-1 axis extended by its edge, and a wide pad area filled by
    mirroring again what was mirrored (for "odd", about each new edge)."""
    def rule(x: Any, ax: int, widths: tuple[int, int], odd: bool) -> Any:
        n = shape_of(x)[ax]
        if n == 1:
            return _pad_edge(x, ax, widths, None)
        before, after = widths
        while before or after:
            x, before, after = _mirror_once(x, ax, (before, after), n, odd, include_edge)
        return x

    return rule


def _mirror_once(x: Any, ax: int, widths: tuple[int, int], n: int, odd: bool,
                 include_edge: bool) -> tuple[Any, int, int]:
    """One round of NumPy's _set_reflect_both: into each pad area, at most as many
    mirrored values as the axis holds whole periods of the array (n, or n - 1 without
    the edge). Returns x grown, and the widths left to pad."""
    cur = shape_of(x)[ax]
    skip = 0 if include_edge else 1
    period = (cur - skip) // (n - skip) * (n - skip)
    kl, kr = (min(period, w) for w in widths)
    chunks = [rev(_slice_axis(x, ax, skip, skip + kl), (ax,)),
              rev(_slice_axis(x, ax, cur - skip - kr, cur - skip), (ax,))]
    if odd:  # 2 * edge - value, in NumPy's promotion, then back into the array's dtype
        chunks = [to_dtype(mt.subtract(mt.multiply(2, e), c), x.dtype)
                  for e, c in zip(_edges(x, ax), chunks)]
    return concatenate([chunks[0], x, chunks[1]], ax), widths[0] - kl, widths[1] - kr


# mode: (the statistic, whether an empty slice has one: NaN)
PAD_STATS: dict[str, tuple[Callable, bool]] = {
    "maximum": (r.max, False), "minimum": (r.min, False),
    "mean": (r.mean, True), "median": (median, True),
}

# mode: (its keyword argument, how it pads axis ax: rule(x, ax, (before, after), arg)
# with arg that axis's value of the keyword)
PAD_MODES: dict[str, tuple[str | None, Callable]] = {
    "constant": ("constant_values", _pad_constant),
    "empty": (None, lambda x, ax, widths, _: _pad_constant(x, ax, widths, (0, 0))),
    "edge": (None, _pad_edge),
    "wrap": (None, _pad_wrap),
    "linear_ramp": ("end_values", _pad_ramp),
    **{name: ("stat_length", _pad_stat(stat)) for name, (stat, _) in PAD_STATS.items()},
    "reflect": ("reflect_type", _pad_reflect(include_edge=False)),
    "symmetric": ("reflect_type", _pad_reflect(include_edge=True)),
}

# keyword: (its default, its value as one argument per axis: prepare(value, nd, mode,
# where))
PAD_KEYWORDS: dict[str | None, tuple[Any, Callable]] = {
    None: (None, lambda value, nd, mode, where: [None] * nd),  # the modes without one
    "constant_values": (0, _value_pairs),
    "end_values": (0, _value_pairs),
    "stat_length": (None, _stat_lengths),
    "reflect_type": ("even", _reflect_type),
}


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
    obj = static(obj, "the positions (obj)", where)
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
