"""Views and layouts: broadcasts, transposes, reversals, slices, reshapes and iota remap
indices, so they lower to lazy values (no loop, no memory) that whoever reads them reads
through; pad and concatenate write a buffer, and so do dynamic updates. Slices at
traced positions clamp their starts so the window fits, as the primitives define."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ....ir import Type
from ....ops.index import dynamic_slice_p, dynamic_update_slice_p
from ....ops.shape import (broadcast_in_dim_p, concatenate_p, iota_p, pad_p, reshape_p, rev_p,
                          slice_p, transpose_p)
from ..codegen.arith import convert, maximum
from ..codegen import reuse
from ..codegen.lower import LOWERINGS, lowering
from ..codegen.storing import ROW_AXIS
from ..codegen.values import Array, Lazy, Scalar, cost


def _lower_view(remap_for):
    """A lowering rule for a primitive that only remaps indices."""
    def lower(lw, args, out_types, **params):
        (x,) = args
        out = out_types[0]
        if isinstance(x, Scalar):
            return [_splat(lw, x, out)]
        remap = remap_for(lw, x.type, out, **params)
        return [Lazy(out, lambda idx: lw.load(x, remap(idx)), cost(x))]
    return lower


def _splat(lw, x: Scalar, out: Type) -> Lazy:
    """A scalar in every element (whole: in every lane of one vector)."""
    return Lazy(out, lambda idx: lw.splat(x.v), 0, cheap=True,
                whole=lambda: lw.vsplat(x.v, out.size))


def _broadcast_remap(lw, xt, out, *, shape, broadcast_dims):
    zero = lw.i64(0)
    return lambda idx: [zero if xt.shape[i] == 1 and shape[d] != 1 else idx[d]
                        for i, d in enumerate(broadcast_dims)]


def _transpose_remap(lw, xt, out, *, perm):
    inverse = np.argsort(perm)
    return lambda idx: [idx[inverse[i]] for i in range(len(perm))]


def _rev_remap(lw, xt, out, *, axes):
    return lambda idx: [lw.b.sub(lw.i64(n - 1), i) if a in axes else i
                        for a, (i, n) in enumerate(zip(idx, xt.shape))]


def _slice_remap(lw, xt, out, *, starts, limits, strides):
    def at(i, s, st):
        scaled = i if st == 1 else lw.b.mul(i, lw.i64(st))
        return scaled if s == 0 else lw.b.add(scaled, lw.i64(s))
    return lambda idx: [at(i, s, st) for i, s, st in zip(idx, starts, strides)]


@lowering(broadcast_in_dim_p)
def _broadcast_lower(lw, args, out_types, **params):
    """A view of x. Repeated along a short last axis, x is one value a row (the view is
    `rowwise`), stored first if it is lazy arithmetic (each row's log_softmax normalizer:
    one log a row, not one per element of it). (Stored before a long row too, x made W9's
    and FILL's loops 3-4 times slower: left lazy there.)"""
    (x,), out = args, out_types[0]
    dims, last = params["broadcast_dims"], out.ndim - 1
    along_rows = (not isinstance(x, Scalar) and out.ndim > 1 and out.shape[-1] > 1
                  and (last not in dims or x.type.shape[dims.index(last)] == 1))
    if (along_rows and out.shape[-1] <= ROW_AXIS and isinstance(x, Lazy) and cost(x) > 0
            and lw.width is None):
        x = lw.materialize(x)
    (view,) = _lower_view(_broadcast_remap)(lw, [x], out_types, **params)
    view.rowwise = along_rows
    return [view]


@lowering(transpose_p)
def _transpose_lower(lw, args, out_types, *, perm):
    (view,) = _lower_view(_transpose_remap)(lw, args, out_types, perm=perm)
    x = args[0]
    if isinstance(x, Array) and x.rows is None:
        view.transposed = (x, tuple(perm))
    return [view]


LOWERINGS[rev_p] = _lower_view(_rev_remap)
LOWERINGS[slice_p] = _lower_view(_slice_remap)
reuse.SEE_THROUGH.update({broadcast_in_dim_p, reshape_p})


@lowering(reshape_p)
def _reshape_lower(lw, args, out_types, *, shape):
    (x,), out = args, out_types[0]
    if isinstance(x, Scalar):
        if out.shape == ():
            return [Scalar(out, x.v)]
        return [_splat(lw, x, out)]
    kept = [n for n in x.type.shape if n != 1]
    if isinstance(x, Lazy) and kept == [n for n in out.shape if n != 1]:
        # only axes of size 1 come or go: read through with those indices dropped or zero
        src = [i for i, n in enumerate(out.shape) if n != 1]
        def remap(idx):
            it = iter(idx[i] for i in src)
            return [lw.i64(0) if n == 1 else next(it) for n in x.type.shape]
        # the same elements in the same order: the same vector whole
        whole = (lambda: lw.vector(x)) if lw.vectorizable(x) else None
        return [Lazy(out, lambda idx: lw.load(x, remap(idx)), x.cost, whole=whole)]
    return [Array(out, lw.materialize(x).ptr)]


@lowering(iota_p)
def _iota_lower(lw, args, out_types, *, shape, axis, dtype):
    return [Lazy(out_types[0], lambda idx: convert(lw.b, idx[axis], np.dtype(dtype)), 0,
                 cheap=True)]


@lowering(pad_p)
def _pad_lower(lw, args, out_types, *, shape, starts, strides):
    (x,), out = args, out_types[0]
    ptr = lw.out_buffer(0, out)
    if all(st == 1 for st in strides):  # zeros around x: each element written once
        zero = Scalar(out.with_shape(()), lw.const(out.dtype, 0))
        _around(lw, ptr, out, zero, list(starts), list(x.type.shape))
        _put(lw, ptr, out, x, list(starts), x.type.shape)
        return [Array(out, ptr)]
    lw.fn.memset0(ptr, out.nbytes)
    place = _slice_remap(lw, x.type, out, starts=starts, limits=shape, strides=strides)
    lw.elements(x.type.shape, lambda idx: lw.store_at(
        ptr, out.dtype, lw.offset(out.shape, place(idx)), lw.load(x, idx)))
    return [Array(out, ptr)]


@lowering(concatenate_p)
def _concat_lower(lw, args, out_types, *, axis):
    out = out_types[0]
    ptr = lw.out_buffer(0, out)
    offset = 0
    for x in args:
        _put(lw, ptr, out, x, [offset if a == axis else 0 for a in range(out.ndim)],
             x.type.shape)
        offset += x.type.shape[axis]
    return [Array(out, ptr)]


def _put(lw, ptr, out: Type, x, at: list[int], shape, src: list[int] | None = None) -> None:
    """Write the box of `shape` of `x` from `src` (default: its origin) into the buffer
    of `out` at `at`."""
    src = src if src is not None else [0] * len(at)

    def put(idx):
        def moved(origin):
            return [i if o == 0 else lw.b.add(i, lw.i64(o)) for i, o in zip(idx, origin)]
        lw.store_at(ptr, out.dtype, lw.offset(out.shape, moved(at)), lw.load(x, moved(src)))
    lw.elements(tuple(shape), put)


def _around(lw, ptr, out: Type, x, at: list[int], sizes: list[int]) -> None:
    """Write `x` (of out's shape, or a scalar) everywhere in out's buffer but the box of
    `sizes` at `at`: per axis, the slabs before and after the box, across the box on the
    axes before it and whole on those after."""
    for a, n in enumerate(out.shape):
        for lo, hi in ((0, at[a]), (at[a] + sizes[a], n)):
            if hi > lo:
                origin = at[:a] + [lo] + [0] * (out.ndim - a - 1)
                _put(lw, ptr, out, x, origin, sizes[:a] + [hi - lo] + list(out.shape[a + 1:]),
                     origin)


def _clamped_starts(lw, starts, dims, sizes, lane):
    """Each start (a register, or read at this lane) clamped so the window fits."""
    out = []
    for s, n, k in zip(starts, dims, sizes):
        v = convert(lw.b, lw.load(s, lane), np.dtype(np.int64))
        v = maximum(lw.b, maximum(lw.b, v, lw.i64(0), True), lw.i64(n - k), False)
        out.append(v)
    return out


@lowering(dynamic_slice_p)
def _ds_lower(lw, args, out_types, *, sizes, batch):
    x, *starts = args
    out = out_types[0]
    dims = x.type.shape[batch:]
    fixed = None if batch else _clamped_starts(lw, starts, dims, sizes, [])

    def at(idx):
        lane, inner = idx[:batch], idx[batch:]
        st = fixed if fixed is not None else _clamped_starts(lw, starts, dims, sizes, lane)
        return lw.load(x, lane + [lw.b.add(i, s) for i, s in zip(inner, st)])

    return [Lazy(out, at, getattr(x, "cost", 0) + 1)]


@lowering(dynamic_update_slice_p)
def _dus_lower(lw, args, out_types, *, batch):
    x, upd, *starts = args
    out = out_types[0]
    dims, sizes = out.shape[batch:], upd.type.shape[batch:]
    at = None if batch else _static_starts(starts, dims, sizes)
    if at is not None:  # x around the window, upd in it: each element written once
        ptr = lw.out_buffer(0, out)
        if not (isinstance(x, Array) and x.ptr is ptr):  # (not in place: carries.py)
            _around(lw, ptr, out, x, at, list(sizes))
        _put(lw, ptr, out, upd, at, sizes)
        return [Array(out, ptr)]
    ptr = lw.materialize(x, lw.out_buffer(0, out)).ptr
    fixed = None if batch else _clamped_starts(lw, starts, dims, sizes, [])

    def put(idx):
        lane, inner = idx[:batch], idx[batch:]
        st = fixed if fixed is not None else _clamped_starts(lw, starts, dims, sizes, lane)
        where = lane + [lw.b.add(i, s) for i, s in zip(inner, st)]
        lw.store_at(ptr, out.dtype, lw.offset(out.shape, where), lw.load(upd, idx))

    lw.elements(upd.type.shape, put)
    return [Array(out, ptr)]


def _static_starts(starts, dims, sizes) -> list[int] | None:
    """The starts, clamped as the primitive defines, if all are constants (not lanes of
    a block: vectors)."""
    if not all(isinstance(s, Scalar) and isinstance(s.v, ir.Constant)
               and isinstance(s.v.type, ir.IntType) for s in starts):
        return None
    return [min(max(int(s.v.constant), 0), n - k) for s, n, k in zip(starts, dims, sizes)]
