"""Shape primitives: broadcast, reshape, transpose, concatenate, slices, rev, iota.

All are linear (but iota, which takes no operand); each one's transpose is
another of them.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..ad_util import is_undefined
from ..ir import UNSIZED, Type
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import bind1, producer, type_of_value
from .jvp_rules import linear_jvp, zero_jvp


def _unary_batch(prim: Primitive, shift):
    """Batch rule for one operand batched at 0: params rewritten by `shift`."""

    def batch(size, args, dims, **params):
        return [bind1(prim, args[0], **shift(size, **params))], [0]

    prim.def_rule("batch", batch)


# ------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_rule("shape")
def _broadcast_shape(x: Type, *, shape, broadcast_dims) -> list[Type]:
    dims = broadcast_dims
    if len(dims) != x.ndim or any(
        not (0 <= d < len(shape)) or x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)
    ) or list(dims) != sorted(set(dims)):
        raise ValueError(f"cannot broadcast {x} to {shape} along dims {dims}")
    return [Type(x.dtype, tuple(shape))]


@broadcast_in_dim_p.def_rule("impl")
def _broadcast_impl(x, *, shape, broadcast_dims):
    if Type(x.dtype, tuple(shape)).unsized:  # as compiled code, which holds values whole
        raise NotImplementedError(f"broadcast_in_dim: {Type(x.dtype, tuple(shape))} cannot "
                                  f"be held whole: {UNSIZED}")
    dims = broadcast_dims
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    return [np.broadcast_to(x.reshape(expanded), shape)]


@broadcast_in_dim_p.def_rule("transpose")
def _broadcast_transpose(cts, x, *, shape, broadcast_dims):
    from .reduce import reduce_sum

    dims = broadcast_dims
    (ct,) = cts
    new_axes = tuple(d for d in range(len(shape)) if d not in dims)
    stretched = tuple(d for i, d in enumerate(dims) if x.type.shape[i] == 1 and shape[d] != 1)
    summed = reduce_sum(ct, tuple(sorted(new_axes + stretched)))
    return [reshape(summed, x.type.shape)]


linear_jvp(broadcast_in_dim_p)
_unary_batch(broadcast_in_dim_p, lambda size, shape, broadcast_dims: dict(
    shape=(size,) + tuple(shape), broadcast_dims=(0,) + tuple(d + 1 for d in broadcast_dims)))


def broadcast_in_dim(x: Any, shape: Sequence[int], dims: Sequence[int]) -> Any:
    shape, dims = tuple(int(s) for s in shape), tuple(dims)
    if type_of_value(x).shape == shape and dims == tuple(range(len(shape))):
        return x
    return bind1(broadcast_in_dim_p, x, shape=shape, broadcast_dims=dims)


def materialize(x: Any, dim: int | None, size: int) -> Any:
    """A batched value with its lanes on axis 0, broadcasting an unbatched one (dim None)
    across the `size` lanes."""
    if dim is not None:
        return x
    t = type_of_value(x)
    return broadcast_in_dim(x, (size,) + t.shape, tuple(range(1, 1 + t.ndim)))


def full(shape: Sequence[int], value: Any) -> Any:
    """`value` (a scalar) broadcast to `shape`."""
    return broadcast_in_dim(value, shape, ())


# ------------------------------------------------------------- reshape

reshape_p = Primitive("reshape", traits=("view",))


@reshape_p.def_rule("shape")
def _reshape_shape(x: Type, *, shape) -> list[Type]:
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape {x} to {shape}")
    return [Type(x.dtype, tuple(shape))]


reshape_p.def_rule("impl", lambda x, *, shape: [x.reshape(shape)])
reshape_p.def_rule("transpose", lambda cts, x, *, shape: [reshape(cts[0], x.type.shape)])
linear_jvp(reshape_p)
_unary_batch(reshape_p, lambda size, shape: dict(shape=(size,) + tuple(shape)))


def reshape(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(int(s) for s in shape)
    if type_of_value(x).shape == shape:
        return x
    return bind1(reshape_p, x, shape=shape)


# ------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


@transpose_p.def_rule("shape")
def _transpose_shape(x: Type, *, perm) -> list[Type]:
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"{perm} is not a permutation of the axes of {x}")
    return [Type(x.dtype, tuple(x.shape[p] for p in perm))]


transpose_p.def_rule("impl", lambda x, *, perm: [np.transpose(x, perm)])
transpose_p.def_rule(
    "transpose", lambda cts, x, *, perm: [transpose(cts[0], tuple(np.argsort(perm)))])
linear_jvp(transpose_p)
_unary_batch(transpose_p, lambda size, perm: dict(perm=(0,) + tuple(p + 1 for p in perm)))


def transpose(x: Any, perm: Sequence[int]) -> Any:
    perm = tuple(int(p) for p in perm)
    inner = producer(x)
    if inner is not None and inner.prim is transpose_p:  # two transposes make one
        x, perm = _traced_input(x, inner), tuple(inner.params["perm"][p] for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return bind1(transpose_p, x, perm=perm)


def _traced_input(x: Any, eqn) -> Any:
    """The value of `eqn`'s single input, as the trace that made `x` sees it."""
    from ..ir import Literal
    from ..trace import Tracer

    a = eqn.inputs[0]
    return a.value if isinstance(a, Literal) else Tracer(a, x.builder)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    ndim = type_of_value(x).ndim
    perm = [a for a in range(ndim) if a != src]
    perm.insert(dst, src)
    return transpose(x, perm)


# ------------------------------------------------------------- rev

rev_p = Primitive("rev")


@rev_p.def_rule("shape")
def _rev_shape(x: Type, *, axes) -> list[Type]:
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"rev axes {axes} out of range for {x}")
    return [x]


rev_p.def_rule("impl", lambda x, *, axes: [np.flip(x, axes)])
rev_p.def_rule("transpose", lambda cts, x, *, axes: [rev(cts[0], axes)])
linear_jvp(rev_p)
_unary_batch(rev_p, lambda size, axes: dict(axes=tuple(a + 1 for a in axes)))


def rev(x: Any, axes: Sequence[int]) -> Any:
    axes = tuple(axes)
    return bind1(rev_p, x, axes=axes) if axes else x


# ------------------------------------------------------------- slice and its transpose, pad

slice_p = Primitive("slice")
pad_p = Primitive("pad")


def _slice_len(start: int, limit: int, stride: int) -> int:
    return max(0, -(-(limit - start) // stride))


@slice_p.def_rule("shape")
def _slice_shape(x: Type, *, starts, limits, strides) -> list[Type]:
    if not (len(starts) == len(limits) == len(strides) == x.ndim) or any(
        not (0 <= s <= lim <= n) or st < 1
        for s, lim, st, n in zip(starts, limits, strides, x.shape)
    ):
        raise ValueError(f"bad slice {starts}:{limits}:{strides} of {x}")
    return [Type(x.dtype, tuple(map(_slice_len, starts, limits, strides)))]


@slice_p.def_rule("impl")
def _slice_impl(x, *, starts, limits, strides):
    return [x[tuple(map(slice, starts, limits, strides))]]


@slice_p.def_rule("transpose")
def _slice_transpose(cts, x, *, starts, limits, strides):
    return [bind1(pad_p, cts[0], shape=x.type.shape, starts=starts, strides=strides)]


linear_jvp(slice_p)
_unary_batch(slice_p, lambda size, starts, limits, strides: dict(
    starts=(0,) + tuple(starts), limits=(size,) + tuple(limits), strides=(1,) + tuple(strides)))


@pad_p.def_rule("shape")
def _pad_shape(x: Type, *, shape, starts, strides) -> list[Type]:
    limits = [s + (n - 1) * st + 1 if n else s for s, n, st in zip(starts, x.shape, strides)]
    if len(shape) != x.ndim or any(lim > n for lim, n in zip(limits, shape)):
        raise ValueError(f"cannot place {x} in {shape} at {starts} with strides {strides}")
    return [Type(x.dtype, tuple(shape))]


@pad_p.def_rule("impl")
def _pad_impl(x, *, shape, starts, strides):
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(s, s + n * st, st) for s, n, st in zip(starts, x.shape, strides))] = x
    return [out]


@pad_p.def_rule("transpose")
def _pad_transpose(cts, x, *, shape, starts, strides):
    limits = tuple(s + n * st for s, n, st in zip(starts, x.type.shape, strides))
    limits = tuple(min(lim, n) for lim, n in zip(limits, shape))
    return [slice_op(cts[0], starts, limits, strides)]


linear_jvp(pad_p)
_unary_batch(pad_p, lambda size, shape, starts, strides: dict(
    shape=(size,) + tuple(shape), starts=(0,) + tuple(starts), strides=(1,) + tuple(strides)))


def slice_op(x: Any, starts, limits, strides=None) -> Any:
    shape = type_of_value(x).shape
    strides = tuple(strides) if strides is not None else (1,) * len(shape)
    if tuple(starts) == (0,) * len(shape) and tuple(limits) == shape and set(strides) <= {1}:
        return x
    return bind1(slice_p, x, starts=tuple(starts), limits=tuple(limits), strides=strides)


# ------------------------------------------------------------- concatenate

concatenate_p = Primitive("concatenate")


@concatenate_p.def_rule("shape")
def _concat_shape(*xs: Type, axis) -> list[Type]:
    first = xs[0]
    for x in xs[1:]:
        if x.dtype != first.dtype or x.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis
        ):
            raise ValueError(f"cannot concatenate {first} and {x} along axis {axis}")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return [Type(first.dtype, tuple(shape))]


concatenate_p.def_rule("impl", lambda *xs, axis: [np.concatenate(xs, axis)])


@concatenate_p.def_rule("transpose")
def _concat_transpose(cts, *xs, axis):
    (ct,) = cts
    shape = type_of_value(ct).shape
    out, offset = [], 0
    for x in xs:
        n = (x.type if is_undefined(x) else type_of_value(x)).shape[axis]
        if is_undefined(x):
            starts = tuple(offset if i == axis else 0 for i in range(len(shape)))
            limits = tuple(offset + n if i == axis else s for i, s in enumerate(shape))
            out.append(slice_op(ct, starts, limits))
        else:
            out.append(None)
        offset += n
    return out


linear_jvp(concatenate_p)


@concatenate_p.def_rule("batch")
def _concat_batch(size, args, dims, *, axis):
    args = [materialize(a, d, size) for a, d in zip(args, dims)]
    return [bind1(concatenate_p, *args, axis=axis + 1)], [0]


def concatenate(xs: Sequence[Any], axis: int) -> Any:
    return xs[0] if len(xs) == 1 else bind1(concatenate_p, *xs, axis=axis)


# ------------------------------------------------------------- iota

iota_p = Primitive("iota")


@iota_p.def_rule("shape")
def _iota_shape(*, shape, axis, dtype) -> list[Type]:
    if np.dtype(dtype).kind not in "fiu":
        raise TypeError(f"iota counts in a number dtype, not {np.dtype(dtype)}")
    return [Type(np.dtype(dtype), tuple(shape))]


@iota_p.def_rule("impl")
def _iota_impl(*, shape, axis, dtype):
    ramp = np.arange(shape[axis], dtype=dtype).reshape(
        [n if i == axis else 1 for i, n in enumerate(shape)])
    return [np.broadcast_to(ramp, shape)]


zero_jvp(iota_p)
iota_p.def_rule("transpose", NOT_LINEAR)
iota_p.def_rule("batch", Absent("takes no operand, so it is never batched"))


def iota(shape: Sequence[int], axis: int, dtype) -> Any:
    return bind1(iota_p, shape=tuple(shape), axis=axis, dtype=np.dtype(dtype))
