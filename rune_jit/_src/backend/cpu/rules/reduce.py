"""Reductions over axes (sum, prod, max, min) and along one (argmax, argmin).

Two loop orders. When the last axis is reduced, each output element keeps its
accumulator in a register over the reduced axes ("inner"); otherwise the
output is the accumulator and the kept axes are the innermost loop ("outer"),
which vectorizes across them. Float sums reassociate (so they vectorize) and
float32 sums accumulate in float64, so a float32 sum is accurate.
"""

from __future__ import annotations

import math

import numpy as np

from ....ops.reduce import REDUCTIONS, P, argmax_p, argmin_p
from ....ops.sort import cumulative_p
from ..codegen import arith as A, reuse
from ..codegen.arith import convert
from ..codegen.lower import LOWERINGS, lowering
from ..codegen.vectors import SMALL_ELEMENTS
from .parallel_maps import elements_in_parallel, fold_in_blocks
from ..codegen.values import Array, Scalar, cost


def _combine(kind: str):
    def add(b, acc, x):
        return b.fadd(acc, x, flags=("reassoc",)) if A.is_float(acc) else A.add(b, acc, x)

    return {"reduce_sum": add,
            "reduce_prod": lambda b, acc, x: A.mul(b, acc, x),
            "reduce_max": lambda b, acc, x: A.maximum(b, acc, x, True),
            "reduce_min": lambda b, acc, x: A.maximum(b, acc, x, False)}[kind]


def _identity(kind: str, dtype: np.dtype):
    if kind == "reduce_sum":
        return 0
    if kind == "reduce_prod":
        return 1
    big = np.inf if dtype.kind == "f" else (1 if dtype.kind == "b" else np.iinfo(dtype).max)
    small = -np.inf if dtype.kind == "f" else (0 if dtype.kind == "b" else np.iinfo(dtype).min)
    return small if kind == "reduce_max" else big


def _acc_dtype(kind: str, dtype: np.dtype) -> np.dtype:
    """float32 sums accumulate in float64 (accurate); float16 sums and products in float32,
    rounded once at the end, as NumPy's do."""
    if kind == "reduce_sum" and dtype == np.float32:
        return np.dtype(np.float64)
    if kind in ("reduce_sum", "reduce_prod") and dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def _lower_reduce(kind: str):
    def lower(lw, args, out_types, *, axes):
        (x,), out = args, out_types[0]
        xt, acc_t = x.type, _acc_dtype(kind, x.type.dtype)
        combine, init = _combine(kind), lw.const(acc_t, _identity(kind, xt.dtype))
        kept = [i for i in range(xt.ndim) if i not in axes]
        red_shape = [xt.shape[i] for i in axes]

        def full(k_idx, r_idx):
            it_k, it_r = iter(k_idx), iter(r_idx)
            return [next(it_r) if i in axes else next(it_k) for i in range(xt.ndim)]

        def element(idx):
            return convert(lw.b, lw.load(x, idx), acc_t)

        def finish(acc):
            return convert(lw.b, acc, xt.dtype)

        if not kept or axes[-1] == xt.ndim - 1:  # inner: a register accumulator
            def reduce_at(k_idx):
                (acc,) = lw.fold(red_shape, [init], lambda r_idx, acc: [
                    combine(lw.b, acc[0], element(full(k_idx, r_idx)))])
                return finish(acc)

            if not kept:
                split = fold_in_blocks(lw, tuple(red_shape), xt.size * (cost(x) + 1), acc_t,
                                       init, lambda a, v: combine(lw.b, a, v),
                                       lambda r_idx: element(full([], r_idx)))
                return [Scalar(out, reduce_at([]) if split is None else finish(split))]
            ptr = lw.out_buffer(0, out)

            def one(k):  # each row's element its own: the loops are parallel
                lw.store_at(ptr, out.dtype, lw.offset(out.shape, k), reduce_at(k), own=True)
            unrolled = math.prod(red_shape) <= SMALL_ELEMENTS  # by fold: no loop
            if not elements_in_parallel(lw, out.shape, xt.size * (cost(x) + 1), one, unrolled,
                                        parallel=unrolled):
                lw.loop_nest(out.shape, one, parallel=unrolled)
            return [Array(out, ptr)]
        acc_type = out.with_dtype(acc_t)
        acc_ptr = lw.out_buffer(0, out) if acc_t == out.dtype else lw.buffer(acc_type)
        lw.elements(out.shape, lambda k: lw.store_at(acc_ptr, acc_t, lw.offset(out.shape, k),
                                                     init))

        def accumulate(r_idx):
            def at(k_idx):
                off = lw.offset(out.shape, k_idx)
                old = lw.load_at(acc_ptr, acc_t, off)
                lw.store_at(acc_ptr, acc_t, off, combine(lw.b, old, element(full(k_idx, r_idx))))
            lw.elements(out.shape, at)

        lw.loop_nest(red_shape, accumulate)
        if acc_t == out.dtype:
            return [Array(out, acc_ptr)]
        ptr = lw.out_buffer(0, out)
        lw.elements(out.shape, lambda k: lw.store_at(
            ptr, out.dtype, lw.offset(out.shape, k),
            finish(lw.load_at(acc_ptr, acc_t, lw.offset(out.shape, k)))))
        return [Array(out, ptr)]

    return lower


LOWERINGS.update({P[name]: _lower_reduce(name) for name in REDUCTIONS})
reuse.READ_AT_ONCE.update(P[name] for name in REDUCTIONS)


def _lower_arg(larger: bool):
    """argmax/argmin: the first index of the extreme, and of the first NaN (as NumPy)."""
    def lower(lw, args, out_types, *, axis, index_dtype):
        (x,), out = args, out_types[0]
        xt = x.type
        n = xt.shape[axis]

        def arg_at(k_idx):
            def at(j):
                return lw.load(x, k_idx[:axis] + [j] + k_idx[axis:])

            def step(j, vals):
                best, where = vals
                v = at(j)
                op = ">" if larger else "<"
                better = A.compare(lw.b, op, v, best)
                if A.is_float(v):  # NaN wins, the first one; a NaN best stays
                    better = lw.b.and_(lw.b.or_(better, lw.b.fcmp_unordered("uno", v, v)),
                                       lw.b.fcmp_ordered("ord", best, best))
                return [lw.b.select(better, v, best), lw.b.select(better, j, where)]

            _, where = lw.fn.loop(lw.i64(1), lw.i64(n), 1, [at(lw.i64(0)), lw.i64(0)], step)
            return convert(lw.b, where, np.dtype(index_dtype))

        if out.shape == ():
            return [Scalar(out, arg_at([]))]
        ptr = lw.out_buffer(0, out)
        lw.loop_nest(out.shape, lambda k: lw.store_at(ptr, out.dtype, lw.offset(out.shape, k),
                                                      arg_at(k)))
        return [Array(out, ptr)]
    return lower


LOWERINGS[argmax_p] = _lower_arg(True)
LOWERINGS[argmin_p] = _lower_arg(False)


@lowering(cumulative_p)
def _cumulative(lw, args, out_types, *, axis, op, reverse):
    """One pass along the axis per position of the others, the running value in a
    register (sums in their own dtype, as NumPy's cumsum)."""
    (x,), out = args, out_types[0]
    kind = {"sum": "reduce_sum", "prod": "reduce_prod", "max": "reduce_max",
            "min": "reduce_min"}[op]
    combine, n = _combine(kind), out.shape[axis]
    ptr = lw.out_buffer(0, out)
    others = out.shape[:axis] + out.shape[axis + 1:]

    def line(k_idx):
        def step(j, acc):
            idx = k_idx[:axis] + [j] + k_idx[axis:]
            v = lw.load(x, idx)
            new = v if acc is None else combine(lw.b, acc[0], v)
            lw.store_at(ptr, out.dtype, lw.offset(out.shape, idx), new)
            return [new]

        if n == 0:
            return
        first = lw.i64(n - 1 if reverse else 0)
        (start,) = step(first, None)
        if n > 1:
            count = lw.i64(n - 1)
            shift = (lambda i: i) if reverse else (lambda i: lw.b.add(i, lw.i64(1)))
            lw.fn.counted_loop(count, reverse, [start], lambda i, acc: step(shift(i), acc))

    lw.loop_nest(others, line)
    return [Array(out, ptr)]
