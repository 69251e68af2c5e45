"""Reverse mode of an iterate inside `checkpointed` (`iterate(..., checkpoints=k)`,
`while_loop(..., checkpoints=k)`): at most k carries per lane, however many steps.

As for scans (checkpointed_scan.py), partial evaluation splits the loop's step, but the
known side is an iterate that keeps the snapshots the online schedule says (online.py)
in one buffer of k + 1 carries per lane (slot k is scratch), with the step each slot
holds (`pos`, -1 when free) and the stride; the unknown side is `checkpointed_lin`,
whose transpose is an iterate per lane, from the lane's last step to its first: free
the slots above the step, load the latest snapshot, advance to the step keeping the
bisection points, evaluate the step again for its residuals and transpose it. Each
lane runs its own schedule (lanes stop apart under vmap); nothing runs in Python per
step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..interpret import eval_region
from ..ir import UNBOUNDED, Region, Type, renamed
from ..trace import bind, type_of_value, using
from . import loops
from .checkpointed_scan import _closed, _put, _row, checkpointed_lin_p
from .elementwise import (add, bitwise_and, eq, ge, gt, logical_and, lt, mul, ne, select,
                          shift_right, sub)
from .iterate import COUNT, iterate_flat
from .index import dynamic_slice
from .online import forward_slots
from .reduce import argmax, argmin, reduce_min, reduce_sum
from .shape import iota, reshape
from .tangents import add_tangents, instantiate, zeros


@dataclass
class _Loop:
    """The split step and what every side of the schedule needs to evaluate it."""

    split: loops.LoopSplit
    advance: Region  # (invariants, known carries) -> known carries
    k: int
    lanes: tuple
    params: dict
    n_kc: int

    def known(self, inv: list, carry: list) -> list:
        return eval_region(renamed(self.split.known_step), inv + carry)

    def advanced(self, inv: list, carry: list) -> list:
        return eval_region(renamed(self.advance), inv + carry)


@dataclass
class _Res:
    """The known values the unknown side reads: shared ones whole, laned ones (leading
    with the lanes) passed to its loops as laned operands."""

    kcaps: list
    int_shared: list
    inv_shared: list
    klaned: list
    int_laned: list
    inv_laned: list
    counts: list = field(default_factory=list)  # the steps each lane took
    pos: list = field(default_factory=list)  # the step each slot holds, -1 if free
    bufs: list = field(default_factory=list)  # the snapshots, k + 1 per known carry

    def flat(self) -> list:
        return [v for f in fields(self) for v in getattr(self, f.name)]

    def like(self, values) -> "_Res":
        it = iter(values)
        return _Res(*[[next(it) for _ in getattr(self, f.name)] for f in fields(self)])

    def laned(self) -> list:
        """The laned residuals the loops take per lane: (klaned, intensive, invariants)."""
        return self.klaned + self.int_laned + self.inv_laned

    def per_lane(self, h: loops.Hoisted, lan: list) -> tuple[list, list, list]:
        """(klaned, intensive, invariants) of one lane, from `lan` (`laned()`'s slices)."""
        a, b = len(self.klaned), len(self.klaned) + len(self.int_laned)
        return (lan[:a], loops.merge(h.intensive_laned, lan[a:b], self.int_shared),
                loops.merge(h.invariants_laned, lan[b:b + len(self.inv_laned)],
                            self.inv_shared))


def split_iterate(pe, unknowns: list[bool], args: list, params: dict, k: int) -> list:
    """An iterate's partial evaluation with online checkpointing: -> its outputs
    (carries, counts), the known ones computed, the unknown ones by `checkpointed_lin`."""
    from ..passes.partial_eval import partial_eval_region
    from ..passes.simplify import dce
    from .iterate import _split

    nc, lanes = params["num_carry"], tuple(params["lanes"])
    caps, laned, init = _split(args, params)
    ucaps, ulaned, uinit = _split(unknowns, params)
    split = loops.split_loop(params["step"], nc, ucaps, ulaned, uinit, [])
    test = partial_eval_region(params["until"], ucaps + ulaned + split.unk_carry)
    if any(test.out_unknowns) or test.num_res:
        raise NotImplementedError("iterate: until depends on a value being differentiated")
    kcaps, klaned = loops.pick(caps, ucaps, False), loops.pick(laned, ulaned, False)
    kinit = loops.pick(init, split.unk_carry, False)
    step = split.known_step
    loop = _Loop(split, dce(Region(step.params, step.eqns, step.outputs[:len(kinit)])), k,
                 lanes, params, len(kinit))
    with using(pe.known):
        h = loops.hoist(split, kcaps, klaned, lanes)
        shared = [loops.pick(h.intensive, h.intensive_laned, False),
                  loops.pick(h.invariants, h.invariants_laned, False)]
        lane = [loops.pick(h.intensive, h.intensive_laned),
                loops.pick(h.invariants, h.invariants_laned)]
        res = _Res(kcaps, *shared, klaned, *lane)
        kc, counts, pos, bufs = _forward_sweep(loop, h, res, kinit, test.known)
    res = _Res(kcaps, *shared, klaned, *lane, [counts], [pos], bufs)
    tangents = (loops.pick(caps, ucaps) + loops.pick(laned, ulaned)
                + [instantiate(v) for v in loops.pick(init, split.unk_carry)])
    with using(pe.unknown):
        u_outs = bind(checkpointed_lin_p, *res.flat(), *tangents,
                      **_linear_regions(loop, h, res, tangents, sum(ucaps), sum(ulaned)))
    return loops.merge(split.unk_carry, u_outs, kc) + [counts]


def _linear_regions(loop: _Loop, h: loops.Hoisted, res: _Res, tangents: list, n_ucaps: int,
                    n_ulaned: int) -> dict:
    """`checkpointed_lin`'s params: the linear map, its transpose."""
    t_types = [type_of_value(v) for v in tangents]
    r_types = [type_of_value(v) for v in res.flat()]
    n_r, n_f = len(r_types), n_ucaps + n_ulaned
    forward = _closed(lambda *v: _linear_forward(loop, h, res.like(v), list(v[n_r:]),
                                                 n_ucaps, n_f), r_types + t_types)
    backward = _closed(lambda *v: _linear_backward(loop, h, res.like(v), t_types[:n_f],
                                                   n_ucaps, list(v[n_r:])),
                       r_types + t_types[n_f:])
    return dict(forward=forward, backward=backward, num_res=n_r, num_captures=0)


def _laned_full(shape: tuple, lanes: tuple, value: int) -> np.ndarray:
    return np.full(lanes + shape, value, COUNT)


def _forward_sweep(loop: _Loop, h: loops.Hoisted, res: _Res, kinit: list,
                   until: Region) -> tuple[list, Any, Any, list]:
    """The known iterate, keeping the thinned snapshots; -> (known carries, counts, pos,
    snapshot buffers)."""
    n_kc, k, lanes = loop.n_kc, loop.k, loop.lanes
    kf, n_kl = forward_slots(k), len(res.klaned)
    slots = iota((k,), 0, COUNT)

    def step(lan, carry):
        inv = res.per_lane(h, lan)[2]
        kc, (t, s, pos), bufs = carry[:n_kc], carry[n_kc:n_kc + 3], carry[n_kc + 3:]
        full = eq(t, mul(s, kf))
        s = select(full, mul(s, 2), s)
        pos = select(logical_and(full, ne(bitwise_and(pos, sub(s, 1)), 0)), -1, pos)
        store = eq(bitwise_and(t, sub(s, 1)), 0)
        slot = select(store, argmin(pos, 0), np.int64(k))
        pos = select(eq(slots, slot), t, pos)
        bufs = [_put(b, slot, v) for b, v in zip(bufs, kc)]
        return loop.advanced(inv, kc) + [add(t, 1), s, pos] + bufs, []

    def test(lan, carry):
        return eval_region(until, res.kcaps + lan[:n_kl] + carry[:n_kc])[0]

    types = [loops.per_lane(type_of_value(v), lanes) for v in kinit]
    bufs = [zeros(t.with_shape(lanes + (k + 1,) + t.shape)) for t in types]
    marks = [_laned_full((), lanes, 0), _laned_full((), lanes, 1), _laned_full((k,), lanes, -1)]
    outs = iterate_flat(step, test, kinit + marks + bufs, max_steps=loop.params["max_steps"],
                        lanes=lanes, shown=loop.params["shown"],
                        together=loop.params["together"], laned=res.laned())
    n_b = len(bufs)
    return outs[:n_kc], outs[n_kc + 3 + n_b], outs[n_kc + 2], outs[n_kc + 3:n_kc + 3 + n_b]


def _slot_zero(b: Any, lanes: tuple) -> Any:
    """b[..., 0, ...]: the snapshot in slot 0 (the first carry) of every lane."""
    shape = type_of_value(b).shape
    n = len(lanes)
    row = dynamic_slice(b, [np.int64(0)] * len(shape), lanes + (1,) + shape[n + 1:])
    return reshape(row, lanes + shape[n + 1:])


def _linear_forward(loop: _Loop, h: loops.Hoisted, r: _Res, tangents: list, n_ucaps: int,
                    n_f: int) -> list:
    """The linear map itself: each lane's loop again from its first carry, for its own
    count of steps, the known step giving each unknown step its residuals."""
    n_kc, n_l = loop.n_kc, len(r.laned())
    ucaps_t, uinit = tangents[:n_ucaps], tangents[n_f:]

    def step(lan, carry):
        kl, intensive, inv = r.per_lane(h, lan)
        j, kc, uc = carry[0], carry[1:1 + n_kc], carry[1 + n_kc:]
        outs = loop.known(inv, kc)
        res = loops.residual_args(loop.split, r.kcaps, kl, intensive, outs[n_kc:])
        u = eval_region(renamed(loop.split.unknown_step), res + ucaps_t + lan[n_l + 1:] + uc)
        return [add(j, 1)] + outs[:n_kc] + u, []

    first = [_slot_zero(b, loop.lanes) for b in r.bufs]
    outs = iterate_flat(step, lambda lan, carry: ge(carry[0], lan[n_l]),
                        [_laned_full((), loop.lanes, 0)] + first + uinit,
                        max_steps=UNBOUNDED, lanes=loop.lanes, shown=loop.params["shown"],
                        together=loop.params["together"],
                        laned=r.laned() + r.counts + tangents[n_ucaps:n_f])
    return outs[1 + n_kc:1 + n_kc + len(uinit)]


def _linear_backward(loop: _Loop, h: loops.Hoisted, r: _Res, fixed_t: list[Type],
                     n_ucaps: int, cts: list) -> list:
    """The transpose: per lane, each step from the last to the first reversed by the
    online schedule; -> the cotangents of the tangents."""
    from ..passes.transpose import backward_pass

    lanes, n_kc, n_b, n_f = loop.lanes, loop.n_kc, len(r.bufs), len(fixed_t)
    linear = [False] * len(loop.split.kinds) + [True] * (n_f + len(cts))

    def step(lan, carry):
        kl, intensive, inv = r.per_lane(h, lan)
        i, pos, bufs = carry[0], carry[1], carry[2:2 + n_b]
        acc, ctc = carry[2 + n_b:2 + n_b + n_f], carry[2 + n_b + n_f:]
        pos = select(gt(pos, i), -1, pos)  # the steps above i are reversed: free
        slot = argmax(pos, 0)
        cur = [_row(b, slot) for b in bufs]
        cur, pos, bufs = _advance(loop, inv, cur, pos, bufs, _row(pos, slot), i)
        outs = loop.known(inv, cur)
        res = loops.residual_args(loop.split, r.kcaps, kl, intensive, outs[n_kc:])
        d = backward_pass(renamed(loop.split.unknown_step), linear, res, ctc)
        acc = [instantiate(add_tangents(a, g)) for a, g in zip(acc, d[:n_f])]
        return [sub(i, 1), pos] + bufs + acc + [instantiate(g) for g in d[n_f:]], []

    acc = [zeros(t.with_shape(lanes + t.shape) if j < n_ucaps else t)
           for j, t in enumerate(fixed_t)]
    outs = iterate_flat(step, lambda lan, carry: lt(carry[0], 0),
                        [sub(r.counts[0], 1), r.pos[0]] + r.bufs + acc + cts,
                        max_steps=UNBOUNDED, lanes=lanes, shown=loop.params["shown"],
                        together=loop.params["together"],
                        laned=r.laned())
    acc = outs[2 + n_b:2 + n_b + n_f]
    shared = [reduce_sum(a, tuple(range(len(lanes)))) for a in acc[:n_ucaps]]
    return shared + acc[n_ucaps:] + outs[2 + n_b + n_f:2 + n_b + n_f + len(cts)]


def _advance(loop: _Loop, inv: list, cur: list, pos: Any, bufs: list, start: Any,
             target: Any) -> tuple[list, Any, list]:
    """The known carries at step `target` from those at step `start`, keeping the
    bisection points on the way in free slots (the others go to the scratch slot k)."""
    n_kc, k = loop.n_kc, loop.k
    slots = iota((k,), 0, COUNT)
    end = add(target, 1)

    def step(lan, carry):
        q, nxt, pos = carry[:3]
        c, b = carry[3:3 + n_kc], carry[3 + n_kc:]
        c = loop.advanced(inv, c)
        q = add(q, 1)
        hit = eq(q, nxt)
        free = eq(reduce_min(pos, (0,)), -1)
        store = logical_and(logical_and(hit, lt(q, target)), free)
        slot = select(store, argmin(pos, 0), np.int64(k))
        pos = select(eq(slots, slot), q, pos)
        b = [_put(x, slot, v) for x, v in zip(b, c)]
        nxt = select(hit, add(q, shift_right(sub(end, q), 1)), nxt)
        return [q, nxt, pos] + c + b, []

    first = add(start, shift_right(sub(end, start), 1))
    outs = iterate_flat(step, lambda lan, carry: ge(carry[0], target),
                        [start, first, pos] + cur + bufs, max_steps=UNBOUNDED)
    return outs[3:3 + n_kc], outs[2], outs[3 + n_kc:3 + n_kc + len(bufs)]
