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
