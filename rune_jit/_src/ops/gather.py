"""Gather and scatter: reads and writes at positions given by integer arrays.

    gather(x, i1, ..., ik)[b, r]       == x[i1[b], ..., ik[b], r]
    scatter(x, i1, ..., ik, u; op)     == out = x.copy()
                                          for b: out[i1[b], ..., ik[b], :] op= u[b, :]

The first k axes of `x` are indexed by k integer arrays of one shape B (the NumPy layer
broadcasts them and moves the axes); the result has shape B + x.shape[k:]. A negative
index counts from the end, as in NumPy. Out of bounds, `mode` decides: "raise" (an
IndexError naming the index, the axis and its size, from compiled code too), "clip"
(into bounds), "wrap" (modulo the size), and for a gather "fill" (`fill_value` there),
for a scatter "drop" (the update is skipped).

"raise" is not a mode of the IR: `gather` and `scatter` pass each index array through
`index_check`, which raises for any entry out of bounds, and then read in mode "checked".
So every index is checked, even one whose element nothing reads (`x[i][:1]`), and the
check is an equation of its own: a loop step that reads a loop-invariant index array
checks it once, before the loop (fission's loop-invariant code motion), and the read
itself has no branch, so it vectorizes (a hardware gather where there is one).

Scatter ops: "set" (repeated positions: the last update in row-major order of B wins,
as NumPy's `x[idx] = v`), "add" and "mul" (repeated positions accumulate), "min",
"max". A gather's transpose is a scatter-add, a scatter-add's a gather.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..ad_util import UndefinedPrimal, Zero, is_undefined
from ..ir import Type
from ..passes.vmap import taking
from ..primitive import NOT_LINEAR, Primitive
from ..trace import Tracer, bind1, type_of_value
from . import elementwise as ew
from .shape import broadcast_in_dim, iota, materialize
from .tangents import instantiate, zeros

gather_p = Primitive("gather", traits=("expands",))
scatter_p = Primitive("scatter")
index_check_p = Primitive("index_check", traits=("effect", "checks"))
GATHER_MODES = ("checked", "clip", "wrap", "fill")
SCATTER_MODES = ("checked", "clip", "wrap", "drop")
SCATTER_OPS = ("set", "add", "mul", "min", "max")


def _check(x: Type, indices: Sequence[Type], name: str, mode: str) -> tuple[int, ...]:
    if not indices or len(indices) > x.ndim:
        raise ValueError(f"{name}: {len(indices)} index arrays for {x}")
    shapes = {t.shape for t in indices}
    if len(shapes) != 1:
        raise ValueError(f"{name}: index arrays of shapes {sorted(shapes)} (broadcast them)")
    for t in indices:
        if t.dtype.kind not in "iu":
            raise TypeError(f"{name}: arrays used as indices must be of integer type, got "
                            f"{t.dtype.name}")
    b = shapes.pop()
    _no_empty_axis(x.shape, b, len(indices), mode, name)
    return b


def _no_empty_axis(x_shape: tuple, b: tuple, k: int, mode: str, name: str) -> None:
    """"clip" and "wrap" make every index a position, which an empty axis does not have:
    NumPy's errors, where the position would be read (or written) outside the array."""
    if mode in ("clip", "wrap") and math.prod(b) and 0 in x_shape[:k]:
        raise IndexError("cannot do a non-empty take from an empty axes." if name == "gather"
                         else "cannot replace elements of an empty array")


@gather_p.def_rule("shape")
def _gather_shape(x: Type, *indices: Type, mode, fill_value):
    if mode not in GATHER_MODES:
        raise ValueError(f"gather: mode must be one of {GATHER_MODES}, got {mode!r}")
    b = _check(x, indices, "gather", mode)
    return [Type(x.dtype, b + x.shape[len(indices):])]


def positions(indices: Sequence[np.ndarray], sizes: Sequence[int], mode: str
              ) -> tuple[list[np.ndarray], np.ndarray]:
    """(indices made in range as `mode` says, which entries were in range): the NumPy
    meaning, shared by gather and scatter (in mode "checked", index_check has seen the
    indices)."""
    out, ok = [], np.ones(np.shape(indices[0]), bool)
    for i, n in zip(indices, sizes):
        i = np.asarray(i, np.int64)
        wrapped = np.where(i < 0, i + n, i)
        inside = (wrapped >= 0) & (wrapped < n)
        if mode == "clip":
            wrapped = np.clip(i, 0, n - 1)  # as JAX and np.take's clip: no counting from the end
        elif mode == "wrap":
            wrapped = np.mod(i, n) if n else i
        ok &= inside if mode in ("fill", "drop") else True
        out.append(np.where(ok, wrapped, 0) if mode in ("fill", "drop") else wrapped)
    return out, ok


@gather_p.def_rule("impl")
def _gather_impl(x, *indices, mode, fill_value):
    k = len(indices)
    _no_empty_axis(x.shape, np.shape(indices[0]), k, mode, "gather")
    pos, ok = positions(indices, x.shape[:k], mode)
    out = x[tuple(pos)] if x.size else np.zeros(np.shape(pos[0]) + x.shape[k:], x.dtype)
    if mode == "fill":
        keep = ok.reshape(ok.shape + (1,) * (x.ndim - k))
        out = np.where(keep, out, np.asarray(fill_value, x.dtype))
    return [np.asarray(out, x.dtype)]


def gather(x: Any, indices: Sequence[Any], mode: str = "raise", fill_value: Any = 0) -> Any:
    indices, mode = _checked(indices, type_of_value(x).shape, mode)
    return bind1(gather_p, x, *indices, mode=mode, fill_value=_scalar(fill_value))


def _checked(indices: Sequence[Any], shape: tuple, mode: str) -> tuple[list, str]:
    """Mode "raise" as index_check on every index array, then mode "checked"."""
    if mode != "raise":
        return list(indices), mode
    return [index_check(i, n, axis) for axis, (i, n) in enumerate(zip(indices, shape))
            ], "checked"


def _scalar(v: Any) -> Any:
    """A static fill value as a plain Python number (hashable, printable)."""
    return v.item() if isinstance(v, (np.ndarray, np.generic)) else v


@gather_p.def_rule("jvp")
def _gather_jvp(primals, tangents, *, mode, fill_value):
    x, *idx = primals
    ans = gather(x, idx, mode, fill_value)
    if isinstance(tangents[0], Zero):
        return [ans], [Zero(type_of_value(ans))]
    return [ans], [gather(tangents[0], idx, mode, 0)]


@gather_p.def_rule("transpose")
def _gather_transpose(cts, x, *indices, mode, fill_value):
    (ct,) = cts
    smode = "drop" if mode == "fill" else mode
    return [scatter(zeros(x.type), indices, ct, "add", smode)] + [None] * len(indices)


def _lane_indices(size: int, b_shape: tuple) -> Any:
    """The lane number at each position of (size,) + B: the index of a batched operand's
    lane axis, made one of the indexed axes."""
    return iota((size,) + b_shape, 0, np.int64)


@gather_p.def_rule("batch")
def _gather_batch(size, args, dims, *, mode, fill_value):
    x, *idx = args
    idx = [materialize(i, d, size) for i, d in zip(idx, dims[1:])]
    b_shape = type_of_value(idx[0]).shape
    if dims[0] is None:  # one x for every lane: the lanes are more index positions
        return [gather(x, idx, mode, fill_value)], [0]
    return [gather(x, [_lane_indices(size, b_shape[1:]), *idx], mode, fill_value)], [0]


# ------------------------------------------------------------- scatter


@scatter_p.def_rule("shape")
def _scatter_shape(x: Type, *rest: Type, op, mode):
    if op not in SCATTER_OPS:
        raise ValueError(f"scatter: op must be one of {SCATTER_OPS}, got {op!r}")
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter: mode must be one of {SCATTER_MODES}, got {mode!r}")
    *indices, u = rest
    b = _check(x, indices, "scatter", mode)
    want = Type(x.dtype, b + x.shape[len(indices):])
    if u != want:
        raise ValueError(f"scatter: updates of type {u} for positions of type {want}")
    return [x]


UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@scatter_p.def_rule("impl")
def _scatter_impl(x, *rest, op, mode):
    *indices, u = rest
    k = len(indices)
    _no_empty_axis(x.shape, np.shape(indices[0]), k, mode, "scatter")
    pos, ok = positions(indices, x.shape[:k], mode)
    out = x.copy()
    if mode == "drop":
        pos, u = [p[ok] for p in pos], u[ok]
    if op == "set":
        out[tuple(pos)] = u  # NumPy assigns in order: the last of repeated positions wins
    else:
        UFUNCS[op].at(out, tuple(pos), u)
    return [out]


def scatter(x: Any, indices: Sequence[Any], updates: Any, op: str = "set",
            mode: str = "raise") -> Any:
    indices, mode = _checked(indices, type_of_value(x).shape, mode)
    return bind1(scatter_p, x, *indices, updates, op=op, mode=mode)


def _winners(x_type: Type, indices: list, mode: str) -> Any:
    """Where in B each update of a scatter-set lands and is not overwritten by a later
    one (a bool of shape B): only those updates reach the result."""
    order = _row_major(type_of_value(indices[0]).shape)
    board = broadcast_in_dim(np.asarray(-1, np.int64), x_type.shape[:len(indices)], ())
    last = scatter(board, indices, order, "set", mode)
    return ew.eq(gather(last, indices, "fill" if mode == "drop" else mode, -2), order)


def _row_major(shape: tuple) -> Any:
    """Each position's number in row-major order, as an int64 array of `shape`."""
    total: Any = np.zeros(shape, np.int64) if not shape else None
    stride = 1
    for axis in reversed(range(len(shape))):
        term = ew.mul(iota(shape, axis, np.int64), np.asarray(stride, np.int64))
        total = term if total is None else ew.add(total, term)
        stride *= shape[axis]
    return total


@scatter_p.def_rule("jvp")
def _scatter_jvp(primals, tangents, *, op, mode):
    x, *rest = primals
    *idx, u = rest
    tx, tu = tangents[0], tangents[-1]
    out = scatter(x, idx, u, op, mode)
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return [out], [Zero(type_of_value(out))]
    tx, tu = instantiate(tx), instantiate(tu)
    if op in ("set", "add"):  # linear in (x, updates) together
        return [out], [scatter(tx, idx, tu, op, mode)]
    if op == "mul":
        return [out], [_mul_tangent(x, idx, u, tx, tu, mode)]
    return [out], [_extremum_tangent(x, idx, u, out, tx, tu, mode)]


def _mul_tangent(x, idx, u, tx, tu, mode):
    """d(x * prod of the updates at a position): tx times the product, plus x times the
    sum over updates of tu times the product of the others (exact where some are 0)."""
    dt = type_of_value(x).dtype
    one, zero = np.ones((), dt), np.zeros((), dt)
    ones = broadcast_in_dim(one, type_of_value(x).shape, ())
    gmode = "fill" if mode == "drop" else mode
    is_zero = ew.eq(u, zero)
    nonzero_prod = scatter(ones, idx, ew.select(is_zero, broadcast_in_dim(one, type_of_value(
        u).shape, ()), u), "mul", mode)
    n_zeros = scatter(broadcast_in_dim(zero, type_of_value(x).shape, ()), idx,
                      ew.convert(is_zero, dt), "add", mode)
    at_prod, at_zeros = gather(nonzero_prod, idx, gmode, 1), gather(n_zeros, idx, gmode, 0)
    safe_u = ew.select(is_zero, broadcast_in_dim(one, type_of_value(u).shape, ()), u)
    others = ew.select(ew.eq(at_zeros, zero), ew.div(at_prod, safe_u) if dt.kind == "f"
                       else ew.floor_divide(at_prod, safe_u),
                       ew.select(ew.eq(at_zeros, one), ew.select(is_zero, at_prod, ew.mul(
                           at_prod, zero)), ew.mul(at_prod, zero)))
    prod = scatter(ones, idx, u, "mul", mode)
    summed = scatter(broadcast_in_dim(zero, type_of_value(x).shape, ()), idx,
                     ew.mul(tu, others), "add", mode)
    return ew.add(ew.mul(tx, prod), ew.mul(x, summed))


def _extremum_tangent(x, idx, u, out, tx, tu, mode):
    """The tangent of the winners, split equally among ties (as max and min do)."""
    dt = type_of_value(x).dtype
    zero = np.zeros((), dt)
    gmode = "fill" if mode == "drop" else mode
    at_out = gather(out, idx, gmode, 0)
    hit_x = ew.convert(ew.eq(x, out), dt)
    hit_u = ew.convert(ew.eq(u, at_out), dt)
    if mode == "drop":  # a dropped update reaches nothing
        inside = ew.ne(gather(broadcast_in_dim(np.ones((), dt), type_of_value(x).shape, ()),
                              idx, "fill", 0), zero)
        hit_u = ew.select(inside, hit_u, ew.mul(hit_u, zero))
    base = broadcast_in_dim(zero, type_of_value(x).shape, ())
    count = ew.add(hit_x, scatter(base, idx, hit_u, "add", mode))
    total = ew.add(ew.mul(tx, hit_x), scatter(base, idx, ew.mul(tu, hit_u), "add", mode))
    return ew.div(total, count)


@scatter_p.def_rule("transpose")
def _scatter_transpose(cts, x, *rest, op, mode):
    if op not in ("set", "add"):
        raise NotImplementedError(f"scatter-{op} is not linear")
    *idx, u = rest
    if any(is_undefined(i) for i in idx):
        raise TypeError("scatter: indices are not differentiable")
    (ct,) = cts
    gmode = "fill" if mode == "drop" else mode
    u_type = u.type if isinstance(u, UndefinedPrimal) else type_of_value(u)
    x_type = x.type if isinstance(x, UndefinedPrimal) else type_of_value(x)
    ct_u = None
    if is_undefined(u):
        ct_u = gather(ct, idx, gmode, 0)
        if op == "set":  # an overwritten update reaches nothing
            keep = _winners(x_type, idx, mode)
            keep = broadcast_in_dim(keep, u_type.shape, tuple(range(type_of_value(keep).ndim)))
            ct_u = ew.select(keep, ct_u, zeros(u_type))
    ct_x = None
    if is_undefined(x):
        ct_x = scatter(ct, idx, zeros(u_type), "set", mode) if op == "set" else ct
    return [ct_x] + [None] * len(idx) + [ct_u]


@scatter_p.def_rule("batch")
def _scatter_batch(size, args, dims, *, op, mode):
    x, *rest = args
    *idx, u = rest
    idx = [materialize(i, d, size) for i, d in zip(idx, dims[1:-1])]
    x, u = materialize(x, dims[0], size), materialize(u, dims[-1], size)
    b_shape = type_of_value(idx[0]).shape
    return [scatter(x, [_lane_indices(size, b_shape[1:]), *idx], u, op, mode)], [0]


# ------------------------------------------------------------- index_check
# (an effect: it stays even when nothing reads what it checks, for eager calls raise,
# and so must every transformed one)


@index_check_p.def_rule("shape")
def _index_check_shape(i: Type, *, size: int, axis: int):
    if i.dtype.kind not in "iu":
        raise TypeError(f"arrays used as indices must be of integer type, got {i.dtype.name}")
    return [i]


def _inside(i: np.ndarray, size: int) -> np.ndarray:
    if i.dtype.kind == "u":  # never from the end
        return i < size
    wide = i.astype(np.int64)
    return (wide >= -size) & (wide < size)


@index_check_p.def_rule("impl")
def _index_check_impl(i, *, size, axis):
    inside = _inside(np.asarray(i), size)
    if not inside.all():
        bad = int(np.asarray(i)[~inside].reshape(-1)[0])
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
    return [i]


def index_check(i: Any, size: int, axis: int) -> Any:
    """`i`, after raising NumPy's IndexError if an entry is out of bounds for an axis of
    `size` (the `axis`-th indexed one; a negative entry counts from the end)."""
    if not isinstance(i, Tracer) and _inside(np.asarray(i), size).all():
        return i  # a constant in bounds: nothing to check (one out of bounds raises only
        # where it is read: perhaps in a branch not taken)
    return bind1(index_check_p, i, size=size, axis=axis)


index_check_p.def_rule("jvp", lambda primals, tangents, *, size, axis: (
    [index_check(primals[0], size, axis)], [Zero(type_of_value(primals[0]))]))
index_check_p.def_rule("transpose", NOT_LINEAR)


@index_check_p.def_rule("batch")
def _index_check_batch(n: int, args, dims, *, size, axis):
    """Checked in the lanes that evaluate it for real only: under a vmapped cond, those
    taking the branch; in the interpreter's loop with lanes, those running (`taking`).
    The others read index 0 instead: their results are dropped, and an index there that
    is out of bounds must not raise."""
    i, mask = args[0], taking()
    if mask is not None:
        shape = type_of_value(i).shape
        i = ew.select(broadcast_in_dim(mask, shape, (0,)), i,
                      broadcast_in_dim(np.zeros((), type_of_value(i).dtype), shape, ()))
    return [index_check(i, size, axis)], dims
