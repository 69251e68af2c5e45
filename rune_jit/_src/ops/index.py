"""Slices at traced positions: dynamic_slice and dynamic_update_slice.

Starts are integer scalars clamped so the slice fits, as in JAX: a start below
0 reads from 0 and one past the end reads the last full window. With
`batch=k`, the first k axes of the operand are lanes and every start is an
array over those lanes (what vmap makes of a traced index).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ad_util import Zero, is_undefined
from .tangents import zeros
from ..ir import Type
from ..primitive import Primitive
from ..trace import bind1, type_of_value

dynamic_slice_p = Primitive("dynamic_slice")
dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _check_starts(x: Type, starts: Sequence[Type], batch: int, name: str):
    if len(starts) != x.ndim - batch:
        raise ValueError(f"{name}: {len(starts)} starts for {x.ndim - batch} axes of {x}")
    for s in starts:
        if s.dtype.kind != "i" or s.shape != x.shape[:batch]:
            raise TypeError(f"{name}: a start must be an integer of shape {x.shape[:batch]}, "
                            f"got {s}")


def clamp_starts(starts: Sequence[Any], dims: Sequence[int], sizes: Sequence[int]) -> list:
    return [np.clip(np.asarray(s), 0, n - k) for s, n, k in zip(starts, dims, sizes)]


@dynamic_slice_p.def_rule("shape")
def _ds_shape(x: Type, *starts: Type, sizes, batch) -> list[Type]:
    _check_starts(x, starts, batch, "dynamic_slice")
    if any(not 0 <= k <= n for k, n in zip(sizes, x.shape[batch:])):
        raise ValueError(f"dynamic_slice: sizes {sizes} do not fit in {x}")
    return [Type(x.dtype, x.shape[:batch] + tuple(sizes))]


def _lanes(batch_shape):
    return np.ndindex(*batch_shape) if batch_shape else [()]


@dynamic_slice_p.def_rule("impl")
def _ds_impl(x, *starts, sizes, batch):
    lanes = x.shape[:batch]
    out = np.empty(lanes + tuple(sizes), x.dtype)
    starts = clamp_starts(starts, x.shape[batch:], sizes)
    for lane in _lanes(lanes):
        at = [int(s[lane]) for s in starts]
        out[lane] = x[lane + tuple(slice(a, a + k) for a, k in zip(at, sizes))]
    return [out]


@dynamic_update_slice_p.def_rule("shape")
def _dus_shape(x: Type, upd: Type, *starts: Type, batch) -> list[Type]:
    _check_starts(x, starts, batch, "dynamic_update_slice")
    if upd.dtype != x.dtype or upd.ndim != x.ndim or upd.shape[:batch] != x.shape[:batch] or any(
        k > n for k, n in zip(upd.shape[batch:], x.shape[batch:])
    ):
        raise ValueError(f"dynamic_update_slice: cannot write {upd} into {x}")
    return [x]


@dynamic_update_slice_p.def_rule("impl")
def _dus_impl(x, upd, *starts, batch):
    out = x.copy()
    sizes = upd.shape[batch:]
    starts = clamp_starts(starts, x.shape[batch:], sizes)
    for lane in _lanes(x.shape[:batch]):
        at = [int(s[lane]) for s in starts]
        out[lane + tuple(slice(a, a + k) for a, k in zip(at, sizes))] = upd[lane]
    return [out]


def dynamic_slice(x: Any, starts: Sequence[Any], sizes: Sequence[int], batch: int = 0) -> Any:
    return bind1(dynamic_slice_p, x, *starts, sizes=tuple(sizes), batch=batch)


def dynamic_update_slice(x: Any, upd: Any, starts: Sequence[Any], batch: int = 0) -> Any:
    return bind1(dynamic_update_slice_p, x, upd, *starts, batch=batch)


# ------------------------------------------------------------- derivatives


@dynamic_slice_p.def_rule("jvp")
def _ds_jvp(primals, tangents, *, sizes, batch):
    x, *starts = primals
    ans = dynamic_slice(x, starts, sizes, batch)
    t = tangents[0]
    if isinstance(t, Zero):
        return [ans], [Zero(type_of_value(ans))]
    return [ans], [dynamic_slice(t, starts, sizes, batch)]


@dynamic_slice_p.def_rule("transpose")
def _ds_transpose(cts, x, *starts, sizes, batch):
    return [dynamic_update_slice(zeros(x.type), cts[0], starts, batch)] + [None] * len(starts)


@dynamic_update_slice_p.def_rule("jvp")
def _dus_jvp(primals, tangents, *, batch):
    x, upd, *starts = primals
    ans = dynamic_update_slice(x, upd, starts, batch)
    tx, tu = tangents[:2]
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return [ans], [Zero(type_of_value(ans))]
    tx = zeros(tx.type) if isinstance(tx, Zero) else tx
    tu = zeros(tu.type) if isinstance(tu, Zero) else tu
    return [ans], [dynamic_update_slice(tx, tu, starts, batch)]


@dynamic_update_slice_p.def_rule("transpose")
def _dus_transpose(cts, x, upd, *starts, batch):
    (ct,) = cts
    upd_type = upd.type if is_undefined(upd) else type_of_value(upd)
    ct_x = dynamic_update_slice(ct, zeros(upd_type), starts, batch) if is_undefined(x) else None
    ct_u = (dynamic_slice(ct, starts, upd_type.shape[batch:], batch)
            if is_undefined(upd) else None)
    return [ct_x, ct_u] + [None] * len(starts)


# ------------------------------------------------------------- batching


@dynamic_slice_p.def_rule("batch")
def _ds_batch(size, args, dims, *, sizes, batch):
    from .shape import materialize

    x, *starts = args
    if batch == 0 and all(d is None for d in dims[1:]):
        zero = np.zeros((), type_of_value(starts[0]).dtype) if starts else np.int64(0)
        return [dynamic_slice(x, [zero, *starts], (size, *sizes))], [0]
    args = [materialize(a, d, size) for a, d in zip(args, dims)]
    return [dynamic_slice(args[0], args[1:], sizes, batch + 1)], [0]


@dynamic_update_slice_p.def_rule("batch")
def _dus_batch(size, args, dims, *, batch):
    from .shape import materialize

    x, upd, *starts = args
    if batch == 0 and all(d is None for d in dims[2:]):
        x, upd = materialize(x, dims[0], size), materialize(upd, dims[1], size)
        zero = np.zeros((), type_of_value(starts[0]).dtype) if starts else np.int64(0)
        return [dynamic_update_slice(x, upd, [zero, *starts])], [0]
    args = [materialize(a, d, size) for a, d in zip(args, dims)]
    return [dynamic_update_slice(args[0], args[1], args[2:], batch + 1)], [0]
