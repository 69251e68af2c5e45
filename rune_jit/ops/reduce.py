"""Reductions over a set of axes (sum, prod, max, min) and along one axis (argmax, argmin)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ad_util import Zero
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind1, type_of_value
from .elementwise import convert, div, eq, mul, select
from .jvp_rules import linear_jvp, zero_jvp
from .shape import broadcast_in_dim

REDUCTIONS = {"reduce_sum": np.sum, "reduce_prod": np.prod, "reduce_max": np.max,
              "reduce_min": np.min}
P: dict[str, Primitive] = {}


def _reduced_shape(x: Type, axes: Sequence[int], name: str) -> tuple:
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {tuple(axes)} are not distinct axes of {x}")
    return tuple(n for i, n in enumerate(x.shape) if i not in axes)


def _define(name: str, np_fn: Callable) -> Primitive:
    prim = P[name] = Primitive(name, traits=frozenset({"costly"}))

    @prim.def_rule("shape")
    def shape(x: Type, *, axes) -> list[Type]:
        if name == "reduce_sum" and x.dtype.kind == "b":
            raise TypeError("reduce_sum of bool: convert to an integer first")
        return [Type(x.dtype, _reduced_shape(x, axes, name))]

    def impl(x, *, axes):
        if name in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name} over an empty axis has no identity")
        return [np.asarray(np_fn(x, axis=tuple(axes)), x.dtype)]

    prim.def_rule("impl", impl)
    prim.def_rule("batch", lambda size, args, dims, *, axes: (
        [bind1(prim, args[0], axes=tuple(a + 1 for a in axes))], [0]))
    prim.def_rule("transpose", NOT_LINEAR)
    return prim


for _n, _f in REDUCTIONS.items():
    _define(_n, _f)


def _reducer(name: str):
    def reduce(x: Any, axes: Sequence[int]) -> Any:
        axes = tuple(sorted(int(a) for a in axes))
        return bind1(P[name], x, axes=axes) if axes else x

    reduce.__name__ = name
    return reduce


reduce_sum, reduce_prod, reduce_max, reduce_min = (_reducer(n) for n in REDUCTIONS)


def expand_back(y: Any, x_type: Type, axes: Sequence[int]) -> Any:
    """A reduced value broadcast back over the reduced axes of `x_type`."""
    kept = tuple(i for i in range(x_type.ndim) if i not in axes)
    return broadcast_in_dim(y, x_type.shape, kept)


# ------------------------------------------------------------- derivatives


linear_jvp(P["reduce_sum"])


P["reduce_sum"].def_rule(
    "transpose", lambda cts, x, *, axes: [expand_back(cts[0], x.type, axes)])


def _extremum_jvp(prim: Primitive):
    """Tangent of max/min: the mean of the tangents at the places that attain it."""

    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = bind1(prim, x, axes=axes)
        if isinstance(t, Zero):
            return [ans], [Zero(type_of_value(ans))]
        xt = type_of_value(x)
        hits = convert(eq(x, expand_back(ans, xt, axes)), xt.dtype)
        return [ans], [div(reduce_sum(mul(t, hits), axes), reduce_sum(hits, axes))]

    prim.def_rule("jvp", jvp)


_extremum_jvp(P["reduce_max"])
_extremum_jvp(P["reduce_min"])


@P["reduce_prod"].def_rule("jvp")
def _prod_jvp(primals, tangents, *, axes):
    """d prod = sum_i t_i * prod_{j != i} x_j, exact where x has zeros.

    The product of the others is prod/x_i when no x is zero; with one zero it
    is the product of the nonzeros at that zero and 0 elsewhere; with more, 0.
    """
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if isinstance(t, Zero):
        return [ans], [Zero(type_of_value(ans))]
    xt = type_of_value(x)
    zero, one = np.zeros((), xt.dtype), np.ones((), xt.dtype)
    is_zero = eq(x, zero)
    nonzero_prod = expand_back(reduce_prod(select(is_zero, one, x), axes), xt, axes)
    n_zeros = expand_back(reduce_sum(convert(is_zero, xt.dtype), axes), xt, axes)
    others = select(
        eq(n_zeros, zero),
        div(nonzero_prod, select(is_zero, one, x)),
        select(eq(n_zeros, one), select(is_zero, nonzero_prod, zero), zero),
    )
    return [ans], [reduce_sum(mul(t, others), axes)]


# ------------------------------------------------------------- argmax, argmin

def _define_arg(name: str, np_fn: Callable) -> Primitive:
    prim = P[name] = Primitive(name)

    @prim.def_rule("shape")
    def shape(x: Type, *, axis, index_dtype) -> list[Type]:
        if x.shape[axis] == 0:
            raise ValueError(f"{name} of an empty axis")
        return [Type(np.dtype(index_dtype), _reduced_shape(x, (axis,), name))]

    prim.def_rule("impl", lambda x, *, axis, index_dtype: [
        np.asarray(np_fn(x, axis=axis), index_dtype)])
    zero_jvp(prim)
    prim.def_rule("batch", lambda size, args, dims, *, axis, index_dtype: (
        [bind1(prim, args[0], axis=axis + 1, index_dtype=index_dtype)], [0]))
    prim.def_rule("transpose", NOT_LINEAR)
    return prim


argmax_p = _define_arg("argmax", np.argmax)
argmin_p = _define_arg("argmin", np.argmin)


def argmax(x: Any, axis: int) -> Any:
    return bind1(argmax_p, x, axis=axis, index_dtype=np.dtype(np.int64))


def argmin(x: Any, axis: int) -> Any:
    return bind1(argmin_p, x, axis=axis, index_dtype=np.dtype(np.int64))



# ------------------------------------------------------------- lowering
#
# Two loop orders. When the last axis is reduced, each output element keeps its
# accumulator in a register over the reduced axes ("inner"); otherwise the
# output is the accumulator and the kept axes are the innermost loop ("outer"),
# which vectorizes across them. Float sums reassociate (so they vectorize) and
# float32 sums accumulate in float64, so a float32 sum is accurate.

def _combine(kind: str):
    from ..backend import arith as A

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
    return np.dtype(np.float64) if kind == "reduce_sum" and dtype == np.float32 else dtype


def _lower_reduce(kind: str):
    def lower(lw, args, out_types, *, axes):
        from ..backend.arith import convert
        from ..backend.values import Array, Scalar

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
                return [Scalar(out, reduce_at([]))]
            ptr = lw.out_buffer(0, out)
            lw.loop_nest(out.shape, lambda k: lw.store_at(ptr, out.dtype, lw.offset(out.shape, k),
                                                          reduce_at(k)))
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




for _n in REDUCTIONS:
    P[_n].def_rule("lower", _lower_reduce(_n))


def _lower_arg(larger: bool):
    """argmax/argmin: the first index of the extreme, and of the first NaN (as NumPy)."""
    def lower(lw, args, out_types, *, axis, index_dtype):
        from ..backend import arith as A
        from ..backend.arith import convert
        from ..backend.values import Array, Scalar

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


P["argmax"].def_rule("lower", _lower_arg(True))
P["argmin"].def_rule("lower", _lower_arg(False))
