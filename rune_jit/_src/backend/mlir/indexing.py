"""Reads and writes at traced positions: dynamic slices (`tensor.extract_slice` at
clamped offsets), gathers (a generic whose body reads with `tensor.extract`), scatters
(`scf.for` over the updates), index checks (`cf.assert`), and sorts (ranks counted)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...ir import Type
from ...ops import gather as gather_ops
from ...ops import index, sort
from . import scalars
from .arrays import (commas, check, delinearize, elementwise_map, empty, extract, from_index,
                     generate, ix, ix_cmp, to_index)
from .emit import Emitter, Value, rule, scalar_type


def clamped(em: Emitter, start: Value, size: int, n: int) -> str:
    """A slice's start clamped so that `size` elements from it fit in `n`, as an index."""
    i = to_index(em, start)
    lo, hi = em.index(0), em.index(max(n - size, 0))
    return ix(em, "minsi", ix(em, "maxsi", i, lo), hi)


@rule(index.dynamic_slice_p)
def _dynamic_slice(em, args, out_types, *, sizes, batch):
    x, *starts = args
    out, body = out_types[0], x.type.shape[batch:]
    if 0 in out.shape:
        return [empty(em, out)]
    if batch == 0:
        at = [clamped(em, s, k, n) for s, k, n in zip(starts, sizes, body)]
        return [em.op(f"tensor.extract_slice {x}[{commas(at)}] [{commas(sizes)}] "
                      f"[{commas([1] * len(sizes))}] : {em.ty(x.type)} to {em.ty(out)}")]

    def element(idx):
        lane = idx[:batch]
        at = [clamped(em, Value(extract(em, s, lane), s.type.with_shape(())), k, n)
              for s, k, n in zip(starts, sizes, body)]
        return extract(em, x, lane + [ix(em, "addi", a, i) for a, i in zip(at, idx[batch:])])
    return [generate(em, out, element)]


@rule(index.dynamic_update_slice_p)
def _dynamic_update_slice(em, args, out_types, *, batch):
    x, upd, *starts = args
    sizes, body = upd.type.shape[batch:], x.type.shape[batch:]
    if 0 in upd.type.shape:
        return [x.name]
    if batch == 0:
        at = [clamped(em, s, k, n) for s, k, n in zip(starts, sizes, body)]
        if not x.type.shape:
            return [upd.name]
        return [em.op(f"tensor.insert_slice {upd} into {x}[{commas(at)}] [{commas(sizes)}] "
                      f"[{commas([1] * len(sizes))}] : {em.ty(upd.type)} into {em.ty(x.type)}")]

    def element(idx):
        lane, inside, rel = idx[:batch], None, []
        for s, k, n, i in zip(starts, sizes, body, idx[batch:]):
            a = clamped(em, Value(extract(em, s, lane), s.type.with_shape(())), k, n)
            r = ix(em, "subi", i, a)
            ok = em.op(f"arith.andi {ix_cmp(em, 'sge', r, em.index(0))}, "
                       f"{ix_cmp(em, 'slt', r, em.index(k))} : i1")
            inside = ok if inside is None else em.op(f"arith.andi {inside}, {ok} : i1")
            rel.append(ix(em, "minsi", ix(em, "maxsi", r, em.index(0)), em.index(max(k - 1, 0))))
        new = extract(em, upd, lane + rel)
        return em.op(f"arith.select {inside}, {new}, {extract(em, x, idx)} : "
                     f"{scalar_type(x.type.dtype)}")
    return [generate(em, out_types[0], element)]


def position(em: Emitter, i: Value, n: int, mode: str) -> tuple[str, str | None]:
    """(an index in range, as `mode` makes it; whether it was in range, for "fill" and
    "drop"), from one entry of an index array (gather.positions' meaning)."""
    k = to_index(em, i)
    zero, size = em.index(0), em.index(n)
    if mode == "clip":
        return ix(em, "minsi", ix(em, "maxsi", k, zero), em.index(max(n - 1, 0))), None
    if mode == "wrap":
        r = ix(em, "remsi", k, size)
        neg = ix_cmp(em, "slt", r, zero)
        return em.op(f"arith.select {neg}, {ix(em, 'addi', r, size)}, {r} : index", "ix"), None
    wrapped = em.op(f"arith.select {ix_cmp(em, 'slt', k, zero)}, {ix(em, 'addi', k, size)}, "
                    f"{k} : index", "ix")
    if mode == "checked":
        return wrapped, None
    inside = em.op(f"arith.andi {ix_cmp(em, 'sge', wrapped, zero)}, "
                   f"{ix_cmp(em, 'slt', wrapped, size)} : i1")
    return em.op(f"arith.select {inside}, {wrapped}, {zero} : index", "ix"), inside


def positions(em: Emitter, indices: Sequence[Value], b: list[str], sizes, mode: str):
    """The positions that entry `b` of the index arrays names, and whether all are in range."""
    pos, ok = [], None
    for i, n in zip(indices, sizes):
        p, inside = position(em, Value(extract(em, i, b), i.type.with_shape(())), n, mode)
        pos.append(p)
        if inside is not None:
            ok = inside if ok is None else em.op(f"arith.andi {ok}, {inside} : i1")
    return pos, ok


@rule(gather_ops.gather_p)
def _gather(em, args, out_types, *, mode, fill_value):
    x, *indices = args
    k, nb = len(indices), indices[0].type.ndim

    def element(idx):
        pos, ok = positions(em, indices, idx[:nb], x.type.shape[:k], mode)
        got = extract(em, x, pos + idx[nb:])
        if ok is None:
            return got
        fill = em.const(fill_value, x.type.dtype)
        return em.op(f"arith.select {ok}, {got}, {fill} : {scalar_type(x.type.dtype)}")
    return [generate(em, out_types[0], element)]


@rule(gather_ops.scatter_p)
def _scatter(em, args, out_types, *, op, mode):
    """Each update in row-major order (the last of repeated positions wins a "set")."""
    x, *indices, u = args
    k, nb = len(indices), indices[0].type.ndim

    def update(flat: str, acc: list[Value]) -> list[str]:
        idx = delinearize(em, flat, u.type.shape)
        pos, ok = positions(em, indices, idx[:nb], x.type.shape[:k], mode)
        at = pos + idx[nb:]
        new = Value(extract(em, u, idx), Type(x.type.dtype, ()))
        old = Value(extract(em, acc[0], at), new.type)
        if op != "set":
            new = Value(scalars.ROWS[op](em, old, new), new.type)
        if ok is not None:
            new = Value(scalars.select(em, ok, new, old), new.type)
        return [em.op(f"tensor.insert {new} into {acc[0]}[{commas(at)}] : {em.ty(x.type)}")]
    return [em.counted(em.index(u.type.size), [x], update, "scatter")[0].name]


@rule(gather_ops.index_check_p)
def _index_check(em, args, out_types, *, size, axis):
    """Every index in [-size, size), else an IndexError's message."""
    (i,) = args
    bt = i.type.with_dtype(np.dtype(bool))

    def inside(xs):
        lo = scalars.compare(em, "ge", xs[0], em.const(-size, i.type.dtype))
        hi = scalars.compare(em, "lt", xs[0], em.const(size, i.type.dtype))
        return em.op(f"arith.andi {lo}, {hi} : i1")
    ok = Value(elementwise_map(em, bt, [i], inside), bt)
    check(em, ok, f"rune_jit: an index is out of bounds for axis {axis} with size {size}")
    return [i.name]


# ------------------------------------------------------------- sorting


def _before(em: Emitter, a: Value, b: Value, ka: str, kb: str, descending: bool) -> str:
    """Whether key a (at kb's left when ka < kb) comes before key b: stable, NaNs last
    (first when `descending`, which reverses the order of the keys, not of ties)."""
    if descending:
        a, b = b, a
    nan_a = scalars.ROWS["isnan"](em, a) if a.type.dtype.kind == "f" else None
    less = scalars.compare(em, "lt", a, b)
    same = scalars.compare(em, "eq", a, b)
    if nan_a is not None:
        nan_b = scalars.ROWS["isnan"](em, b)
        not_a = em.op(f"arith.xori {nan_a}, {em.const(True, np.dtype(bool))} : i1")
        less = em.op(f"arith.ori {less}, {em.op(f'arith.andi {nan_b}, {not_a} : i1')} : i1")
        same = em.op(f"arith.ori {same}, {em.op(f'arith.andi {nan_a}, {nan_b} : i1')} : i1")
    tie = em.op(f"arith.andi {same}, {ix_cmp(em, 'slt', ka, kb)} : i1")
    return em.op(f"arith.ori {less}, {tie} : i1")


@rule(sort.sort_p)
def _sort(em, args, out_types, *, descending):
    """perm[..., i] is the j whose rank (the keys before it) is i; values read x there.
    (Cubic in the row's length: rank counting keeps every write out of loops.)"""
    (x,), (values_t, perm_t) = args, out_types
    n = x.type.shape[-1]
    count_t = Type(np.dtype(np.int64), ())

    def rank(lead: list[str], j: str) -> str:
        xj = Value(extract(em, x, lead + [j]), Type(x.type.dtype, ()))

        def count(k, acc):
            xk = Value(extract(em, x, lead + [k]), xj.type)
            one = em.op(f"arith.extui {_before(em, xk, xj, k, j, descending)} : i1 to i64")
            return [em.op(f"arith.addi {acc[0]}, {one} : i64")]
        return em.counted(em.index(n), [em.const(0, np.int64)], count, "rank")[0].name

    def perm(idx):
        def find(j, acc):
            here = em.op(f"arith.cmpi eq, {rank(idx[:-1], j)}, "
                         f"{from_index(em, idx[-1], np.int64)} : i64")
            return [em.op(f"arith.select {here}, {from_index(em, j, np.int64)}, {acc[0]} : i64")]
        return em.counted(em.index(n), [em.const(0, np.int64)], find, "find")[0].name
    p = Value(generate(em, perm_t, perm), perm_t)
    values = generate(em, values_t, lambda idx: extract(
        em, x, idx[:-1] + [to_index(em, Value(extract(em, p, idx), count_t))]))
    return [values, p.name]
