"""Reverse mode of `checkpointed` (checkpointed.py): a scan holding at most k carries.

Partial evaluation splits the body of `checkpointed` as any region, but for its scans:
instead of a tape of each step's residuals, the known side runs the loop forward
writing the carries the binomial schedule keeps (revolve.py) into one buffer of k + 1
carries (slot k is scratch), and the unknown side is `checkpointed_lin`: a linear
primitive whose transpose runs the schedule backwards, one step reversed per iteration
of a loop: load a snapshot, advance to the step (a loop of a dynamic trip count, keeping
the snapshots the schedule says), evaluate the step again for its residuals and
transpose it. The tables of the schedule are constants of the program; nothing runs in
Python per step, and no step is unrolled.

Closed form: `checkpointed_lin`: operands (captures..., residuals..., tangents...);
`forward` (captures..., residuals..., tangents...) -> tangents of the outputs, the linear
map itself; `backward` (captures..., residuals..., cotangents of the outputs...) ->
cotangents of the tangents, its transpose.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..ad_util import UndefinedPrimal, live, nonzero
from ..interpret import eval_region
from ..ir import UNBOUNDED, Region, Type, renamed
from . import loops
from .elementwise import add, convert, eq, ge, select, sub
from .index import dynamic_slice, dynamic_update_slice
from .iterate import iterate_flat, iterate_p
from .scan import Layout, scan_flat, scan_p
from .shape import materialize, reshape
from .tangents import add_tangents, instantiate, zeros
from ..primitive import Primitive
from ..trace import bind, trace_closed, type_of_value, using
from .checkpointed import checkpointed_p
from .revolve import Schedule, schedule

checkpointed_lin_p = Primitive("checkpointed_lin")


# ------------------------------------------------------------- checkpointed: reverse mode


def _partial_eval(pe, unknowns, *args, body, checkpoints, num_captures):
    """The body split equation by equation, as partial evaluation splits any region, but
    for its scans, which keep snapshots rather than tapes."""
    from ..passes import at_eqn
    from ..ir import Literal

    env = dict(zip(body.params, args))
    read = lambda a: a.value if isinstance(a, Literal) else env[a]  # noqa: E731
    for eqn in body.eqns:
        ins, params = eqn.closed
        vals = [read(a) for a in ins]
        unks = [pe.is_unknown(v) for v in vals]
        with at_eqn("partial evaluation", eqn):
            if any(unks) and eqn.prim is scan_p and not params["counted"] and (
                    checkpoints < params["length"]):
                outs = _split_scan(pe, unks, vals, params, checkpoints)
            elif any(unks) and eqn.prim is iterate_p and (
                    len(params["step"].outputs) == params["num_carry"]):
                from .checkpointed_iterate import split_iterate

                outs = split_iterate(pe, unks, vals, params, checkpoints)
            elif any(unks) and "partial_eval" in eqn.prim.rules:
                outs = eqn.prim.rules["partial_eval"](pe, unks, *vals, **params)
            else:
                outs = pe.default_rule(eqn.prim, unks, vals, params)
        env.update(zip(eqn.outputs, outs))
    return [read(o) for o in body.outputs]


checkpointed_p.def_rule("partial_eval", _partial_eval)


# ------------------------------------------------------------- the split


class _Parts:
    """What the known side of a checkpointed scan hands to the unknown side, and the
    regions and tables both sides evaluate the step with."""

    def __init__(self, split: loops.LoopSplit, params: dict, k: int,
                 kinit_types: list[Type], kxs_types: list[Type], unknown: list[int]):
        from ..passes.simplify import dce

        self.split, self.k, self.n = split, k, params["length"]
        self.reverse = params["reverse"]
        self.n_kc, self.n_kx = len(kinit_types), len(kxs_types)
        self.n_ky = split.unk_ys.count(False)
        self.carry_types = kinit_types
        # the tangents: (of captures and laned operands, of carries, of xs)
        self.tangent_sizes = [unknown[0], sum(split.unk_carry), unknown[1]]
        step = split.known_step
        self.advance = dce(Region(step.params, step.eqns, step.outputs[:self.n_kc]))
        self.schedule: Schedule = schedule(self.n, k)

    def by_row(self, table: np.ndarray) -> np.ndarray:
        """A table of the steps, in the order of the rows of xs (step i reads row i, or
        row n - 1 - i when reversed)."""
        return table[::-1].copy() if self.reverse else table

    def known_step(self, inv: list, carry: list, rows: list) -> list:
        # (regions anew at each use: the program holds the step several times, and each
        # of its variables may be assigned once)
        return eval_region(renamed(self.split.known_step), inv + carry + rows)

    def residuals(self, r: "_Residuals", krows: list, outs: list) -> list:
        """The unknown step's residuals, from the known step's `outs` at rows `krows`."""
        ext = outs[self.n_kc + self.n_ky:]
        return loops.residual_args(self.split, r.kcaps, r.klaned, r.intensive,
                                   loops.forwarded_rows(self.split, krows) + ext)


class _Residuals:
    """The known values the unknown side reads, in the order its operands take them."""

    def __init__(self, kcaps: list, klaned: list, intensive: list, invariants: list,
                 kxs: list, buffers: list):
        self.kcaps, self.klaned, self.intensive = kcaps, klaned, intensive
        self.invariants, self.kxs, self.buffers = invariants, kxs, buffers
        self.sizes = [len(g) for g in self.groups()]

    def groups(self) -> list[list]:
        return [self.kcaps, self.klaned, self.intensive, self.invariants, self.kxs,
                self.buffers]

    def flat(self) -> list:
        return [v for g in self.groups() for v in g]

    def like(self, values: Sequence[Any]) -> "_Residuals":
        ends = np.cumsum(self.sizes)
        return _Residuals(*[list(values[a:b]) for a, b in zip([0, *ends[:-1]], ends)])


def _split_scan(pe, unknowns: list[bool], args: list, params: dict, k: int) -> list:
    lay = Layout(len(args), params)
    caps, _, laned, init, xs = lay.operands(args)
    ucaps, _, ulaned, uinit, uxs = lay.operands(unknowns)
    split = loops.split_loop(params["step"], lay.num_carry, ucaps, ulaned, uinit, uxs)
    kcaps, klaned = loops.pick(caps, ucaps, False), loops.pick(laned, ulaned, False)
    kinit, kxs = loops.pick(init, split.unk_carry, False), loops.pick(xs, uxs, False)
    parts = _Parts(split, params, k, [type_of_value(v) for v in kinit],
                   [type_of_value(x) for x in kxs], [sum(ucaps) + sum(ulaned), sum(uxs)])
    with using(pe.known):
        h = loops.hoist(split, kcaps, klaned, ())
        k_outs = _forward_pass(parts, h.invariants, kinit, kxs)
    n_kc = len(kinit)
    res = _Residuals(kcaps, klaned, h.intensive, h.invariants, kxs,
                     k_outs[n_kc + parts.n_ky:])
    tangents = (loops.pick(caps, ucaps) + loops.pick(laned, ulaned)
                + [instantiate(v) for v in loops.pick(init, split.unk_carry)]
                + loops.pick(xs, uxs))
    forward, backward = _linear_regions(parts, res, [type_of_value(v) for v in tangents])
    with using(pe.unknown):
        u_outs = bind(checkpointed_lin_p, *res.flat(), *tangents, forward=forward,
                      backward=backward, num_res=len(res.flat()), num_captures=0)
    n_uc = sum(split.unk_carry)
    carry = loops.merge(split.unk_carry, u_outs[:n_uc], k_outs[:n_kc])
    return carry + loops.merge(split.unk_ys, u_outs[n_uc:], k_outs[n_kc:n_kc + parts.n_ky])


def _linear_regions(parts: _Parts, res: _Residuals, t_types: list[Type]
                    ) -> tuple[Region, Region]:
    """`checkpointed_lin`'s regions: (the linear map, its transpose)."""
    res_types = [type_of_value(v) for v in res.flat()]
    n_r, n_uc = len(res_types), sum(parts.split.unk_carry)
    outs = parts.split.unknown_step.out_types  # (of one step: the ys stack n of them)
    ct_types = outs[:n_uc] + [t.with_shape((parts.n,) + t.shape) for t in outs[n_uc:]]
    forward = _closed(lambda *v: _linear_forward(parts, res.like(v), list(v[n_r:])),
                      res_types + t_types)
    backward = _closed(lambda *v: _linear_backward(parts, res.like(v), t_types,
                                                   list(v[n_r:])), res_types + ct_types)
    return forward, backward


def _closed(fn: Callable, types: list[Type]) -> Region:
    region, caps = trace_closed(fn, types)
    assert not caps, "a checkpointed scan's regions take every value they read"
    return region


def _row(x: Any, i: Any) -> Any:
    """x[i], for a traced index i."""
    shape = type_of_value(x).shape[1:]
    return reshape(dynamic_slice(x, [i] + [np.int64(0)] * len(shape), (1,) + shape), shape)


def _put(buffer: Any, i: Any, value: Any) -> Any:
    """buffer with buffer[i] = value, for a traced index i."""
    shape = type_of_value(value).shape
    return dynamic_update_slice(buffer, reshape(value, (1,) + shape),
                                [i] + [np.int64(0)] * len(shape))


def _forward_pass(parts: _Parts, inv: list, kinit: list, kxs: list) -> list:
    """The known loop: known carries, known ys, and the snapshot buffers, written as
    the schedule's first sweep says."""
    n_kc = parts.n_kc
    buffers = [zeros(t.with_shape((parts.k + 1,) + t.shape)) for t in parts.carry_types]

    def step(lan, carry, rows):
        c, bufs = carry[:n_kc], carry[n_kc:]
        bufs = [_put(b, rows[-1], v) for b, v in zip(bufs, c)]
        outs = parts.known_step(inv, c, rows[:-1])
        return outs[:n_kc] + bufs, outs[n_kc:n_kc + parts.n_ky]

    outs = scan_flat(step, kinit + buffers, kxs + [parts.by_row(parts.schedule.forward)],
                     length=parts.n, reverse=parts.reverse)
    return outs[:n_kc] + outs[2 * n_kc:] + outs[n_kc:2 * n_kc]


def _tangent_groups(parts: _Parts, values: Sequence[Any]) -> list[list]:
    """(tangents of captures and laned operands, of carries, of xs) of a flat list."""
    ends = np.cumsum(parts.tangent_sizes)
    return [list(values[a:b]) for a, b in zip([0, *ends[:-1]], ends)]


def _linear_forward(parts: _Parts, r: _Residuals, tangents: list) -> list:
    """The linear map itself (what a linearized function evaluates forward): the loop
    again from its first carry, the known step giving each unknown step its residuals."""
    n_kc, n_kx = parts.n_kc, parts.n_kx
    fixed, uinit, uxs = _tangent_groups(parts, tangents)
    n_uc = len(uinit)

    def step(lan, carry, rows):
        kc, uc = carry[:n_kc], carry[n_kc:]
        outs = parts.known_step(r.invariants, kc, rows[:n_kx])
        res = parts.residuals(r, rows[:n_kx], outs)
        u = eval_region(renamed(parts.split.unknown_step), res + fixed + uc + rows[n_kx:])
        return outs[:n_kc] + u[:n_uc], u[n_uc:]

    first = [_row(b, np.int64(0)) for b in r.buffers]
    outs = scan_flat(step, first + uinit, r.kxs + uxs, length=parts.n, reverse=parts.reverse)
    return outs[n_kc:]


def _linear_backward(parts: _Parts, r: _Residuals, t_types: list[Type], cts: list) -> list:
    """The transpose: the schedule's reverse pass, one step reversed per iteration, from
    the last step to the first; -> the cotangents of the tangents."""
    from ..passes.transpose import backward_pass

    s, n_kx = parts.schedule, parts.n_kx
    fixed_t, carry_t, xs_t = _tangent_groups(parts, t_types)
    n_f, n_uc, n_uy = len(fixed_t), len(carry_t), len(cts) - len(carry_t)
    n_res = len(parts.split.kinds)
    linear = [False] * n_res + [True] * (n_f + n_uc + len(xs_t))
    tables = [parts.by_row(t) for t in (s.load, s.start, s.first_store, np.arange(parts.n))]
    n_b = len(r.buffers)

    def step(lan, carry, rows):
        bufs, acc, ctc = carry[:n_b], carry[n_b:n_b + n_f], carry[n_b + n_f:]
        cty, krows = rows[:n_uy], rows[n_uy:n_uy + n_kx]
        load, start, first, i = rows[n_uy + n_kx:]
        cur = [_row(b, load) for b in bufs]
        cur, bufs = _advance(parts, r, cur, bufs, start, first, i)
        outs = parts.known_step(r.invariants, cur, krows)
        res = parts.residuals(r, krows, outs)
        d = backward_pass(renamed(parts.split.unknown_step), linear, res, ctc + cty)
        acc = [instantiate(add_tangents(a, g)) for a, g in zip(acc, d[:n_f])]
        return (bufs + acc + [instantiate(g) for g in d[n_f:n_f + n_uc]],
                [instantiate(g) for g in d[n_f + n_uc:]])

    outs = scan_flat(step, r.buffers + [zeros(t) for t in fixed_t] + cts[:n_uc],
                     cts[n_uc:] + r.kxs + tables, length=parts.n, reverse=not parts.reverse)
    return outs[n_b:]


def _advance(parts: _Parts, r: _Residuals, cur: list, bufs: list, start: Any, first: Any,
             target: Any) -> tuple[list, list]:
    """The carries at step `target` from those at step `start`, by a loop of
    target - start steps; each carry on the way goes to the slot the schedule's stores
    (from `first` on) name, or to the scratch slot k."""
    s, n_kc, k = parts.schedule, parts.n_kc, parts.k

    def step(lan, carry):
        pos, ptr, c, b = carry[0], carry[1], carry[2:2 + n_kc], carry[2 + n_kc:]
        row = sub(np.int64(parts.n - 1), pos) if parts.reverse else pos
        c = eval_region(renamed(parts.advance), r.invariants + c + [_row(x, row) for x in r.kxs])
        pos = add(pos, np.int64(1))
        hit = eq(_row(s.stored_at, ptr), pos)
        slot = select(hit, _row(s.stored_in, ptr), np.int64(k))
        b = [_put(x, slot, v) for x, v in zip(b, c)]
        return [pos, add(ptr, convert(hit, np.dtype(np.int64)))] + c + b, []

    outs = iterate_flat(step, lambda lan, carry: ge(carry[0], target),
                        [start, first] + cur + bufs, max_steps=UNBOUNDED)
    return outs[2:2 + n_kc], outs[2 + n_kc:2 + n_kc + len(bufs)]


# ------------------------------------------------------------- checkpointed_lin


@checkpointed_lin_p.def_rule("shape")
def _lin_shape(*types, forward, backward, num_res, num_captures):
    return forward.out_types


checkpointed_lin_p.def_rule("impl", lambda *args, forward, **_: eval_region(forward, list(args)))


@checkpointed_lin_p.def_rule("jvp")
def _lin_jvp(primals, tangents, *, forward, backward, num_res, num_captures):
    """The forward map's jvp (linear in the tangents it maps; the residuals may vary too,
    in a linearized function differentiated again)."""
    from ..passes.jvp import jvp_region

    jreg, out_nz = jvp_region(forward, nonzero(tangents))
    outs = eval_region(jreg, list(primals) + live(tangents))
    n = len(forward.outputs)
    return outs[:n], loops.with_zeros(out_nz, outs[n:], forward.out_types)


@checkpointed_lin_p.def_rule("transpose")
def _lin_transpose(cts, *args, forward, backward, num_res, num_captures):
    n = num_captures + num_res
    if any(isinstance(a, UndefinedPrimal) for a in args[:n]):
        raise TypeError("checkpointed_lin: transposed in its residuals, where it is not "
                        "linear")
    grads = eval_region(backward, list(args[:n]) + [instantiate(c) for c in cts])
    return [None] * n + [g if isinstance(a, UndefinedPrimal) else None
                         for g, a in zip(grads, args[n:])]


@checkpointed_lin_p.def_rule("batch")
def _lin_batch(size, args, dims, *, forward, backward, num_res, num_captures):
    from ..passes.vmap import batch_region

    def batch(region: Region) -> Region:
        return batch_region(region, size, [0] * len(region.params), True)[0]

    args = [materialize(a, d, size) for a, d in zip(args, dims)]
    outs = bind(checkpointed_lin_p, *args, forward=batch(forward), backward=batch(backward),
                num_res=num_res, num_captures=num_captures)
    return outs, [0] * len(outs)
