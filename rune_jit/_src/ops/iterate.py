"""iterate: a while loop that runs its step until a test holds, at most max_steps times.

    def iterate(step, until, init, max_steps):      # the meaning, for each lane
        carry, n = init, 0
        while not until(carry):
            if n == max_steps:
                raise IterateError(...)
            carry, ys[n] = step(carry)
            n += 1
        return carry, n, ys

Closed form: operands (captures..., laned..., init...); regions `step`
(captures..., laned..., carries...) -> (carries..., ys...) and `until` (same
params) -> a bool scalar, both per lane (see ops/loops.py). Outputs: carries,
the steps each lane took (int64[*lanes]), and one tape per y of capacity
max_steps rows (row n holds step n's y; rows of steps not taken stay zero). A loop
with no step limit (max_steps = ir.UNBOUNDED) has tapes of the rows it took.
The user's iterate has no ys; reverse mode saves its residuals there.

Under vmap the loop gains a lane axis: each lane stops on its own test and a
lane whose test holds keeps its carry, bit for bit, while the others run. The
error names the first lane still running, in batch order.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence

import numpy as np

from ..ad_util import live, nonzero
from .tangents import instantiate
from ..errors import IterateError, iterate_message, user_lane
from ..interpret import eval_region
from ..ir import Eqn, Region, Type, Var
from ..passes.vmap import hidden_axis, lanes_running
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, trace_regions, type_of_value, using
from . import loops
from .check import naming_step
from .scan import unknown_loop
from .shape import moveaxis

iterate_p = Primitive("iterate", traits=frozenset({"effect"}))
COUNT = np.dtype(np.int64)


def _split(args: Sequence[Any], params: dict):
    """An iterate's operands [captures..., laned..., init...] -> (captures, laned, init).
    Its regions take [captures..., laned..., carries...]; its outputs are
    [carries..., counts, tapes...]."""
    k, nl = params["num_captures"], params["num_laned"]
    return list(args[:k]), list(args[k:k + nl]), list(args[k + nl:])


# ------------------------------------------------------------- binding


def iterate_flat(step_fn: Callable, until_fn: Callable, init: list, *, max_steps: int,
                 lanes: tuple = (), shown: tuple = (), together: tuple = (),
                 laned: Sequence[Any] = ()) -> list:
    """Bind an iterate of Python functions of one lane: `step_fn(laned, carry) ->
    (carry, ys)` and `until_fn(laned, carry) -> bool`; -> carry + [counts] + tapes.
    `shown` says, per lane axis, whether it is a user's vmap (errors name the lane along
    it) or one a pass added (scan fission maps the steps of a loop: not a lane to name);
    `together`, whether `until` is the same along it (default: no axis), so that its lanes
    stop together and running out of steps names no lane along it."""
    types = [loops.per_lane(type_of_value(v), lanes) for v in [*laned, *init]]
    nl = len(laned)

    def step(*p):
        out_c, ys = step_fn(list(p[:nl]), list(p[nl:]))
        return list(out_c) + list(ys)

    (s, u), caps = trace_regions([step, lambda *p: [until_fn(list(p[:nl]), list(p[nl:]))]],
                                 [types, types])
    return bind(iterate_p, *caps, *laned, *init, step=s, until=u, num_carry=len(init),
                num_laned=nl, max_steps=max_steps, lanes=tuple(lanes), shown=tuple(shown),
                together=tuple(together) or (False,) * len(lanes), num_captures=len(caps))


# ------------------------------------------------------------- meaning


@iterate_p.def_rule("shape")
def _iterate_shape(*types: Type, step, until, num_carry, num_laned, max_steps, lanes, shown,
                   together, num_captures):
    caps, laned, init = _split(types, dict(num_captures=num_captures, num_laned=num_laned))
    lanes = tuple(lanes)
    if not len(shown) == len(together) == len(lanes):
        raise TypeError(f"iterate: {len(shown)} entries of shown and {len(together)} of "
                        f"together for the lanes {lanes}")
    if any(t.shape[:len(lanes)] != lanes for t in laned + init):
        raise TypeError(f"iterate: laned operands and carries must lead with the lanes {lanes}")
    params = caps + [loops.per_lane(t, lanes) for t in laned + init]
    if step.in_types != params or until.in_types != params:
        raise TypeError("iterate: the regions' params do not match the operands")
    if step.out_types[:num_carry] != params[len(caps) + num_laned:]:
        raise TypeError("iterate: the step returns carries of other types than init")
    if until.out_types != [Type(np.dtype(bool), ())]:
        raise TypeError(f"iterate: until must give a bool scalar, got {until.out_types}")
    tapes = [t.with_shape((max_steps,) + lanes + t.shape) for t in step.out_types[num_carry:]]
    return init + [Type(COUNT, lanes)] + tapes


def _iterate_impl(*args, step, until, num_carry, num_laned, max_steps, lanes, shown,
                  together, num_captures):
    caps, laned, carry = _split(args, dict(num_captures=num_captures, num_laned=num_laned))
    lanes = tuple(lanes)
    rows: list[list] = [[] for _ in step.out_types[num_carry:]]
    counts = np.zeros(lanes, COUNT)
    def each_lane(region: Region, n: int, values: list) -> list:
        # (a lane that stopped computes its donor's step, or its own if no one can
        # tell, discarded by `held`: its checks pass)
        with naming_step("iterate", n), (lanes_running(np.reshape(running, -1)) if lanes
                                         else contextlib.nullcontext()):
            return loops.all_lanes(region, caps, values, lanes, shown)

    running = np.ones(lanes, bool)
    running = ~each_lane(until, 0, laned + carry)[0]
    donors = loops.observable([step, until])
    n = 0
    while running.any() and n < max_steps:
        out = each_lane(step, n, loops.donated(running, laned + carry, lanes) if donors
                        else laned + carry)
        carry = [np.asarray(loops.held(running, new, old))
                 for new, old in zip(out[:num_carry], carry)]
        for tape, y in zip(rows, out[num_carry:]):
            tape.append(y)
        counts += running
        n += 1
        running = running & ~each_lane(until, n, laned + carry)[0]
    if running.any():
        lane = user_lane(int(np.argmax(running.reshape(-1))), lanes, named(shown, together))
        raise IterateError(iterate_message(max_steps, lane))
    tapes = [np.zeros((loops.rows_held(max_steps, n),) + lanes + t.shape, t.dtype)
             for t in step.out_types[num_carry:]]
    for tape, taken in zip(tapes, rows):
        tape[:len(taken)] = np.reshape(taken, (len(taken),) + tape.shape[1:])
    return carry + [counts] + tapes


# ------------------------------------------------------------- jvp


@iterate_p.def_rule("jvp")
def _iterate_jvp(primals, tangents, **params):
    until, nc = params["until"], params["num_carry"]
    caps, laned, init = _split(primals, params)
    tcaps, tlaned, tinit = _split(tangents, params)
    nl = len(laned)
    j = loops.LoopJvp(params["step"], nc, nonzero(tcaps) + nonzero(tlaned), nonzero(tinit))

    def until_fn(lan, carry):
        return eval_region(until, caps + lan[:nl] + carry[:nc])[0]

    outs = iterate_flat(j.step_fn(caps, live(tcaps), nl), until_fn, j.init(init, tinit),
                        max_steps=params["max_steps"], lanes=params["lanes"],
                        shown=params["shown"], together=params["together"],
                        laned=laned + live(tlaned))
    # the counts sit between the carries and the tapes, and have no tangent
    return j.results(outs, _iterate_shape(*[type_of_value(v) for v in primals], **params),
                     n_mid=1)


# ------------------------------------------------------------- vmap


@iterate_p.def_rule("batch")
def _iterate_batch(size, args, dims, **params):
    """The map's axis becomes the first lane axis; the per-lane regions do not change."""
    step, until, nc = params["step"], params["until"], params["num_carry"]
    caps, laned, init = _split(args, params)
    cdims, ldims, idims = _split(dims, params)
    lanes = tuple(params["lanes"])
    moved, shared, new_laned = loops.add_lane_axis(size, caps, cdims, laned + init,
                                                   ldims + idims, lanes)
    n_l = sum(moved) + len(laned)

    def regroup(lan, carry):
        return loops.merge(moved, lan[:sum(moved)], shared) + lan[sum(moved):] + carry

    def step_fn(lan, carry):
        outs = eval_region(step, regroup(lan, carry))
        return outs[:nc], outs[nc:]

    outs = iterate_flat(step_fn, lambda lan, c: eval_region(until, regroup(lan, c))[0],
                        new_laned[n_l:], max_steps=params["max_steps"],
                        lanes=(size,) + lanes, shown=(not hidden_axis(),) + params["shown"],
                        together=(_until_shared(step, until, nc, cdims + ldims, idims),)
                        + params["together"], laned=new_laned[:n_l])
    return outs[:nc + 1] + [moveaxis(t, 1, 0) for t in outs[nc + 1:]], [0] * len(outs)


def _until_shared(step: Region, until: Region, nc: int, outer: list, idims: list) -> bool:
    """Whether `until` reads nothing the map changes (its lanes stop together), given the
    dims of the captures and laned operands (`outer`) and of the carries: a carry the map
    changes is one whose init it does, or one the step computes from such a value."""
    mapped = [d is not None for d in outer]
    carries, _ = loops.fixpoint([d is not None for d in idims],
                                lambda c: (_depends(step, mapped + c)[:nc], None))
    return not _depends(until, mapped + carries)[0]


def _depends(region: Region, marked: list[bool]) -> list[bool]:
    """Which outputs of `region` an equation computes from its params that are `marked`
    (through any equation: an over-estimate)."""
    seen = {p for p, m in zip(region.params, marked) if m}
    for eqn in region.eqns:
        if any(isinstance(a, Var) and a in seen for a in eqn.closed[0]):
            seen.update(eqn.outputs)
    return [isinstance(o, Var) and o in seen for o in region.outputs]


def named(shown: Sequence[bool], together: Sequence[bool]) -> tuple[bool, ...]:
    """The lane axes along which running out of steps names the lane: a user's map's
    whose lanes stop on their own."""
    return tuple(bool(s) and not t for s, t in zip(shown, together))


# ------------------------------------------------------------- reverse mode


@iterate_p.def_rule("partial_eval")
def _iterate_partial_eval(pe, unknowns, *args, **params):
    """A known iterate that saves the extensive residuals on its tapes, then a counted
    scan of the unknown step over those tapes, each lane for its own step count."""
    from ..passes.partial_eval import partial_eval_region

    step, until, nc = params["step"], params["until"], params["num_carry"]
    caps, laned, init = _split(args, params)
    ucaps, ulaned, uinit = _split(unknowns, params)
    split = loops.split_loop(step, nc, ucaps, ulaned, uinit, [])
    test = partial_eval_region(until, ucaps + ulaned + split.unk_carry)
    if any(test.out_unknowns) or test.num_res:
        raise NotImplementedError("iterate: until depends on a value being differentiated")
    kcaps, klaned = loops.pick(caps, ucaps, False), loops.pick(laned, ulaned, False)
    kinit = loops.pick(init, split.unk_carry, False)
    lanes, n_kc = tuple(params["lanes"]), len(kinit)
    with using(pe.known):
        h = loops.hoist(split, kcaps, klaned, lanes)
        inv_shared = loops.pick(h.invariants, h.invariants_laned, False)
        inv_laned = loops.pick(h.invariants, h.invariants_laned)

        def known_step(lan, carry):
            inv = loops.merge(h.invariants_laned, lan[:len(inv_laned)], inv_shared)
            outs = eval_region(split.known_step, inv + carry)
            return outs[:n_kc], outs[n_kc:]

        def known_until(lan, carry):
            return eval_region(test.known, kcaps + lan[len(inv_laned):] + carry)[0]

        k_outs = iterate_flat(known_step, known_until, kinit, max_steps=params["max_steps"],
                              lanes=lanes, shown=params["shown"],
                              together=params["together"], laned=inv_laned + klaned)
    counts, k_tapes = k_outs[n_kc], k_outs[n_kc + 1:]
    n_ky = len(k_tapes) - split.num_extensive
    loop = dict(length=params["max_steps"], reverse=False, counts=counts)
    u_outs = unknown_loop(pe, split, h, kcaps, klaned, loops.pick(caps, ucaps),
                          loops.pick(laned, ulaned),
                          [instantiate(v) for v in loops.pick(init, split.unk_carry)],
                          k_tapes[n_ky:], [], loop)
    n_uc = sum(split.unk_carry)
    carry = loops.merge(split.unk_carry, u_outs[:n_uc], k_outs[:n_kc])
    return carry + [counts] + loops.merge(split.unk_ys, u_outs[n_uc:], k_tapes[:n_ky])


iterate_p.def_rule("transpose", NOT_LINEAR)


def iterate_dce(eqn: Eqn, used: list[bool]) -> Eqn:
    """Drop the tapes nobody reads; carries stay (until reads them). Both regions come
    out free of dead code, as `dce` expects of a rule."""
    from ..passes.simplify import dce

    nc, step = eqn.params["num_carry"], eqn.params["step"]
    keep_y = used[nc + 1:]
    body = dce(Region(step.params, step.eqns,
                      step.outputs[:nc] + tuple(loops.pick(step.outputs[nc:], keep_y))))
    outputs = list(eqn.outputs[:nc + 1]) + loops.pick(eqn.outputs[nc + 1:], keep_y)
    return eqn.rebuilt(outputs=tuple(outputs),
                       params={**eqn.params, "step": body, "until": dce(eqn.params["until"])})


iterate_p.def_rule("dce", iterate_dce)


iterate_p.def_rule("impl", loops.native_when_eager(iterate_p, _iterate_impl))
