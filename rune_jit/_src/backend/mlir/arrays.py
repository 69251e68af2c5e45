"""Array primitives on tensors: elementwise maps and index maps as `linalg.generic`,
views as `tensor` slices and reshapes, reductions as `linalg.reduce`, contractions as
`linalg.generic` with reduction loops (a plain matrix product as `linalg.matmul`); and
the helpers the other modules build tensors with (indexing.py: traced positions)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ...ir import Type
from ...ops import reduce, shape, sort
from ...ops.linalg import dot_general_p
from ...primitive import Primitive
from . import scalars
from .emit import Emitter, Value, rule, scalar_literal, scalar_type


def dims(n: int) -> str:
    return ", ".join(f"d{i}" for i in range(n))


def affine(n: int, results: Sequence[str]) -> str:
    return f"affine_map<({dims(n)}) -> ({', '.join(results)})>"


def empty(em: Emitter, t: Type) -> str:
    return em.op(f"tensor.empty() : {em.ty(t)}", "e")


def generic(em: Emitter, out: Type, ins: Sequence[tuple[Value, str]], body: Callable) -> str:
    """A `linalg.generic` of parallel loops making `out` into an empty tensor, reading each
    of `ins` through its affine map; `body(elements: [Value]) -> name` emits one element
    (the last of `elements` is the output's, unused)."""
    maps = ", ".join([m for _, m in ins] + [affine(out.ndim, [f"d{i}" for i in range(out.ndim)])])
    kinds = ", ".join(['"parallel"'] * out.ndim)
    init = empty(em, out)
    reads = (f"ins({commas(v.name for v, _ in ins)} : {commas(em.ty(v.type) for v, _ in ins)}) "
             if ins else "")
    text = (f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
            f"{reads}outs({init} : {em.ty(out)}) {{")
    [name] = em.ops(text, 1, "g")
    block(em, [Type(v.type.dtype, ()) for v, _ in ins] + [Type(out.dtype, ())],
          lambda xs: f"{body(xs)} : {scalar_type(out.dtype)}")
    em.close(f"}} -> {em.ty(out)}")
    return name


def zero_d(em: Emitter, x: Value) -> str:
    """The scalar `x` as a tensor of rank 0, written by a `linalg.generic` of no loops."""
    t, scalar = f"tensor<{scalar_type(x.type.dtype)}>", Type(x.type.dtype, ())
    init = em.op(f"tensor.empty() : {t}", "e")
    [name] = em.ops(f"linalg.generic {{indexing_maps = [{affine(0, [])}, {affine(0, [])}], "
                    f"iterator_types = []}} ins({x} : {scalar_type(x.type.dtype)}) "
                    f"outs({init} : {t}) {{", 1, "out")
    block(em, [scalar, scalar], lambda xs: f"{xs[0]} : {scalar_type(x.type.dtype)}")
    em.close(f"}} -> {t}")
    return name


def block(em: Emitter, types: Sequence[Type], body: Callable[[list[Value]], str]) -> None:
    """A linalg body: block arguments of `types`, then `linalg.yield body(arguments)`."""
    xs = [Value(em.fresh("a"), t) for t in types]
    em.line(f"^bb0({commas(f'{x.name}: {scalar_type(x.type.dtype)}' for x in xs)}):")
    with em.nested():
        em.line(f"linalg.yield {body(xs)}")


def generate(em: Emitter, out: Type, element: Callable[[list[str]], str]) -> str:
    """`out` whose element at indices `idx` (index values) is `element(idx)`: a generic
    reading its operands with `tensor.extract` (a 0-d `out` is the element itself)."""
    if not out.shape:
        return element([])

    def body(_):
        return element([em.op(f"linalg.index {i} : index", "ix") for i in range(out.ndim)])
    return generic(em, out, [], body)


def extract(em: Emitter, x: Value, idx: Sequence[str]) -> str:
    if not x.type.shape:
        return x.name
    return em.op(f"tensor.extract {x}[{', '.join(idx)}] : {em.ty(x.type)}")


def elementwise_map(em: Emitter, out: Type, args: Sequence[Value], element: Callable) -> str:
    """`element(scalars) -> name` applied to every element; 0-d operands are shared."""
    if not out.shape:
        return element(list(args))
    ident = affine(out.ndim, [f"d{i}" for i in range(out.ndim)])
    ins = [(a, ident if a.type.shape else affine(out.ndim, [])) for a in args]
    return generic(em, out, ins, lambda xs: element(xs[:-1]))


def to_index(em: Emitter, x: Value) -> str:
    """An integer scalar as an `index` (the type of MLIR's positions and counts)."""
    cast = "index_castui" if x.type.dtype.kind in "ub" else "index_cast"
    return em.op(f"arith.{cast} {x} : {scalar_type(x.type.dtype)} to index", "ix")


def from_index(em: Emitter, i: str, dtype: np.dtype) -> Value:
    t = Type(np.dtype(np.int64), ())
    v = Value(em.op(f"arith.index_cast {i} : index to i64"), t)
    return Value(scalars.convert(em, v, dtype), Type(np.dtype(dtype), ()))


def ix(em: Emitter, op: str, a: str, b: str) -> str:
    """Index arithmetic: `op` of two index values."""
    return em.op(f"arith.{op} {a}, {b} : index", "ix")


def all_true(em: Emitter, p: Value) -> str:
    """A bool scalar: whether every element of bool `p` is true."""
    if not p.type.shape:
        return p.name
    return reduce_to(em, p, Type(p.type.dtype, ()), tuple(range(p.type.ndim)), "andi", True)


def ix_cmp(em: Emitter, pred: str, a: str, b: str) -> str:
    return em.op(f"arith.cmpi {pred}, {a}, {b} : index")


def delinearize(em: Emitter, flat: str, shape: Sequence[int]) -> list[str]:
    """The indices of element `flat` (row-major) of an array of `shape`."""
    out = []
    for n in reversed(shape[1:]):
        out.append(ix(em, "remui", flat, em.index(n)))
        flat = ix(em, "divui", flat, em.index(n))
    return [flat] + out[::-1] if shape else []


def check(em: Emitter, ok: Value, message: str) -> None:
    """A run-time check: `cf.assert` (an error with `message` where it fails)."""
    em.stmt(f'cf.assert {all_true(em, ok)}, "{message}"')


# ------------------------------------------------------------- elementwise


def _elementwise(prim: Primitive) -> Callable:
    def emit(em, args, out_types, **params):
        return [elementwise_map(em, out_types[0], args, lambda xs: scalars.element(
            em, prim, xs, params))]
    return emit


for _p in Primitive.registry.values():
    if "elementwise" in _p.traits:
        rule(_p)(_elementwise(_p))


@rule(Primitive.registry["diag_solve"])
def _diag_solve(em, args, out_types):
    """b / d, where a zero on the diagonal fails as singular (not inf or NaN)."""
    d, b = args
    nonzero = elementwise_map(em, d.type.with_dtype(np.dtype(bool)), [d], lambda xs: scalars.compare(
        em, "ne", xs[0], em.const(0, d.type.dtype)))
    check(em, Value(nonzero, d.type.with_dtype(np.dtype(bool))), "rune_jit: singular matrix")
    return _elementwise(Primitive.registry["diag_solve"])(em, args, out_types)


# ------------------------------------------------------------- shapes


@rule(shape.broadcast_in_dim_p)
def _broadcast(em, args, out_types, *, shape, broadcast_dims):
    (x,), out = args, out_types[0]
    if x.name in em.known and out.shape:  # a constant: a dense one (IREE writes in place
        return [em.op(f"arith.constant dense<{scalar_literal(em.known[x.name], out.dtype)}> "
                      f": {em.ty(out)}", "k")]  # into a broadcast a loop reads: docs/mlir.md)
    if not x.type.shape:
        return [fill(em, out, x)] if out.shape else [x.name]
    results = [f"d{d}" if n == out.shape[d] else "0"
               for n, d in zip(x.type.shape, broadcast_dims)]
    return [generic(em, out, [(x, affine(out.ndim, results))], lambda xs: xs[0].name)]


@rule(shape.reshape_p)
def _reshape(em, args, out_types, *, shape):
    (x,), out = args, out_types[0]
    if x.type.shape == out.shape:
        return [x.name]
    if not out.shape:
        return [extract(em, x, [em.index(0)] * x.type.ndim)]
    if not x.type.shape:  # (a bool by a generic: IREE rejects a from_elements of an i1)
        return [fill(em, out, x) if out.dtype == np.bool_ else
                em.op(f"tensor.from_elements {x} : {em.ty(out)}")]
    flat = x
    if x.type.ndim > 1:
        t = x.type.with_shape((x.type.size,))
        flat = Value(em.op(f"tensor.collapse_shape {x} [[{dims(x.type.ndim).replace('d', '')}]]"
                           f" : {em.ty(x.type)} into {em.ty(t)}"), t)
    if out.ndim == 1:
        return [flat.name]
    sizes = ", ".join(map(str, out.shape))
    return [em.op(f"tensor.expand_shape {flat} [[{dims(out.ndim).replace('d', '')}]] "
                  f"output_shape [{sizes}] : {em.ty(flat.type)} into {em.ty(out)}")]


@rule(shape.transpose_p)
def _transpose(em, args, out_types, *, perm):
    (x,), out = args, out_types[0]
    return [em.op(f"linalg.transpose ins({x} : {em.ty(x.type)}) outs({empty(em, out)} : "
                  f"{em.ty(out)}) permutation = [{', '.join(map(str, perm))}]")]


def commas(xs) -> str:
    """`a, b, c`: operands, offsets, types."""
    return ", ".join(map(str, xs))


@rule(shape.slice_p)
def _slice(em, args, out_types, *, starts, limits, strides):
    (x,), out = args, out_types[0]
    if 0 in out.shape:  # MLIR rejects a slice at the end of an axis
        return [empty(em, out)]
    return [em.op(f"tensor.extract_slice {x}[{commas(starts)}] [{commas(out.shape)}] "
                  f"[{commas(strides)}] : {em.ty(x.type)} to {em.ty(out)}")]


@rule(shape.rev_p)
def _rev(em, args, out_types, *, axes):
    (x,), out = args, out_types[0]
    results = [f"{n - 1} - d{i}" if i in axes else f"d{i}" for i, n in enumerate(out.shape)]
    return [generic(em, out, [(x, affine(out.ndim, results))], lambda xs: xs[0].name)]


@rule(shape.pad_p)
def _pad(em, args, out_types, *, shape, starts, strides):
    (x,), out = args, out_types[0]
    zero = zeros(em, out)
    if 0 in x.type.shape:
        return [zero]
    if not x.type.shape:
        return [em.op(f"tensor.insert {x} into {zero}[{commas(starts)}] : {em.ty(out)}")]
    return [em.op(f"tensor.insert_slice {x} into {zero}[{commas(starts)}] "
                  f"[{commas(x.type.shape)}] [{commas(strides)}] : {em.ty(x.type)} into "
                  f"{em.ty(out)}")]


def zeros(em: Emitter, t: Type) -> str:
    """A constant of zeros of type `t` (a scalar zero for a 0-d `t`)."""
    if not t.shape:
        return em.const(0, t.dtype).name
    return em.op(f"arith.constant dense<{scalar_literal(0, t.dtype)}> : {em.ty(t)}", "z")


@rule(shape.concatenate_p)
def _concatenate(em, args, out_types, *, axis):
    out = out_types[0]
    acc, at = empty(em, out), 0
    for x in (x for x in args if 0 not in x.type.shape):
        offsets = [at if i == axis else 0 for i in range(out.ndim)]
        acc = em.op(f"tensor.insert_slice {x} into {acc}[{commas(offsets)}] "
                    f"[{commas(x.type.shape)}] [{commas([1] * out.ndim)}] : {em.ty(x.type)} "
                    f"into {em.ty(out)}")
        at += x.type.shape[axis]
    return [acc]


@rule(shape.iota_p)
def _iota(em, args, out_types, *, shape, axis, dtype):
    return [generate(em, out_types[0], lambda idx: from_index(em, idx[axis], dtype).name)]


# ------------------------------------------------------------- reductions

REDUCE = {"reduce_sum": ("add", 0), "reduce_prod": ("mul", 1), "reduce_max": ("max", -np.inf),
          "reduce_min": ("min", np.inf)}


def identity(op: str, dtype: np.dtype, start):
    """The first value of a fold of `op` over `dtype` (an extremum's is the dtype's end)."""
    if op in ("max", "min") and dtype.kind in "iub":
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        if info is None:
            return op == "min"
        return info.min if op == "max" else info.max
    return start


def reduce_to(em: Emitter, x: Value, out: Type, axes: Sequence[int], row: str, start) -> str:
    """`x` folded over `axes` by the scalar row named `row`, from `start`."""
    dt = x.type.dtype
    c = em.const(start, dt)
    init = generic_init(em, out, c)
    ot = out_ty(em, out)
    [r] = em.ops(f"linalg.reduce ins({x} : {em.ty(x.type)}) outs({init} : {ot}) "
                 f"dimensions = [{commas(sorted(axes))}]", 1, "red")
    a, b = em.fresh("a"), em.fresh("o")
    em.line(f"  ({a}: {scalar_type(dt)}, {b}: {scalar_type(dt)}) {{")
    with em.nested(), em.nested():
        s = Value("", Type(dt, ()))
        y = (scalars.ROWS[row](em, s._replace(name=b), s._replace(name=a)) if row in scalars.ROWS
             else em.op(f"arith.{row} {b}, {a} : {scalar_type(dt)}"))
        em.line(f"linalg.yield {y} : {scalar_type(dt)}")
    em.close("  }")
    return r if out.shape else em.op(f"tensor.extract {r}[] : {ot}")


def _reduction(name: str) -> Callable:
    row, start = REDUCE[name]

    def emit(em, args, out_types, *, axes):
        (x,), out = args, out_types[0]
        if not axes:
            return [x.name]
        return [reduce_to(em, x, out, axes, row, identity(row, x.type.dtype, start))]
    return emit


for _n in REDUCE:
    rule(reduce.P[_n])(_reduction(_n))


def folded(em: Emitter, ins: Sequence[tuple[Value, str]], outs: Sequence[Type],
           inits: Sequence[str], iterators: Sequence[str], out_map: str, body: Callable,
           hint: str) -> list[str]:
    """A `linalg.generic` with reduction loops folding `ins` into `outs` (each from its
    init, read and written through `out_map`): `body(ins' and outs' elements) -> the
    yield's operands and types`; a 0-d output extracted as a scalar."""
    maps = commas([m for _, m in ins] + [out_map] * len(outs))
    kinds = commas(f'"{k}"' for k in iterators)
    types = [out_ty(em, t) for t in outs]
    names = em.ops(f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
                   f"ins({commas(v.name for v, _ in ins)} : {commas(em.ty(v.type) for v, _ in ins)}"
                   f") outs({commas(inits)} : {commas(types)}) {{", len(outs), hint)
    block(em, [Type(v.type.dtype, ()) for v, _ in ins] + [Type(t.dtype, ()) for t in outs], body)
    em.close(f"}} -> ({commas(types)})" if len(outs) > 1 else f"}} -> {types[0]}")
    return [n if t.shape else em.op(f"tensor.extract {n}[] : {ty}")
            for n, t, ty in zip(names, outs, types)]


def _arg(larger: bool) -> Callable:
    """argmax / argmin: the first extremum along the axis, the first NaN if there is one."""
    def emit(em, args, out_types, *, axis, index_dtype):
        (x,), out = args, out_types[0]
        dt, n = x.type.dtype, x.type.ndim
        start = identity("max" if larger else "min", dt, -np.inf if larger else np.inf)
        outs = [out.with_dtype(dt), out]
        inits = [generic_init(em, outs[0], em.const(start, dt)),
                 generic_init(em, out, em.const(0, out.dtype))]

        def body(xs):
            v, best, i = xs
            take = scalars.compare(em, "gt" if larger else "lt", v, best)
            if dt.kind == "f":  # the first NaN wins
                fresh = em.op(f"arith.andi {scalars.ROWS['isnan'](em, v)}, "
                              f"{scalars.compare(em, 'eq', best, best)} : i1")
                take = em.op(f"arith.ori {take}, {fresh} : i1")
            here = from_index(em, em.op(f"linalg.index {axis} : index", "ix"), out.dtype)
            return (f"{scalars.select(em, take, v, best)}, {scalars.select(em, take, here, i)}"
                    f" : {scalar_type(dt)}, {scalar_type(out.dtype)}")
        kept = affine(n, [f"d{i}" for i in range(n) if i != axis])
        return folded(em, [(x, affine(n, [f"d{i}" for i in range(n)]))], outs, inits,
                      ["reduction" if i == axis else "parallel" for i in range(n)], kept,
                      body, "arg")[1:]
    return emit


def out_ty(em: Emitter, t: Type) -> str:
    """A reduction's output type: a 0-d result is a tensor of rank 0 until extracted."""
    return em.ty(t) if t.shape else f"tensor<{scalar_type(t.dtype)}>"


def generic_init(em: Emitter, t: Type, c: Value) -> str:
    """The initial value of a reduction's output: `c` everywhere."""
    return fill(em, t, c) if t.shape else em.op(f"tensor.from_elements {c} : {out_ty(em, t)}")


def fill(em: Emitter, t: Type, c: Value) -> str:
    """A tensor of type `t` holding `c` everywhere: a generic broadcasting it (IREE 3.13
    has no lowering of `tensor.splat`, and miscompiles a sum of a `linalg.fill`ed carry of
    an `scf.for`: docs/mlir.md)."""
    return generic(em, t, [(c, affine(t.ndim, []))], lambda xs: xs[0].name)


rule(reduce.argmax_p)(_arg(True))
rule(reduce.argmin_p)(_arg(False))


@rule(sort.cumulative_p)
def _cumulative(em, args, out_types, *, axis, op, reverse):
    """Element i along the axis folds the elements up to i in order (from the end when
    `reverse`), as NumPy's accumulate does."""
    (x,), out = args, out_types[0]
    n = x.type.shape[axis]
    row = {"sum": "add", "prod": "mul"}.get(op, op)

    def element(idx):
        def at(k):  # the index along the axis of the k-th element folded
            return ix(em, "subi", em.index(n - 1), k) if reverse else k
        last = ix(em, "subi", em.index(n - 1), idx[axis]) if reverse else idx[axis]
        first = extract(em, x, idx[:axis] + [at(em.index(0))] + idx[axis + 1:])

        def fold(k, acc):
            e = Value(extract(em, x, idx[:axis] + [at(ix(em, "addi", k, em.index(1)))]
                              + idx[axis + 1:]), acc[0].type)
            return [scalars.ROWS[row](em, acc[0], e)]
        start = Value(first, Type(x.type.dtype, ()))
        return em.counted(last, [start], fold, "cum")[0].name  # elements 1..last
    return [generate(em, out, element)]


# ------------------------------------------------------------- contractions


@rule(dot_general_p)
def _dot_general(em, args, out_types, *, contract, batch):
    """A generic of the batch, free and contracted loops (in that order): out[b, i, j] +=
    a[b, i, k] * b[b, k, j]; a plain matrix product is `linalg.matmul`."""
    a, b = args
    out = out_types[0]
    if (a.type.ndim, b.type.ndim) == (2, 2) and tuple(map(tuple, contract)) == ((1,), (0,)) \
            and not batch[0] and a.type.dtype.kind == "f" and a.type.dtype == b.type.dtype:
        init = fill(em, out, em.const(0, out.dtype))
        return [em.op(f"linalg.matmul ins({a}, {b} : {em.ty(a.type)}, {em.ty(b.type)}) "
                      f"outs({init} : {em.ty(out)}) -> {em.ty(out)}")]
    nout, nc = out.ndim, len(contract[0])
    loops = nout + nc

    def operand_map(v: Value, cs, bs, lhs: bool) -> str:
        # (by position, not `v is a`: in x @ x.T both operands are the same value)
        free = [i for i in range(v.type.ndim) if i not in cs and i not in bs]
        first = len(batch[0]) + (0 if lhs else a.type.ndim - len(contract[0]) - len(batch[0]))
        res = []
        for axis in range(v.type.ndim):
            if axis in bs:
                res.append(f"d{list(bs).index(axis)}")
            elif axis in cs:
                res.append(f"d{nout + list(cs).index(axis)}")
            else:
                res.append(f"d{first + free.index(axis)}")
        return affine(loops, res)

    init = generic_init(em, out, em.const(0, out.dtype))
    ins = [(a, operand_map(a, contract[0], batch[0], True)),
           (b, operand_map(b, contract[1], batch[1], False))]

    def body(xs):
        p = Value(scalars.ROWS["mul"](em, xs[0], xs[1]), xs[2].type)
        return f"{scalars.ROWS['add'](em, xs[2], p)} : {scalar_type(out.dtype)}"
    return folded(em, ins, [out], [init], ["parallel"] * nout + ["reduction"] * nc,
                  affine(loops, [f"d{i}" for i in range(nout)]), body, "dot")
