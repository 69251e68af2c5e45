"""scan: a loop over the rows of its inputs that stacks what each step returns.

    def scan(step, init, xs, length, reverse):      # the meaning, as a Python loop
        carry, ys = init, [None] * length
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, ys[i] = step(carry, [x[i] for x in xs])
        return carry, stack(ys)

Closed form: operands (captures..., [counts], init..., xs...); the step region
takes (captures..., [active], carries..., rows...) and returns (carries...,
ys...). A *counted* scan (reverse mode of a vmapped `iterate`) has an operand
`counts` (an int per lane): it runs max(counts) steps, not `length`, and its
step receives `active = t < counts`, with which the step holds the carries of
lanes that are done; its ys rows beyond max(counts) are zero.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import tree
from ..ad_util import UndefinedPrimal, Zero, add_tangents, instantiate, zeros
from ..interpret import eval_region
from ..ir import Eqn, Region, Type
from ..primitive import Primitive
from ..trace import bind, trace_closed, type_of_value, using
from . import loops
from .shape import moveaxis

scan_p = Primitive("scan", traits=frozenset({"loop"}))


class Layout:
    """Where each group sits in a scan's closed operands and step params."""

    def __init__(self, n_operands: int, *, num_carry: int, counted: bool, num_captures: int):
        self.k, self.a, self.nc = num_captures, int(counted), num_carry
        self.nx = n_operands - self.k - self.a - num_carry

    def operands(self, args: Sequence[Any]):
        k, a, nc = self.k, self.a, self.nc
        return (list(args[:k]), args[k] if a else None, list(args[k + a:k + a + nc]),
                list(args[k + a + nc:]))


def _layout(args, params) -> Layout:
    return Layout(len(args), num_carry=params["num_carry"], counted=params["counted"],
                  num_captures=params["num_captures"])


# ------------------------------------------------------------- binding


def scan_flat(step_fn: Callable, init: list, xs: list, *, length: int, reverse: bool = False,
              counts: Any = None) -> list:
    """Bind a scan whose step is the Python function `step_fn(carry, rows)` (or
    `step_fn(active, carry, rows)` when `counts` is given), returning (carry, ys)
    lists; -> carry + ys as one list."""
    carry_types = [type_of_value(c) for c in init]
    row_types = [type_of_value(x).with_shape(type_of_value(x).shape[1:]) for x in xs]
    nc = len(init)
    lead = [] if counts is None else [type_of_value(counts).with_dtype(np.dtype(bool))]

    def flat(*params):
        act, rest = (params[0], params[1:]) if lead else (None, params)
        carry, rows = list(rest[:nc]), list(rest[nc:])
        out_c, ys = step_fn(act, carry, rows) if lead else step_fn(carry, rows)
        return list(out_c) + list(ys)

    region, caps = trace_closed(flat, lead + carry_types + row_types)
    operands = [*caps, *([counts] if lead else []), *init, *xs]
    return bind(scan_p, *operands, step=region, num_carry=nc, length=length, reverse=reverse,
                counted=bool(lead), num_captures=len(caps))


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`; -> (carry, ys)."""
    from ..api import as_value, flatten_args, leaf_type

    init_leaves, init_tree, _ = flatten_args(init, "init")
    xs_leaves, xs_tree, xs_paths = flatten_args(xs, "xs")
    n = _scan_length(xs_leaves, xs_paths, length)
    init_types = [leaf_type(x)[0] for x in init_leaves]
    weak = [leaf_type(x)[1] for x in init_leaves]
    init_vals = [as_value(x) for x in init_leaves]
    y_tree: list = []

    def step(carry, rows):
        x = tree.unflatten(xs_tree, rows) if xs is not None else None
        out = f(tree.unflatten(init_tree, carry), x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("scan: f must return a pair (carry, y)")
        c_leaves, c_tree, _ = flatten_args(out[0], "carry")
        y_leaves, yt, _ = flatten_args(out[1], "y")
        y_tree[:] = [c_tree, yt, [leaf_type(c)[0] for c in c_leaves]]
        return [as_value(c) for c in c_leaves], [as_value(y) for y in y_leaves]

    # trace once to learn the carry the step returns; a weak init takes its dtype
    from ..trace import trace_flat

    row_types = [leaf_type(x)[0].with_shape(leaf_type(x)[0].shape[1:]) for x in xs_leaves]
    trace_flat(lambda *p: sum(step(list(p[:len(init_types)]), list(p[len(init_types):])), []),
               init_types + row_types)
    out_types = y_tree[2]
    if loops.promotable(init_types, weak, out_types):
        init_vals = [np.asarray(v, t.dtype) for v, t in zip(init_vals, out_types)]
        init_types = out_types
    loops.check_carry("scan", init_tree, init_types, y_tree[0], out_types)
    outs = scan_flat(step, init_vals, [as_value(x) for x in xs_leaves], length=n,
                     reverse=reverse)
    nc = len(init_leaves)
    return tree.unflatten(init_tree, outs[:nc]), tree.unflatten(y_tree[1], outs[nc:])


def _scan_length(xs: list, paths: list[str], length: int | None) -> int:
    from ..api import leaf_type

    shapes = [leaf_type(x)[0].shape for x in xs]
    for s, p in zip(shapes, paths):
        if not s:
            raise ValueError(f"scan: {p} is a scalar; every leaf of xs needs a leading axis "
                             "to scan over")
    sizes = {p: s[0] for s, p in zip(shapes, paths)}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{p} has {n}" for p, n in sizes.items())
        raise ValueError(f"scan: the leaves of xs have different leading sizes: {shown}")
    if length is not None:
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"scan: length must be a non-negative int, got {length!r}")
        if sizes and next(iter(sizes.values())) != length:
            raise ValueError(f"scan: length = {length} but xs has leading size "
                             f"{next(iter(sizes.values()))}")
        return int(length)
    if not sizes:
        raise ValueError("scan: give xs or length")
    return next(iter(sizes.values()))


# ------------------------------------------------------------- meaning


@scan_p.def_rule("shape")
def _scan_shape(*types: Type, step, num_carry, length, reverse, counted, num_captures):
    lay = Layout(len(types), num_carry=num_carry, counted=counted, num_captures=num_captures)
    caps, counts, init, xs = lay.operands(types)
    if any(x.shape[:1] != (length,) for x in xs):
        raise ValueError(f"scan: xs must have leading size {length}")
    active = [counts.with_dtype(np.dtype(bool))] if counted else []
    expected = caps + active + init + [x.with_shape(x.shape[1:]) for x in xs]
    if step.in_types != expected:
        raise TypeError("scan: the step's params do not match the operands")
    if step.out_types[:num_carry] != init:
        raise TypeError("scan: the step returns carries of other types than init")
    return init + [t.with_shape((length,) + t.shape) for t in step.out_types[num_carry:]]


@scan_p.def_rule("impl")
def _scan_impl(*args, step, num_carry, length, reverse, counted, num_captures):
    lay = Layout(len(args), num_carry=num_carry, counted=counted, num_captures=num_captures)
    caps, counts, carry, xs = lay.operands(args)
    ys = [np.zeros((length,) + t.shape, t.dtype) for t in step.out_types[num_carry:]]
    trips = length if not counted else min(length, int(counts.max(initial=0)))
    for t in (reversed(range(trips)) if reverse else range(trips)):
        active = [np.asarray(t < counts)] if counted else []
        out = eval_region(step, caps + active + carry + [x[t] for x in xs])
        carry = out[:num_carry]
        for buf, y in zip(ys, out[num_carry:]):
            buf[t] = y
    return carry + ys


# ------------------------------------------------------------- jvp


@scan_p.def_rule("jvp")
def _scan_jvp(primals, tangents, **params):
    from ..passes.jvp import jvp_region

    lay = _layout(primals, params)
    step, nc = params["step"], lay.nc
    caps, counts, init, xs = lay.operands(primals)
    tcaps, _, tinit, txs = lay.operands(tangents)
    nz = lambda ts: [not isinstance(t, Zero) for t in ts]  # noqa: E731
    ny = len(step.outputs) - nc
    act = [False] * lay.a

    def carry_nz(mask):
        return jvp_region(step, nz(tcaps) + act + mask + nz(txs))[1][:nc]

    nz_carry = loops.fixpoint(nz(tinit), carry_nz)
    jstep, out_nz = jvp_region(step, nz(tcaps) + act + nz_carry + nz(txs),
                               nz_carry + [False] * ny)
    live_tcaps = loops.pick(tcaps, nz(tcaps))
    live_txs = loops.pick(txs, nz(txs))
    n_tc = sum(nz_carry)

    def step_fn(*a):
        active, carry, rows = (a if lay.a else (None, *a))
        c, tc = carry[:nc], carry[nc:]
        x, tx = rows[:lay.nx], rows[lay.nx:]
        outs = eval_region(jstep, caps + ([active] if lay.a else []) + c + x + live_tcaps
                           + tc + tx)
        return (outs[:nc] + outs[nc + ny:nc + ny + n_tc],
                outs[nc:nc + ny] + outs[nc + ny + n_tc:])

    tinit_live = [instantiate(t) for t, m in zip(tinit, nz_carry) if m]
    outs = scan_flat(step_fn, init + tinit_live, xs + live_txs, length=params["length"],
                     reverse=params["reverse"], counts=counts)
    carry, tcarry = outs[:nc], outs[nc:nc + n_tc]
    ys, tys = outs[nc + n_tc:nc + n_tc + ny], outs[nc + n_tc + ny:]
    out_types = _scan_shape(*[type_of_value(v) for v in primals], **params)
    tout = loops.merge(nz_carry + out_nz[nc:], tcarry + tys,
                       [Zero(t) for t in out_types])
    return carry + ys, tout


# ------------------------------------------------------------- vmap


@scan_p.def_rule("batch")
def _scan_batch(size, args, dims, **params):
    from ..passes.vmap import batch_region, materialize

    lay = _layout(args, params)
    step, nc = params["step"], lay.nc
    caps, counts, init, xs = lay.operands(args)
    cdims, kdim, idims, xdims = lay.operands(dims)
    ny = len(step.outputs) - nc
    xs = [moveaxis(x, 0, 1) if d is not None else x for x, d in zip(xs, xdims)]
    to_dim = lambda mask: [0 if m else None for m in mask]  # noqa: E731
    if lay.a:  # lanes must lead every carry and y: everything becomes batched
        counts = materialize(counts, kdim, size)
        force_c, force_y = [True] * nc, [True] * ny
    else:
        force_c = loops.fixpoint([d is not None for d in idims], lambda m: [
            d is not None for d in batch_region(step, size, cdims + to_dim(m) + xdims,
                                                m + [False] * ny)[1][:nc]])
        force_y = [False] * ny
    act_dims = [0] if lay.a else []
    bstep, odims = batch_region(step, size, cdims + act_dims + to_dim(force_c) + xdims,
                                force_c + force_y)

    def step_fn(*a):
        active, carry, rows = (a if lay.a else (None, *a))
        outs = eval_region(bstep, caps + ([active] if lay.a else []) + carry + rows)
        return outs[:nc], outs[nc:]

    init = [materialize(c, d, size) if f else c for c, d, f in zip(init, idims, force_c)]
    outs = scan_flat(step_fn, init, xs, length=params["length"], reverse=params["reverse"],
                     counts=counts)
    ys = [moveaxis(y, 1, 0) if d is not None else y for y, d in zip(outs[nc:], odims[nc:])]
    return outs[:nc] + ys, to_dim(force_c) + [0 if d is not None else None for d in odims[nc:]]


# ------------------------------------------------------------- reverse mode


@scan_p.def_rule("partial_eval")
def _scan_partial_eval(pe, unknowns, *args, **params):
    lay = _layout(args, params)
    caps, counts, init, xs = lay.operands(args)
    ucaps, ucount, uinit, uxs = lay.operands(unknowns)
    if ucount:
        return pe.default_rule(scan_p, unknowns, args, params)
    split = loops.split_loop(params["step"], lay.k, lay.a, lay.nc, ucaps, uinit, uxs)
    kcaps, kinit, kxs = (loops.pick(v, m, False) for v, m in
                         ((caps, ucaps), (init, split.unk_carry), (xs, uxs)))
    n_kc = len(kinit)
    with using(pe.known):
        hoisted = eval_region(split.hoisted, kcaps)
        intensive, invariants = hoisted[:split.num_intensive], hoisted[split.num_intensive:]

        def known_step(*a):
            active, carry, rows = (a if lay.a else (None, *a))
            outs = eval_region(split.known_step, invariants + ([active] if lay.a else [])
                               + carry + rows)
            return outs[:n_kc], outs[n_kc:]

        k_outs = scan_flat(known_step, kinit, kxs, length=params["length"],
                           reverse=params["reverse"], counts=counts)
    k_carry, k_rest = k_outs[:n_kc], k_outs[n_kc:]
    k_ys, tapes = k_rest[:len(k_rest) - split.num_extensive], k_rest[len(
        k_rest) - split.num_extensive:]
    u_outs = _unknown_loop(pe, split, lay, params, kcaps, intensive, caps, ucaps, counts,
                           init, xs, uxs, tapes)
    n_uc = sum(split.unk_carry)
    carry = loops.merge(split.unk_carry, u_outs[:n_uc], k_carry)
    return carry + loops.merge(split.unk_ys, u_outs[n_uc:], k_ys)


def _unknown_loop(pe, split, lay, params, kcaps, intensive, caps, ucaps, counts, init, xs,
                  uxs, tapes) -> list:
    u_caps = loops.pick(caps, ucaps)
    u_init = [instantiate(v) for v in loops.pick(init, split.unk_carry)]
    fwd = loops.forwarded_rows(split, loops.pick(xs, uxs, False))
    u_rows = loops.pick(xs, uxs)
    n_res_rows = len(fwd) + len(tapes)
    n_uc = len(u_init)
    with using(pe.unknown):
        def unknown_step(*a):
            active, carry, rows = (a if lay.a else (None, *a))
            res = loops.residual_args(split, kcaps, intensive, active, rows[:n_res_rows])
            outs = eval_region(split.unknown_step, res + u_caps + ([active] if lay.a else [])
                               + carry + rows[n_res_rows:])
            return outs[:n_uc], outs[n_uc:]

        return scan_flat(unknown_step, u_init, fwd + tapes + u_rows, length=params["length"],
                         reverse=params["reverse"], counts=counts)


@scan_p.def_rule("transpose")
def _scan_transpose(cts, *args, **params):
    from ..passes.transpose import backward_pass

    lay = _layout(args, params)
    step, nc = params["step"], lay.nc
    caps, counts, init, xs = lay.operands(args)
    # Every carry of a linear scan is linear; one that is not an UndefinedPrimal is an
    # instantiated zero tangent, whose cotangent nobody needs.
    lin_init = [isinstance(c, UndefinedPrimal) for c in init]
    lin_caps = [isinstance(c, UndefinedPrimal) for c in caps]
    lin_xs = [isinstance(x, UndefinedPrimal) for x in xs]
    res_caps, res_xs = loops.pick(caps, lin_caps, False), loops.pick(xs, lin_xs, False)
    ct_carry = [instantiate(c) for c in cts[:nc]]
    ys_nz = [not isinstance(c, Zero) for c in cts[nc:]]
    y_types = step.out_types[nc:]
    ct_ys = loops.pick(cts[nc:], ys_nz)
    acc0 = [zeros(c.type) for c in loops.pick(caps, lin_caps)]
    n_acc, ny = len(acc0), len(ct_ys)
    linear = lin_caps + [False] * lay.a + [True] * nc + lin_xs

    def tstep(*a):
        active, carry, rows = (a if lay.a else (None, *a))
        acc, ctc = carry[:n_acc], carry[n_acc:]
        cty = loops.merge(ys_nz, rows[:ny], [Zero(t) for t in y_types])
        nonlin = res_caps + ([active] if lay.a else []) + rows[ny:]
        cts_in = backward_pass(step, linear, nonlin, ctc + cty)
        d_caps, d_carry, d_xs = cts_in[:n_acc], cts_in[n_acc:n_acc + nc], cts_in[n_acc + nc:]
        acc = [add_tangents(s, d) for s, d in zip(acc, d_caps)]
        return acc + [instantiate(d) for d in d_carry], [instantiate(d) for d in d_xs]

    outs = scan_flat(tstep, acc0 + ct_carry, ct_ys + res_xs, length=params["length"],
                     reverse=not params["reverse"], counts=counts)
    d_caps, d_init, d_xs = outs[:n_acc], outs[n_acc:n_acc + nc], outs[n_acc + nc:]
    return (loops.merge(lin_caps, d_caps, [None] * len(caps)) + ([None] if lay.a else [])
            + [d if lin else None for d, lin in zip(d_init, lin_init)]
            + loops.merge(lin_xs, d_xs, [None] * len(xs)))


# ------------------------------------------------------------- dead code


def scan_dce(eqn: Eqn, used: list[bool]) -> Eqn:
    """Drop ys nobody reads and carries that no needed output depends on."""
    from ..passes.simplify import dce, live_params

    step, nc = eqn.params["step"], eqn.params["num_carry"]
    a = int(eqn.params["counted"])

    def needed_carries(mask):
        body = Region(step.params, step.eqns, tuple(loops.pick(step.outputs, mask + used[nc:])))
        live = live_params(body)
        return live[a:a + nc]

    keep_c = loops.fixpoint(used[:nc], needed_carries)
    keep_out = keep_c + used[nc:]
    body = dce(Region(step.params, step.eqns, tuple(loops.pick(step.outputs, keep_out))))
    live = live_params(body)
    keep_x = live[a + nc:]
    new_step = Region(tuple(loops.pick(step.params, [True] * a + keep_c + keep_x)), body.eqns,
                      body.outputs)
    ins = eqn.inputs  # open form: [counts], init, xs
    inputs = (list(ins[:a]) + loops.pick(ins[a:a + nc], keep_c)
              + loops.pick(ins[a + nc:], keep_x))
    outputs = loops.pick(eqn.outputs, keep_out)
    return Eqn(scan_p, tuple(inputs), tuple(outputs), {**eqn.params, "step": new_step,
                                                       "num_carry": sum(keep_c)})


scan_p.def_rule("dce", scan_dce)
