"""NumPy's advanced indexing (integer and boolean arrays in a key), and the functional
updates `x.at[key].set(v)` / `.add` / `.multiply` / `.min` / `.max` / `.get()`.

A key is resolved into coordinates: one integer array per axis of `x`, all of the
result's shape, naming the element of `x` at each position of the result. Reading is a
gather at those coordinates, an update a scatter there, so both follow one reading of
the key, NumPy's: the index arrays (and the integers among them) broadcast together;
their axes take the place of the first of them when they are adjacent in the key, and
go first otherwise. A boolean mask stands for the indices where it holds: concrete, its
shape is known; traced, it is not, which a static shape cannot follow.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..ops import elementwise as ew
from ..ops.gather import gather, index_check, scatter
from ..ops.index import dynamic_update_slice
from ..ops.scan import scan_flat
from ..ops.shape import broadcast_in_dim, iota, reshape
from ..trace import Tracer, type_of_value
from . import complex_order
from ._core import broadcast_shapes, promote, shape_of, to_dtype

INDEX = np.dtype(np.int64)
MASK_MESSAGE = ("rune_jit: a boolean mask that is a traced value selects a number of "
                "elements that is not known when the program is traced; use "
                "rnp.where(mask, x, fill) to keep the shape, or rnp.nonzero(mask, size=n) "
                "for at most n positions")


def is_advanced(key: Any) -> bool:
    """Whether a key holds an array index or a mask (NumPy's advanced indexing)."""
    def advanced(k):
        if isinstance(k, Tracer):
            return k.ndim > 0 or k.dtype.kind == "b"
        if isinstance(k, np.ndarray):
            return k.ndim > 0 or k.dtype.kind == "b"
        return isinstance(k, (list, bool, np.bool_))

    return any(advanced(k) for k in (key if isinstance(key, tuple) else (key,)))


class Entry(NamedTuple):
    kind: str  # "slice", "new" (None), "array" (an index array, or an int among them),
    # "gap" (an Ellipsis of no axes: no axis of its own, but it parts index arrays)
    value: Any
    axis: int  # the axis of x it indexes (for "new": the number of x axes before it)


def _entries(key: Any, x_shape: tuple[int, ...]) -> list[Entry]:
    """The key with Ellipsis expanded and boolean masks made index arrays (one per axis
    a mask covers), one entry per key position."""
    ndim = len(x_shape)
    raw = list(key) if isinstance(key, tuple) else [key]
    spread = []
    for k in raw:
        if isinstance(k, Tracer) and k.dtype.kind == "b":
            raise TypeError(MASK_MESSAGE)
        if isinstance(k, (bool, np.bool_)) or (isinstance(k, np.ndarray) and k.dtype.kind == "b"
                                                and k.ndim == 0):
            raise IndexError("rune_jit: a 0-d boolean index (x[True]) is not supported")
        if isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype.kind == "b":
            spread.append(("mask", np.asarray(k)))
        elif isinstance(k, list):
            spread.append(("entry", np.asarray(k)))
        else:
            spread.append(("entry", k))
    n_real = sum(v.ndim if kind == "mask" else (0 if v is None or v is Ellipsis else 1)
                 for kind, v in spread)
    ellipses = [i for i, (kind, v) in enumerate(spread) if kind == "entry" and v is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{n_real} were indexed")
    fill = [("entry", slice(None))] * (ndim - n_real)
    if ellipses:  # an Ellipsis of no axes still separates index arrays, as in NumPy
        spread = spread[:ellipses[0]] + (fill or [("gap", None)]) + spread[ellipses[0] + 1:]
    else:
        spread = spread + fill
    out, axis = [], 0
    for kind, v in spread:
        if kind == "mask":
            _check_mask(v, x_shape, axis)
            out += [Entry("array", c, axis + d) for d, c in enumerate(np.nonzero(v))]
            axis += v.ndim
        elif kind == "gap":
            out.append(Entry("gap", None, axis))
        elif v is None:
            out.append(Entry("new", None, axis))
        else:
            out.append(Entry("slice" if isinstance(v, slice) else "array", v, axis))
            axis += 1
    return out


def _check_mask(mask: np.ndarray, x_shape: tuple, axis: int) -> None:
    for d, n in enumerate(mask.shape):
        if x_shape[axis + d] != n:
            raise IndexError(f"boolean index did not match indexed array along axis "
                             f"{axis + d}; size of axis is {x_shape[axis + d]} but size of "
                             f"corresponding boolean axis is {n}")


def _index_array(v: Any) -> Any:
    """An index entry as an integer array (a NumPy one, or a traced one)."""
    if isinstance(v, Tracer):
        if v.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type, "
                             f"got {v.dtype.name}")
        return v
    a = np.asarray(v)
    if a.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type, got "
                         f"{a.dtype.name}")
    return a


class Coordinates(NamedTuple):
    coords: list  # one int64 array per axis of x, each of `shape`
    shape: tuple[int, ...]


def coordinates(x_shape: tuple[int, ...], key: Any, mode: str = "raise"
                ) -> tuple[Coordinates, str]:
    """Where each element of x[key] comes from in x, as NumPy reads the key, and the mode
    to read them in. In mode "raise" the key's index arrays are checked here, before they
    broadcast to the result's shape (where an empty slice would leave none to check), and
    then read in mode "checked"."""
    entries = _entries(key, x_shape)
    arrays = [e for e in entries if e.kind == "array"]
    values = [_index_array(e.value) for e in arrays]
    if mode == "raise":
        values = [index_check(v, x_shape[e.axis], e.axis) for e, v in zip(arrays, values)]
    try:
        b_shape = broadcast_shapes(*[shape_of(v) for v in values]) if values else ()
    except ValueError:
        shown = " ".join(str(shape_of(v)) for v in values)
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {shown}") from None
    first = [i for i, e in enumerate(entries) if e.kind == "array"]
    adjacent = bool(first) and first == list(range(first[0], first[-1] + 1))
    # the result's axes in order: the broadcast block where the first index array is
    # when they are adjacent in the key, else first; then slices and new axes in order
    layout: list[Entry | None] = []  # None stands for the block
    for i, e in enumerate(entries):
        if e.kind == "gap":
            continue
        if e.kind != "array":
            layout.append(e)
        elif adjacent and i == first[0]:
            layout.append(None)
    if values and not adjacent:
        layout.insert(0, None)
    sizes = [len(b_shape) if e is None else 1 for e in layout]
    shape = tuple(s for e in layout for s in (b_shape if e is None else (
        [len(range(*e.value.indices(x_shape[e.axis])))] if e.kind == "slice" else [1])))
    coords: list[Any] = [None] * len(x_shape)
    at = 0  # where the next layout entry's axes start in the result
    for e, size in zip(layout, sizes):
        if e is None:
            for ent, v in zip(arrays, values):
                coords[ent.axis] = _spread(v, shape, at, len(b_shape))
        elif e.kind == "slice":
            start, _, step = e.value.indices(x_shape[e.axis])
            coords[e.axis] = ew.add(ew.mul(iota(shape, at, INDEX), np.asarray(step, INDEX)),
                                    np.asarray(start, INDEX))
        at += size
    return Coordinates(coords, shape), "checked" if mode == "raise" else mode


def _spread(v: Any, shape: tuple, at: int, block: int) -> Any:
    """An index array of the broadcast block's shape (or one it broadcasts to) as one of
    the result's shape, its axes at `at`."""
    v = to_dtype(v, INDEX) if type_of_value(v).dtype != INDEX else v
    vs = type_of_value(v).shape
    dims = tuple(range(at + block - len(vs), at + block))
    return broadcast_in_dim(v, shape, dims)


def take(x: Any, key: Any, mode: str = "raise", fill_value: Any = 0) -> Any:
    """x[key] for a key with index arrays: a gather at the key's coordinates."""
    c, mode = coordinates(type_of_value(x).shape, key, mode)
    return reshape(gather(x, c.coords, mode, fill_value), c.shape)


# ------------------------------------------------------------- x.at[key]

AT_MODES = {"raise": "raise", "clip": "clip", "wrap": "wrap", "drop": "drop",
            "fill": "drop", "promise_in_bounds": "clip", None: "raise"}


def _broadcast_values(v: Any, shape: tuple[int, ...], op: str) -> Any:
    v_shape = shape_of(v)
    try:
        full = broadcast_shapes(v_shape, shape)
    except ValueError:
        full = None
    if full != shape:
        raise ValueError(f"at[...].{op}: values of shape {v_shape} do not broadcast to "
                         f"the indexed shape {shape}")
    return broadcast_in_dim(v, shape, tuple(range(len(shape) - len(v_shape), len(shape))))


def _box(key: Any, x_shape: tuple[int, ...]) -> tuple[list[int], list[int], list[bool]] | None:
    """The box a key of in-bounds ints and unit-step slices names (starts, sizes, and
    which axes the indexed value keeps), else None. Setting a box is a
    dynamic_update_slice, which lowers to one write per element and computes a loop's
    new carry in the carry's own buffer; a scatter would write through index arrays."""
    raw = list(key) if isinstance(key, tuple) else [key]
    dots = [i for i, k in enumerate(raw) if k is Ellipsis]
    if len(dots) > 1 or len(raw) - len(dots) > len(x_shape):
        return None
    fill = [slice(None)] * (len(x_shape) - (len(raw) - len(dots)))
    raw = raw[:dots[0]] + fill + raw[dots[0] + 1:] if dots else raw + fill
    axes = [_axis_box(k, n) for k, n in zip(raw, x_shape)]
    if any(a is None for a in axes):
        return None
    starts, sizes, kept = (list(t) for t in zip(*axes)) if axes else ([], [], [])
    return starts, sizes, kept


def _axis_box(k: Any, n: int) -> tuple[int, int, bool] | None:
    """(start, size, kept) of one key entry over an axis of n, if it names a box."""
    if isinstance(k, slice):
        start, stop, step = k.indices(n)
        return (start, stop - start, True) if step == 1 and stop > start else None
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        i = int(k) + n if k < 0 else int(k)
        return (i, 1, False) if 0 <= i < n else None
    return None


def _set_box(x: Any, v: Any, starts: list[int], sizes: list[int], kept: list[bool]) -> Any:
    shape = tuple(n for n, keep in zip(sizes, kept) if keep)
    v = reshape(_broadcast_values(v, shape, "set"), tuple(sizes))
    return dynamic_update_slice(x, v, [np.int64(s) for s in starts])


class _AtRef:
    """`x.at[key]`: an update of x at key that returns the new array (x is not changed)."""

    def __init__(self, x: Any, key: Any):
        self.x, self.key = x, key

    def _apply(self, op: str, values: Any, mode: str | None) -> Any:
        if mode not in AT_MODES:
            raise ValueError(f"at[...]: mode must be one of {sorted(m for m in AT_MODES if m)}"
                             f", got {mode!r}")
        x, v = self.x, values
        x_dtype = type_of_value(x).dtype
        (v,) = promote(v)
        v = to_dtype(v, x_dtype)
        box = _box(self.key, type_of_value(x).shape) if op == "set" else None
        if box is not None:
            return _set_box(x, v, *box)
        c, smode = coordinates(type_of_value(x).shape, self.key, AT_MODES[mode])
        v = _broadcast_values(v, c.shape, op)
        coords = _jax_coords(c.coords, type_of_value(x).shape, mode)
        if x_dtype.kind == "c" and op in ("mul", "min", "max"):
            return _in_order(x, coords, v, op, smode)
        return scatter(x, coords, v, op, smode)

    def set(self, values: Any, mode: str | None = None) -> Any:
        """x with x[key] = values (a repeated position takes the last value, in order)."""
        return self._apply("set", values, mode)

    def add(self, values: Any, mode: str | None = None) -> Any:
        """x with values added at key (repeated positions add up)."""
        return self._apply("add", values, mode)

    def multiply(self, values: Any, mode: str | None = None) -> Any:
        return self._apply("mul", values, mode)

    mul = multiply

    def min(self, values: Any, mode: str | None = None) -> Any:  # noqa: A003
        return self._apply("min", values, mode)

    def max(self, values: Any, mode: str | None = None) -> Any:  # noqa: A003
        return self._apply("max", values, mode)

    def get(self, mode: str | None = None, fill_value: Any = None) -> Any:
        """x[key], out-of-bounds indices per `mode` ("fill": `fill_value`, by default
        default_fill's, as JAX)."""
        if mode == "fill":
            dt = type_of_value(self.x).dtype
            return take(self.x, self.key, "fill",
                        default_fill(dt) if fill_value is None else fill_value)
        shape = type_of_value(self.x).shape
        c, gmode = coordinates(shape, self.key, AT_MODES.get(mode, mode))
        return reshape(gather(self.x, _jax_coords(c.coords, shape, mode), gmode), c.shape)


def _in_order(x: Any, coords: list, v: Any, op: str, mode: str) -> Any:
    """x's elements at `coords` combined with v's one after another, as NumPy's
    `multiply.at` (`maximum.at`...) combines repeated positions: a loop over the updates,
    for complex products and extrema (NumPy's order, its NaNs), which compiled code has
    no scatter for."""
    n = int(np.prod(shape_of(v)))
    rows = [reshape(c, (n,)) for c in coords] + [reshape(v, (n,))]
    combine = ew.mul if op == "mul" else (
        lambda a, b: complex_order.pick(ew.max if op == "max" else ew.min, a, b))

    def step(_, carry, row):
        at = [reshape(r, (1,)) for r in row[:-1]]
        old = gather(carry[0], at, "fill" if mode == "drop" else mode)
        return [scatter(carry[0], at, combine(old, reshape(row[-1], (1,))), "set", mode)], []

    return scan_flat(step, [x], rows, length=n)[0]


def _jax_coords(coords: list, shape: tuple, mode: str | None) -> list:
    """The coordinates of an `.at[]` update or read: as in JAX, a negative index counts
    from the end before "clip" (or "promise_in_bounds") clamps it, so `.at[-1]` is the
    last element in every mode (rnp.take's "clip", NumPy's, clamps -1 to 0)."""
    if mode not in ("clip", "promise_in_bounds"):
        return coords
    return [ew.select(ew.lt(c, np.zeros((), INDEX)), ew.add(c, np.asarray(n, INDEX)), c)
            for c, n in zip(coords, shape)]


def default_fill(dtype: np.dtype) -> Any:
    """What mode="fill" reads out of bounds unless told, as JAX: NaN for floats, the
    lowest value for signed integers, the highest for unsigned ones, True for bools.

    >>> default_fill(np.dtype(np.uint8)), default_fill(np.dtype(np.int32))
    (255, -2147483648)
    """
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return True
    info = np.iinfo(dtype)
    return int(info.max if dtype.kind == "u" else info.min)


class AtIndexer:
    """`x.at`: index it (`x.at[key]`) to update x functionally, as in JAX."""

    def __init__(self, x: Any):
        self.x = x

    def __getitem__(self, key: Any) -> _AtRef:
        return _AtRef(self.x, key)


def at(x: Any) -> AtIndexer:
    """`rnp.at(x)[key].set(v)`: JAX's `x.at[key].set(v)` for any array, a NumPy array
    included (traced values have `.at` too). It returns a new array; x is unchanged.

    >>> import numpy as np, rune_jit.numpy as rnp
    >>> rnp.at(np.zeros(4))[np.array([1, 1, 3])].add(1.0).tolist()
    [0.0, 2.0, 0.0, 1.0]
    """
    from ._core import accept

    return AtIndexer(accept(x, "rune_jit.numpy.at"))
