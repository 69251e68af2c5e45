"""Scan fission: the parts of a step that need not be in the loop leave it.

In `c' = c * 0.999999 + sin(x)` only the multiply-add is a recurrence; `sin(x)`
can be computed for every row at once, vectorized, before the loop. Fission
splits each scan's step by partial evaluation with the carries unknown: the
known part (captures and rows only) runs as a map over all rows (the step's
vmap along the scan axis), and the loop keeps the rest, reading the map's
results as rows. What the step computes from captures alone is computed once,
before the loop. And a carry that only sums what each step adds to it (a
gradient with respect to a weight, in reverse mode) becomes a sum after the
loop: for a product, as one product over the stacked operands, so 2000 rank-1
updates of a matrix become one matrix product, when that pays (`_leaves_loop`: the
stacked operands cost memory a step, the carry once). Results are the same values
summed in another order (and a transcendental may round differently
vectorized: see docs/accuracy.md).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

from ....interpret import eval_region
from ....ir import Eqn, Literal, Region, Var, map_regions
from ....trace import bind, trace_flat
from ....passes import at_eqn
from ....passes.partial_eval import partial_eval_region
from ....ops.shape import materialize
from ....passes.vmap import batch_eval, hiding_axis


def fission(region: Region) -> Region:
    """`region` (closed) with every scan in it, nested ones too, split where it pays."""
    return trace_flat(lambda *args: _run(region, list(args)), region.in_types)


def _run(region: Region, args: list) -> list:
    from ....ops.scan import scan_p

    env = dict(zip(region.params, args))

    def read(a):
        return a.value if isinstance(a, Literal) else env[a]

    for eqn in region.eqns:
        ins, params = eqn.closed
        vals = [read(a) for a in ins]
        params = map_regions(params, fission)
        with at_eqn("scan fission", eqn):
            if eqn.prim is scan_p and not params["counted"] and params["length"] > 0:
                outs = _sum_accumulators(vals, params)
            else:
                outs = bind(eqn.prim, *vals, **params)
        env.update(zip(eqn.outputs, outs))
    return [read(o) for o in region.outputs]


def _worth_it(step: Region, known: Region) -> bool:
    """Costly work to map, in a step that does not recompute on purpose (remat). A loop
    overlaps cheap arithmetic that does not read the carry with the recurrence for free,
    but a transcendental call or a product is best vectorized."""
    from ....ops.remat import remat_p

    return (any("costly" in e.prim.traits for e in known.eqns)
            and not any(e.prim is remat_p for e in step.eqns))


def _ordered(region: Region) -> bool:
    return any("ordered" in e.prim.traits or any(map(_ordered, e.regions))
               for e in region.eqns)


def _split_scan(vals: list, params: dict) -> list:
    from ....ops.loops import merge, pick
    from ....ops.scan import Layout, scan_flat, scan_p

    lay = Layout(len(vals), params)
    caps, _, _, init, xs = lay.operands(vals)
    step, nc, n = params["step"], lay.num_carry, params["length"]
    ny = len(step.outputs) - nc
    if _ordered(step):  # a print in the step prints once per step, in order
        return bind(scan_p, *vals, **params)
    # loop-invariant code motion: what the step computes from captures alone is computed
    # once, here, and the loop captures the results instead
    hoist = partial_eval_region(step, [False] * lay.num_captures + [True] * (nc + lay.num_xs), True,
                                custom_rules=False)
    if hoist.known.eqns:
        caps, step = eval_region(hoist.known, caps), hoist.unknown
        params = {**params, "step": step, "num_captures": len(caps)}
        vals = caps + init + xs
    split = partial_eval_region(step, [False] * len(caps) + [True] * nc + [False] * lay.num_xs,
                                [True] * nc + [False] * ny, custom_rules=False)
    if not _worth_it(step, split.known):
        return bind(scan_p, *vals, **params)
    with hiding_axis():  # its lanes are the loop's steps
        mapped, dims = batch_eval(split.known, n, caps + xs, [None] * len(caps) + [0] * lay.num_xs)
    n_known = len(split.known.outputs) - split.num_res
    known_ys = [materialize(v, d, n) for v, d in zip(mapped[:n_known], dims[:n_known])]
    res, res_dims = mapped[n_known:], dims[n_known:]
    per_row = [d is not None for d in res_dims]
    invariant = pick(res, per_row, False)

    def step_fn(lan, carry, rows):
        outs = eval_region(split.unknown, merge(per_row, rows, invariant) + carry)
        return outs[:nc], outs[nc:]

    outs = scan_flat(step_fn, init, pick(res, per_row), length=n, reverse=params["reverse"])
    return outs[:nc] + merge(split.out_unknowns[nc:], outs[nc:], known_ys)


# ------------------------------------------------------------- accumulators


def _sum_accumulators(vals: list, params: dict) -> list:
    """Carries updated as acc' = acc + g, read nowhere else, leave the loop where that
    pays (`_leaving`): each step returns g (or, when g is a product, its two operands) as
    ys, and after the loop acc = init + the sum over steps (the product, contracting the
    step axis too)."""
    from ....ops.scan import Layout

    lay = Layout(len(vals), params)
    step = params["step"]
    caps, _, _, init, xs = lay.operands(vals)
    nc, ny = lay.num_carry, len(step.outputs) - lay.num_carry
    found = _accumulators(step, lay)
    # a row (or a view of one) is read whole from xs, not restacked
    rows = _row_views(step, dict(zip(step.params[lay.num_captures + nc:], xs)),
                      [a for s in found.values() for a in s.stacked()], params["length"])
    found = _leaving(step, found, rows, params["length"])
    if not found:
        return _split_scan(vals, params)
    keep = [i for i in range(nc) if i not in found]
    extra = [found[i].stacked() for i in sorted(found)]  # what each sum is made of
    # (an operand two sums share is stacked once)
    stacked_outs = list(dict.fromkeys(a for group in extra for a in group if a not in rows))
    outputs = [step.outputs[i] for i in keep] + list(step.outputs[nc:]) + stacked_outs
    carry_params = step.params[lay.num_captures:lay.num_captures + nc]
    params_ = (step.params[:lay.num_captures] + tuple(carry_params[i] for i in keep)
               + step.params[lay.num_captures + nc:])
    from ....passes.simplify import dce

    body = dce(Region(params_, step.eqns, tuple(outputs)))
    new = {**params, "step": body, "num_carry": len(keep)}
    outs = _split_scan(caps + [init[i] for i in keep] + xs, new)
    carries = dict(zip(keep, outs[:len(keep)]))
    stacked = {**rows, **dict(zip(stacked_outs, outs[len(keep) + ny:]))}
    for i in sorted(found):
        group = [stacked[a] for a in extra.pop(0)]
        carries[i] = _summed(init[i], found[i], group, params["reverse"])
    return [carries[i] for i in range(nc)] + outs[len(keep):len(keep) + ny]


def _accumulators(step: Region, lay) -> dict:
    """carry index -> the equation computing what each step adds to it."""
    from ....ops.elementwise import add_p

    uses: Counter = Counter(a for e in step.eqns for a in e.inputs if isinstance(a, Var))
    uses.update(c for e in step.eqns for c in e.captures)
    uses.update(o for o in step.outputs if isinstance(o, Var))
    made = {v: e for e in step.eqns for v in e.outputs}
    found: dict[int, Summand] = {}
    for i in range(lay.num_carry):
        acc, out = step.params[lay.num_captures + i], step.outputs[i]
        add = made.get(out)
        if add is None or add.prim is not add_p or uses[acc] != 1 or acc not in add.inputs:
            continue
        g = add.inputs[1] if add.inputs[0] is acc else add.inputs[0]
        if (isinstance(g, Var) and g in made and g.type == acc.type and uses[g] == 1
                and uses[out] == 1):
            found[i] = Summand(g, made[g])
    return found


def _row_views(step: Region, rows: dict, wanted: list, n: int) -> dict:
    """`rows` (row params of `step` -> the stacked rows), with the values of `wanted`
    that are views of rows (a reshape of a row) -> those views of the stacked rows."""
    made = {v: e for e in step.eqns for v in e.outputs}
    out = dict(rows)

    def stacked(v):
        e = made.get(v)
        if v not in out and e is not None and "view" in e.prim.traits and stacked(e.inputs[0]):
            with hiding_axis():  # its lanes are the loop's steps
                (y,), (d,) = batch_eval(Region((e.inputs[0],), (e,), e.outputs), n,
                                        [out[e.inputs[0]]], [0])
            out[v] = materialize(y, d, n)
        return v in out

    for v in wanted:
        stacked(v)
    return out


# Multiply-adds a step from which a product summed after the loop, as one matrix product,
# beats the steps' own small products into the carry (measured: docs/design.md)
HOIST_FLOPS = 4096


def _leaving(step: Region, found: dict, rows: dict, length: int) -> dict:
    """The accumulators of `found` that leave the loop (`_leaves_loop`): an operand that
    one of them stacks is stacked already for the others."""
    from ....ops.loops import fixpoint, pick
    from ....ops.remat import remat_p

    recomputed = {v for e in step.eqns if e.prim is remat_p for v in e.outputs}
    summands = [found[i] for i in sorted(found)]

    def leave(mask):
        free = set(rows).union(*(s.stacked() for s in pick(summands, mask)))
        return [_leaves_loop(s, free, recomputed, length) for s in summands], None

    mask, _ = fixpoint([False] * len(summands), leave)
    return dict(zip(pick(sorted(found), mask), pick(summands, mask)))


def _leaves_loop(summand: Summand, free: set, recomputed: set, length: int) -> bool:
    """Whether to sum after the loop rather than in the carry: summed after, the values
    the sum is made of are stacked, a step's worth each step (those `free` are stacked
    already: rows); in the carry, it is one value. So it leaves when its stack is no
    larger than the carry, or when it is a product large enough to run faster as one.
    What the step recomputes (remat) is never stacked: not keeping it is what remat
    asks for."""
    new = [a for a in summand.stacked() if a not in free]
    if any(a in recomputed for a in new):
        return False
    stack = length * sum(a.type.nbytes for a in new)
    return stack <= summand.var.type.nbytes or summand.flops() >= HOIST_FLOPS


class Summand(NamedTuple):
    """What a step adds to an accumulator: `var`, an output of `eqn` (which may have
    others: a nested loop's ys, say)."""

    var: Var
    eqn: Eqn

    def is_product(self) -> bool:
        from ....ops.linalg import dot_general_p

        return self.eqn.prim is dot_general_p

    def stacked(self) -> list:
        """The step values its sum is made of: a product's two operands, else itself."""
        return list(self.eqn.inputs) if self.is_product() else [self.var]

    def flops(self) -> int:
        """A product's multiply-adds a step; 0 for any other summand, whose sum after the
        loop is no faster than in it."""
        if not self.is_product():
            return 0
        lhs, (contract, _) = self.eqn.inputs[0].type, self.eqn.params["contract"]
        return self.var.type.size * math.prod(lhs.shape[a] for a in contract)


def _summed(init, summand: Summand, stacked: list, reverse: bool):
    """init + the sum over the stacked steps of what the summand was each step (the
    order of the steps does not matter to a sum, so `reverse` does not either)."""
    from ....ops.elementwise import add
    from ....ops.linalg import dot_general
    from ....ops.reduce import reduce_sum

    if summand.is_product():
        (ca, cb), (ba, bb) = (summand.eqn.params[k] for k in ("contract", "batch"))
        up = lambda axes: tuple(a + 1 for a in axes)  # noqa: E731
        total = dot_general(stacked[0], stacked[1], ((0,) + up(ca), (0,) + up(cb)),
                            (up(ba), up(bb)))
    else:
        total = reduce_sum(stacked[0], (0,))
    return add(init, total)
