"""scan: a loop over the rows of its inputs that stacks what each step returns.

    def scan(step, init, xs, length, reverse):      # the meaning, as a Python loop
        carry, ys = init, [None] * length
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, ys[i] = step(carry, [x[i] for x in xs])
        return carry, stack(ys)

Closed form: operands (captures..., [counts], laned..., init..., xs...); the
step takes (captures..., laned..., carries..., rows...) and returns (carries...,
ys...). A *counted* scan (the reverse mode of `iterate`) has lanes, the axes
of its `counts` operand (one int per lane), and a per-lane step (see
ops/loops.py): it runs max(counts) steps rather than `length`, and a lane whose
count is used up keeps its carry and gets zero ys rows. Its carries and laned
operands lead with the lanes, and its xs with (length, *lanes).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ad_util import UndefinedPrimal, live, nonzero
from .tangents import add_tangents, instantiate, zeros
from ..interpret import eval_region
from ..ir import UNBOUNDED, UNSIZED, Eqn, Region, Type
from ..primitive import Primitive
from ..trace import bind, trace_closed, type_of_value, using
from . import carry_tape, loops
from .check import naming_step
from .shape import broadcast_in_dim, materialize, moveaxis

scan_p = Primitive("scan")


class Layout:
    """Where each group sits in a scan's closed operands:

        operands:    [captures..., counts?, laned..., init..., xs...]
        step params: [captures..., laned..., carries..., rows...]
        step outputs, and the scan's: [carries..., ys...]

    (counts, one int per lane, only in a counted scan)."""

    def __init__(self, n_operands: int, params: dict):
        self.num_captures, self.counted = params["num_captures"], int(params["counted"])
        self.num_laned, self.num_carry = params["num_laned"], params["num_carry"]
        self.num_xs = (n_operands - self.num_captures - self.counted - self.num_laned
                       - self.num_carry)

    def operands(self, args: Sequence[Any]):
        """-> (captures, counts or None, laned, init, xs)."""
        ends = np.cumsum([self.num_captures, self.counted, self.num_laned, self.num_carry])
        caps, counts, laned, init = (list(args[a:b]) for a, b in zip([0, *ends[:-1]], ends))
        return caps, (counts[0] if counts else None), laned, init, list(args[ends[-1]:])


def lanes_of(counts: Any) -> tuple:
    return () if counts is None else type_of_value(counts).shape


# ------------------------------------------------------------- binding


def scan_flat(step_fn: Callable, init: list, xs: list, *, length: int, reverse: bool = False,
              counts: Any = None, laned: Sequence[Any] = ()) -> list:
    """Bind a scan whose step is the Python function `step_fn(laned, carry, rows) ->
    (carry, ys)` over one lane's values; -> final carry + stacked ys, one list."""
    lanes = lanes_of(counts)
    lead = len(lanes) + 1
    types = ([loops.per_lane(type_of_value(v), lanes) for v in [*laned, *init]]
             + [type_of_value(x).with_shape(type_of_value(x).shape[lead:]) for x in xs])
    nl, nc = len(laned), len(init)

    def flat(*params):
        out_c, ys = step_fn(list(params[:nl]), list(params[nl:nl + nc]), list(params[nl + nc:]))
        return list(out_c) + list(ys)

    region, caps = trace_closed(flat, types)
    operands = [*caps, *([] if counts is None else [counts]), *laned, *init, *xs]
    return bind(scan_p, *operands, step=region, num_carry=nc, num_laned=nl, length=length,
                reverse=reverse, counted=counts is not None, num_captures=len(caps))


def unknown_loop(pe, split: loops.LoopSplit, h: loops.Hoisted, kcaps: list, klaned: list,
                 ucaps: list, ulaned: list, uinit: list, res_rows: list, urows: list,
                 loop: dict, tape: tuple | None = None) -> list:
    """The scan of the unknown step, its residuals read from where `split.kinds` says:

        laned [klaned, intensive (the laned ones), ulaned], carry [ucarry],
        rows [forwarded rows..., extensive tapes..., urows, step index?]
        -> carry [ucarry], ys [uys]

    `tape`: (the CarryTape, the tapes of the carries whole, the final carries), whose
    residuals each step recomputes (carry_tape.py) from the step's index."""
    int_shared = loops.pick(h.intensive, h.intensive_laned, False)
    int_laned = loops.pick(h.intensive, h.intensive_laned)
    n_kl, n_il, n_r, n_uc = len(klaned), len(int_laned), len(res_rows), len(uinit)
    n_u = len(urows)

    def unknown_step(lan, carry, rows):
        intensive = loops.merge(h.intensive_laned, lan[n_kl:n_kl + n_il], int_shared)
        again = {}
        if tape:
            ct, whole, final = tape
            again["current"], again["next"] = carry_tape.recomputed(
                ct, h.invariants, rows[n_r - len(whole):n_r], whole, final, rows[-1],
                loop["length"], loop["reverse"])
        res = loops.residual_args(split, kcaps, lan[:n_kl], intensive, rows[:n_r], again)
        outs = eval_region(split.unknown_step, res + ucaps + lan[n_kl + n_il:] + carry
                           + rows[n_r:n_r + n_u])
        return outs[:n_uc], outs[n_uc:]

    with using(pe.unknown):
        index = [carry_tape.step_index(loop["length"])] if tape else []
        return scan_flat(unknown_step, uinit, res_rows + urows + index,
                         laned=klaned + int_laned + ulaned, **loop)


# ------------------------------------------------------------- meaning


@scan_p.def_rule("shape")
def _scan_shape(*types: Type, step, num_carry, num_laned, length, reverse, counted,
                num_captures):
    lay = Layout(len(types), dict(num_captures=num_captures, counted=counted,
                                  num_laned=num_laned, num_carry=num_carry))
    caps, counts, laned, init, xs = lay.operands(types)
    lanes = () if counts is None else counts.shape
    if counts is not None and counts.dtype.kind != "i":
        raise TypeError(f"scan: counts must be integers, got {counts}")
    lead = (length,) + lanes
    if any(x.shape[:len(lead)] != lead and not _held_rows(x, length, lanes) for x in xs):
        raise ValueError(f"scan: xs must lead with {lead}")
    if any(t.shape[:len(lanes)] != lanes for t in laned + init):
        raise TypeError(f"scan: laned operands and carries must lead with the lanes {lanes}")
    if any(t.unsized for t in step.out_types[num_carry:]):
        raise NotImplementedError(f"scan: a step's y cannot be stacked: {UNSIZED} (a "
                                  "reverse-mode residual of the loop inside the step)")
    per = [loops.per_lane(t, lanes) for t in laned + init]
    rows = [x.with_shape(x.shape[len(lead):]) for x in xs]
    if step.in_types != caps + per + rows:
        raise TypeError("scan: the step's params do not match the operands")
    if step.out_types[:num_carry] != per[num_laned:]:
        raise TypeError("scan: the step returns carries of other types than init")
    return init + [t.with_shape(lead + t.shape) for t in step.out_types[num_carry:]]


def _held_rows(x: Type, length: int, lanes: tuple) -> bool:
    """Whether `x` is a concrete tape of a loop with no step limit: the rows it holds."""
    return length >= UNBOUNDED and x.ndim > len(lanes) and x.shape[1:len(lanes) + 1] == lanes


def _scan_impl(*args, **params):
    lay = Layout(len(args), params)
    step, nc, length = params["step"], lay.num_carry, params["length"]
    caps, counts, laned, carry, xs = lay.operands(args)
    lanes = lanes_of(counts)
    trips = length if counts is None else min(length, int(counts.max(initial=0)))
    donors = counts is not None and loops.observable([step])
    ys = [np.zeros((loops.rows_held(length, trips),) + lanes + t.shape, t.dtype)
          for t in step.out_types[nc:]]
    for t in (reversed(range(trips)) if params["reverse"] else range(trips)):
        active = None if counts is None else np.asarray(t < counts)
        values = laned + carry + [x[t] for x in xs]
        with naming_step("scan", t):
            outs = loops.all_lanes(step, caps, values if not donors else
                                   loops.donated(active, values, lanes), lanes)
        if active is not None:
            outs = [loops.held(active, o, old) for o, old in
                    zip(outs, carry + [np.zeros_like(y) for y in outs[nc:]])]
        carry = outs[:nc]
        for buf, y in zip(ys, outs[nc:]):
            buf[t] = y
    return carry + ys


# ------------------------------------------------------------- jvp


@scan_p.def_rule("jvp")
def _scan_jvp(primals, tangents, **params):
    lay = Layout(len(primals), params)
    caps, counts, laned, init, xs = lay.operands(primals)
    tcaps, _, tlaned, tinit, txs = lay.operands(tangents)
    j = loops.LoopJvp(params["step"], lay.num_carry, nonzero(tcaps) + nonzero(tlaned),
                      nonzero(tinit), nonzero(txs))
    outs = scan_flat(j.step_fn(caps, live(tcaps), lay.num_laned, lay.num_xs), j.init(init, tinit),
                     xs + live(txs), length=params["length"], reverse=params["reverse"],
                     counts=counts, laned=laned + live(tlaned))
    return j.results(outs, _scan_shape(*[type_of_value(v) for v in primals], **params))


# ------------------------------------------------------------- vmap


@scan_p.def_rule("batch")
def _scan_batch(size, args, dims, **params):
    lay = Layout(len(args), params)
    _, counts, _, _, xs = lay.operands(args)
    _, kdim, _, _, xdims = lay.operands(dims)
    # counts shared by the batch: each lane's steps take the batch, as a scan's do; but a
    # counted scan batched per lane is laned anew (SIMD blocks), unless a shared tape
    # of a loop with no step limit would have to be copied for every new lane
    if lay.counted and (kdim is not None or not any(
            d is None and type_of_value(x).unsized for x, d in zip(xs, xdims))):
        return _counted_batch(size, lay, args, dims, params)
    return _batched_step(size, lay, args, dims, params)


def _batched_step(size, lay: Layout, args, dims, params):
    """The scan of the batched step: each operand's lanes (batch) go after the scan's own
    lanes (a counted scan's), where the step sees them first."""
    from ..passes.vmap import batch_region
    step, nc = params["step"], lay.num_carry
    caps, counts, laned, init, xs = lay.operands(args)
    cdims, _, ldims, idims, xdims = lay.operands(dims)
    k = len(lanes_of(counts))
    ny = len(step.outputs) - nc
    laned = [moveaxis(v, 0, k) if d is not None else v for v, d in zip(laned, ldims)]
    xs = [moveaxis(x, 0, 1 + k) if d is not None else x for x, d in zip(xs, xdims)]
    to_dim = lambda mask: [0 if m else None for m in mask]  # noqa: E731

    def probe(mask):
        bstep, odims = batch_region(step, size, cdims + ldims + to_dim(mask) + xdims,
                                    mask + [False] * ny)
        return [d is not None for d in odims[:nc]], (bstep, odims)

    batched, (bstep, odims) = loops.fixpoint([d is not None for d in idims], probe)

    def step_fn(lan, carry, rows):
        outs = eval_region(bstep, caps + lan + carry + rows)
        return outs[:nc], outs[nc:]

    init = [moveaxis(materialize(c, d, size), 0, k) if b else c
            for c, d, b in zip(init, idims, batched)]
    outs = scan_flat(step_fn, init, xs, length=params["length"], reverse=params["reverse"],
                     counts=counts, laned=laned)
    carry = [moveaxis(c, k, 0) if b else c for c, b in zip(outs[:nc], batched)]
    ys = [moveaxis(y, 1 + k, 0) if d is not None else y for y, d in zip(outs[nc:], odims[nc:])]
    return carry + ys, to_dim(batched) + [0 if d is not None else None for d in odims[nc:]]


def _counted_batch(size, lay: Layout, args, dims, params):
    step, nc = params["step"], lay.num_carry
    caps, counts, laned, init, xs = lay.operands(args)
    cdims, kdim, ldims, idims, xdims = lay.operands(dims)
    lanes = lanes_of(counts)[1 if kdim is not None else 0:]  # one example's lanes
    moved, shared, new_laned = loops.add_lane_axis(size, caps, cdims, laned + init,
                                                   ldims + idims, lanes)
    n_moved = sum(moved)
    # (a tape's own leading size: the rows it holds, if its loop has no step limit)
    xs = [moveaxis(x, 0, 1) if d is not None else broadcast_in_dim(
        x, type_of_value(x).shape[:1] + (size,) + type_of_value(x).shape[1:],
        (0,) + tuple(range(2, 1 + type_of_value(x).ndim))) for x, d in zip(xs, xdims)]

    def step_fn(lan, carry, rows):
        c = loops.merge(moved, lan[:n_moved], shared)
        outs = eval_region(step, c + lan[n_moved:] + carry + rows)
        return outs[:nc], outs[nc:]

    n_l = n_moved + lay.num_laned
    outs = scan_flat(step_fn, new_laned[n_l:], xs, length=params["length"],
                     reverse=params["reverse"], counts=materialize(counts, kdim, size),
                     laned=new_laned[:n_l])
    return outs[:nc] + [moveaxis(y, 1, 0) for y in outs[nc:]], [0] * len(outs)


# ------------------------------------------------------------- reverse mode


@scan_p.def_rule("partial_eval")
def _scan_partial_eval(pe, unknowns, *args, **params):
    lay = Layout(len(args), params)
    caps, counts, laned, init, xs = lay.operands(args)
    ucaps, ucount, ulaned, uinit, uxs = lay.operands(unknowns)
    if ucount:
        return pe.default_rule(scan_p, unknowns, args, params)
    split = loops.split_loop(params["step"], lay.num_carry, ucaps, ulaned, uinit, uxs)
    ct = None
    if counts is None and params["length"] > 0:
        split, ct = carry_tape.with_carry_tape(split)
    known = [loops.pick(v, m, False) for v, m in
             ((caps, ucaps), (laned, ulaned), (init, split.unk_carry), (xs, uxs))]
    kcaps, klaned, kinit, kxs = known
    lanes, n_kc = lanes_of(counts), len(kinit)
    loop = dict(length=params["length"], reverse=params["reverse"], counts=counts)
    with using(pe.known):
        h = loops.hoist(split, kcaps, klaned, lanes)
        inv_shared = loops.pick(h.invariants, h.invariants_laned, False)

        def known_step(lan, carry, rows):
            inv = loops.merge(h.invariants_laned, lan, inv_shared)
            outs = eval_region(split.known_step, inv + carry + rows)
            return outs[:n_kc], outs[n_kc:]

        k_outs = scan_flat(known_step, kinit, kxs, laned=loops.pick(h.invariants,
                                                                     h.invariants_laned), **loop)
    k_ys = k_outs[n_kc:len(k_outs) - split.num_extensive]
    tapes = k_outs[len(k_outs) - split.num_extensive:]
    rows = loops.forwarded_rows(split, kxs) + tapes
    tape = ct and (ct, tapes[len(tapes) - len(ct.carries):], [k_outs[i] for i in ct.carries])
    u_outs = unknown_loop(pe, split, h, kcaps, klaned, loops.pick(caps, ucaps),
                          loops.pick(laned, ulaned),
                          [instantiate(v) for v in loops.pick(init, split.unk_carry)],
                          rows, loops.pick(xs, uxs), loop, tape)
    n_uc = sum(split.unk_carry)
    carry = loops.merge(split.unk_carry, u_outs[:n_uc], k_outs[:n_kc])
    return carry + loops.merge(split.unk_ys, u_outs[n_uc:], k_ys)


@scan_p.def_rule("transpose")
def _scan_transpose(cts, *args, **params):
    """A scan linear in some operands (those UndefinedPrimal) transposed: the same loop
    run the other way, accumulating the cotangents of captures and laned operands.

        Before: scan  [caps, counts?, laned, init, xs] -> [carry, ys]
        After:  scan  laned [res laned], carry [ct caps (per lane), ct laned, ct carry],
                      rows [ct ys*, res xs], run reversed
                      -> carry [ct caps, ct laned, ct init], ys [ct xs]
    """
    from .reduce import reduce_sum
    from ..passes.transpose import backward_pass

    lay = Layout(len(args), params)
    step, nc = params["step"], lay.num_carry
    caps, counts, laned, init, xs = lay.operands(args)
    lanes = lanes_of(counts)
    is_lin = lambda vs: [isinstance(v, UndefinedPrimal) for v in vs]  # noqa: E731
    lin_caps, lin_laned, lin_xs = is_lin(caps), is_lin(laned), is_lin(xs)
    # every carry of a linear scan is linear: one that is not an UndefinedPrimal is an
    # instantiated zero tangent, whose cotangent nobody needs
    lin_init = is_lin(init)
    res_caps, res_laned = loops.pick(caps, lin_caps, False), loops.pick(laned, lin_laned, False)
    res_xs = loops.pick(xs, lin_xs, False)
    ys_nz = nonzero(cts[nc:])
    y_types = step.out_types[nc:]
    # cotangents of captures and laned operands accumulate in carries, one per lane
    acc0 = [zeros(c.type.with_shape(lanes + c.type.shape)) for c in loops.pick(caps, lin_caps)]
    acc0 += [zeros(v.type) for v in loops.pick(laned, lin_laned)]
    n_acc, n_ct = len(acc0), sum(ys_nz)
    linear = lin_caps + lin_laned + [True] * nc + lin_xs

    def tstep(lan, carry, rows):
        acc, ctc = carry[:n_acc], carry[n_acc:]
        cty = loops.with_zeros(ys_nz, rows[:n_ct], y_types)
        d = backward_pass(step, linear, res_caps + lan + rows[n_ct:], ctc + cty)
        acc = [add_tangents(s, x) for s, x in zip(acc, d[:n_acc])]
        return acc + [instantiate(x) for x in d[n_acc:n_acc + nc]], [
            instantiate(x) for x in d[n_acc + nc:]]

    outs = scan_flat(tstep, acc0 + [instantiate(c) for c in cts[:nc]],
                     loops.pick(cts[nc:], ys_nz) + res_xs, length=params["length"],
                     reverse=not params["reverse"], counts=counts, laned=res_laned)
    n_lc = sum(lin_caps)
    d_caps = [reduce_sum(a, tuple(range(len(lanes)))) for a in outs[:n_lc]]
    d_laned, d_init = outs[n_lc:n_acc], outs[n_acc:n_acc + nc]
    return (loops.merge(lin_caps, d_caps, [None] * len(caps)) + ([None] if lay.counted else [])
            + loops.merge(lin_laned, d_laned, [None] * len(laned))
            + [d if lin else None for d, lin in zip(d_init, lin_init)]
            + loops.merge(lin_xs, outs[n_acc + nc:], [None] * len(xs)))


# ------------------------------------------------------------- dead code


def scan_dce(eqn: Eqn, used: list[bool]) -> Eqn:
    """Drop ys nobody reads, carries no needed output depends on, and unread inputs."""
    from ..passes.simplify import dce, live_params

    p = eqn.params
    step, nc, nl, a = p["step"], p["num_carry"], p["num_laned"], int(p["counted"])

    def needed_carries(mask):
        body = dce(Region(step.params, step.eqns,
                          tuple(loops.pick(step.outputs, mask + used[nc:]))))
        return live_params(body)[nl:nl + nc], body

    keep_c, body = loops.fixpoint(used[:nc], needed_carries)
    reads = live_params(body)
    keep_in = reads[:nl] + keep_c + reads[nl + nc:]
    new_step = Region(tuple(loops.pick(step.params, keep_in)), body.eqns, body.outputs)
    inputs = list(eqn.inputs[:a]) + loops.pick(eqn.inputs[a:], keep_in)  # open form
    outputs = tuple(loops.pick(eqn.outputs, keep_c + used[nc:]))
    return eqn.rebuilt(inputs=tuple(inputs), outputs=outputs, params={
        **p, "step": new_step, "num_carry": sum(keep_c), "num_laned": sum(reads[:nl])})


scan_p.def_rule("dce", scan_dce)


scan_p.def_rule("impl", loops.native_when_eager(scan_p, _scan_impl))
