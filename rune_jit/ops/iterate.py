"""iterate: a while loop that runs its step until a test holds, at most max_steps times.

    def iterate(step, until, init, max_steps):      # the meaning, per lane
        carry, n = init, 0
        while not until(carry):
            if n == max_steps:
                raise IterateError(...)
            carry, ys[n] = step(carry)
            n += 1
        return carry, n, ys

Closed form: operands (captures..., init...); regions `step` (captures...,
carries...) -> (carries..., ys...) and `until` (captures..., carries...) ->
bool[*lanes]. Outputs: carries, the steps taken per lane (int64[*lanes]), and
one tape per y, of capacity max_steps rows (row n holds step n's y; rows of
steps not taken stay zero). The user's iterate has no ys; reverse mode saves
its residuals there.

Under vmap the loop has lanes: every carry leads with the lane axes, `until`
gives a bool per lane, and a lane whose test holds keeps its carry (bit for
bit) while the others run. The error names the first lane still running.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tree
from ..ad_util import Zero, instantiate
from ..errors import IterateError, iterate_message
from ..interpret import eval_region
from ..ir import Eqn, Region, Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, trace_regions, type_of_value, using
from . import loops
from .scan import scan_flat
from .shape import moveaxis

iterate_p = Primitive("iterate", traits=frozenset({"loop", "effect"}))
COUNT = np.dtype(np.int64)


def _split(args, params):
    k = params["num_captures"]
    return list(args[:k]), list(args[k:])


# ------------------------------------------------------------- binding


def iterate_flat(step_fn: Callable, until_fn: Callable, init: list, *, max_steps: int,
                 lanes: tuple = ()) -> list:
    """Bind an iterate of Python functions over flat carries: `step_fn(carry) ->
    (carry, ys)`, `until_fn(carry) -> bool[*lanes]`; -> carry + [counts] + tapes."""
    types = [type_of_value(c) for c in init]
    nc = len(init)

    def step(*c):
        out_c, ys = step_fn(list(c))
        return list(out_c) + list(ys)

    (s, u), caps = trace_regions([step, lambda *c: [until_fn(list(c))]], [types, types])
    return bind(iterate_p, *caps, *init, step=s, until=u, num_carry=nc, max_steps=max_steps,
                lanes=tuple(lanes), num_captures=len(caps))


def iterate(step: Callable, init: Any, *, until: Callable, max_steps: int) -> Any:
    """Apply `step` to the carry until `until(carry)` holds; at most `max_steps` steps."""
    from ..api import as_value, flatten_args, leaf_type

    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or (
            max_steps < 1):
        raise ValueError(f"iterate: max_steps must be a positive int, got {max_steps!r}")
    leaves, init_tree, _ = flatten_args(init, "init")
    types = [leaf_type(x)[0] for x in leaves]
    weak = [leaf_type(x)[1] for x in leaves]
    seen: dict = {}

    def step_fn(carry):
        out, out_tree, _ = flatten_args(step(tree.unflatten(init_tree, carry)), "carry")
        seen["carry"] = (out_tree, [leaf_type(c)[0] for c in out])
        return [as_value(c) for c in out], []

    def until_fn(carry):
        out, _, _ = flatten_args(until(tree.unflatten(init_tree, carry)), "until")
        t = leaf_type(out[0])[0] if len(out) == 1 else None
        if t is None or t.dtype != np.dtype(bool) or t.shape != ():
            got = t if t is not None else f"{len(out)} values"
            raise TypeError(f"iterate: until must return a bool scalar, got {got}")
        return as_value(out[0])

    from ..trace import trace_flat

    trace_flat(lambda *c: step_fn(list(c))[0], types)
    vals = [as_value(x) for x in leaves]
    out_tree, out_types = seen["carry"]
    if loops.promotable(types, weak, out_types):
        vals = [np.asarray(v, t.dtype) for v, t in zip(vals, out_types)]
        types = out_types
    loops.check_carry("iterate", init_tree, types, out_tree, out_types)
    outs = iterate_flat(step_fn, until_fn, vals, max_steps=int(max_steps))
    return tree.unflatten(init_tree, outs[:len(vals)])


# ------------------------------------------------------------- meaning


@iterate_p.def_rule("shape")
def _iterate_shape(*types: Type, step, until, num_carry, max_steps, lanes, num_captures):
    caps, init = types[:num_captures], list(types[num_captures:])
    if step.in_types != list(caps) + init or until.in_types != list(caps) + init:
        raise TypeError("iterate: the regions' params do not match the operands")
    if step.out_types[:num_carry] != init:
        raise TypeError("iterate: the step returns carries of other types than init")
    if until.out_types != [Type(np.dtype(bool), tuple(lanes))]:
        raise TypeError(f"iterate: until must give bool{list(lanes)}, got {until.out_types}")
    if any(t.shape[:len(lanes)] != tuple(lanes) for t in init + step.out_types[num_carry:]):
        raise TypeError(f"iterate: carries and ys must lead with the lane axes {lanes}")
    tapes = [t.with_shape((max_steps,) + t.shape) for t in step.out_types[num_carry:]]
    return init + [Type(COUNT, tuple(lanes))] + tapes


def _held(mask: np.ndarray, new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """new where the lane runs, old where it is done (lanes lead the value's axes)."""
    m = mask.reshape(mask.shape + (1,) * (new.ndim - mask.ndim))
    return np.where(m, new, old)


@iterate_p.def_rule("impl")
def _iterate_impl(*args, step, until, num_carry, max_steps, lanes, num_captures):
    caps, carry = list(args[:num_captures]), list(args[num_captures:])
    tapes = [np.zeros((max_steps,) + t.shape, t.dtype) for t in step.out_types[num_carry:]]
    counts = np.zeros(lanes, COUNT)
    running = ~eval_region(until, caps + carry)[0]
    n = 0
    while running.any() and n < max_steps:
        out = eval_region(step, caps + carry)
        carry = [_held(running, new, old) for new, old in zip(out[:num_carry], carry)]
        for tape, y in zip(tapes, out[num_carry:]):
            tape[n] = y
        counts += running
        n += 1
        running = running & ~eval_region(until, caps + carry)[0]
    if running.any():
        lane = loops.lane_index(int(np.argmax(running.reshape(-1))), tuple(lanes))
        raise IterateError(iterate_message(max_steps, lane))
    return carry + [counts] + tapes


# ------------------------------------------------------------- jvp


@iterate_p.def_rule("jvp")
def _iterate_jvp(primals, tangents, **params):
    from ..passes.jvp import jvp_region

    step, until, nc = params["step"], params["until"], params["num_carry"]
    caps, init = _split(primals, params)
    tcaps, tinit = _split(tangents, params)
    nz = lambda ts: [not isinstance(t, Zero) for t in ts]  # noqa: E731
    ny = len(step.outputs) - nc
    nz_carry = loops.fixpoint(nz(tinit), lambda m: jvp_region(step, nz(tcaps) + m)[1][:nc])
    jstep, out_nz = jvp_region(step, nz(tcaps) + nz_carry, nz_carry + [False] * ny)
    live_tcaps = loops.pick(tcaps, nz(tcaps))
    n_tc = sum(nz_carry)

    def step_fn(carry):
        outs = eval_region(jstep, caps + carry[:nc] + live_tcaps + carry[nc:])
        return outs[:nc] + outs[nc + ny:nc + ny + n_tc], outs[nc:nc + ny] + outs[nc + ny + n_tc:]

    def until_fn(carry):
        return eval_region(until, caps + carry[:nc])[0]

    tinit_live = [instantiate(t) for t, m in zip(tinit, nz_carry) if m]
    outs = iterate_flat(step_fn, until_fn, init + tinit_live, max_steps=params["max_steps"],
                        lanes=params["lanes"])
    carry, tcarry = outs[:nc], outs[nc:nc + n_tc]
    counts, tapes, ttapes = outs[nc + n_tc], outs[nc + n_tc + 1:nc + n_tc + 1 + ny], outs[
        nc + n_tc + 1 + ny:]
    types = _iterate_shape(*[type_of_value(v) for v in primals], **params)
    tout = loops.merge(nz_carry + [False] + out_nz[nc:], tcarry + ttapes,
                       [Zero(t) for t in types])
    return carry + [counts] + tapes, tout


# ------------------------------------------------------------- vmap


@iterate_p.def_rule("batch")
def _iterate_batch(size, args, dims, **params):
    """Every carry gets the lane axis: lanes stop on their own tests."""
    from ..passes.vmap import batch_region, materialize

    step, until, nc = params["step"], params["until"], params["num_carry"]
    caps, init = _split(args, params)
    cdims, idims = _split(dims, params)
    bstep = batch_region(step, size, cdims + [0] * nc, True)[0]
    buntil = batch_region(until, size, cdims + [0] * nc, True)[0]

    def step_fn(carry):
        outs = eval_region(bstep, caps + carry)
        return outs[:nc], outs[nc:]

    def until_fn(carry):
        return eval_region(buntil, caps + carry)[0]

    init = [materialize(c, d, size) for c, d in zip(init, idims)]
    outs = iterate_flat(step_fn, until_fn, init, max_steps=params["max_steps"],
                        lanes=(size,) + tuple(params["lanes"]))
    tapes = [moveaxis(t, 1, 0) for t in outs[nc + 1:]]
    return outs[:nc + 1] + tapes, [0] * len(outs)


# ------------------------------------------------------------- reverse mode


@iterate_p.def_rule("partial_eval")
def _iterate_partial_eval(pe, unknowns, *args, **params):
    """A known iterate that saves the extensive residuals on its tapes, then a counted
    scan of the unknown step over those tapes, each lane for its own step count."""
    from ..passes.partial_eval import partial_eval_region

    step, until, nc = params["step"], params["until"], params["num_carry"]
    caps, init = _split(args, params)
    ucaps, uinit = _split(unknowns, params)
    split = loops.split_loop(step, len(caps), 0, nc, ucaps, uinit, [])
    test = partial_eval_region(until, ucaps + split.unk_carry)
    if any(test.out_unknowns) or test.num_res:
        raise NotImplementedError("iterate: until depends on a value being differentiated")
    kcaps = loops.pick(caps, ucaps, False)
    kinit = loops.pick(init, split.unk_carry, False)
    n_kc, ny = len(kinit), len(step.outputs) - nc
    with using(pe.known):
        hoisted = eval_region(split.hoisted, kcaps)
        intensive, invariants = hoisted[:split.num_intensive], hoisted[split.num_intensive:]

        def known_step(carry):
            outs = eval_region(split.known_step, invariants + carry)
            return outs[:n_kc], outs[n_kc:]

        k_outs = iterate_flat(known_step, lambda c: eval_region(test.known, kcaps + c)[0], kinit,
                              max_steps=params["max_steps"], lanes=params["lanes"])
    k_carry, counts = k_outs[:n_kc], k_outs[n_kc]
    k_tapes = k_outs[n_kc + 1:]
    n_ky = sum(not u for u in split.unk_ys)
    u_outs = _unknown_scan(pe, split, params, kcaps, intensive, caps, ucaps, init, counts,
                           k_tapes[n_ky:])
    n_uc = sum(split.unk_carry)
    carry = loops.merge(split.unk_carry, u_outs[:n_uc], k_carry)
    assert len(split.unk_ys) == ny
    return carry + [counts] + loops.merge(split.unk_ys, u_outs[n_uc:], k_tapes[:n_ky])


def _unknown_scan(pe, split, params, kcaps, intensive, caps, ucaps, init, counts, tapes):
    u_caps = loops.pick(caps, ucaps)
    u_init = [instantiate(v) for v in loops.pick(init, split.unk_carry)]
    n_uc = len(u_init)
    with using(pe.unknown):
        def unknown_step(active, carry, rows):
            res = loops.residual_args(split, kcaps, intensive, None, rows)
            new = eval_region(split.unknown_step, res + u_caps + carry)
            held = [hold(active, a, b) for a, b in zip(new[:n_uc], carry)]
            return held, [hold(active, y, instantiate(Zero(type_of_value(y))))
                          for y in new[n_uc:]]

        return scan_flat(unknown_step, u_init, tapes, length=params["max_steps"],
                         counts=counts)


def hold(active: Any, new: Any, old: Any) -> Any:
    """new in the lanes that run, old in the lanes that are done."""
    from .elementwise import select
    from .shape import broadcast_in_dim

    shape = type_of_value(new).shape
    mask = broadcast_in_dim(active, shape, tuple(range(type_of_value(active).ndim)))
    return select(mask, new, old)


iterate_p.def_rule("transpose", NOT_LINEAR)


def iterate_dce(eqn: Eqn, used: list[bool]) -> Eqn:
    """Drop the tapes nobody reads; carries stay (until reads them)."""
    from ..passes.simplify import dce

    nc = eqn.params["num_carry"]
    step = eqn.params["step"]
    keep_y = used[nc + 1:]
    body = dce(Region(step.params, step.eqns,
                      step.outputs[:nc] + tuple(loops.pick(step.outputs[nc:], keep_y))))
    outputs = list(eqn.outputs[:nc + 1]) + loops.pick(eqn.outputs[nc + 1:], keep_y)
    return Eqn(iterate_p, eqn.inputs, tuple(outputs), {**eqn.params, "step": body})


iterate_p.def_rule("dce", iterate_dce)
