"""Structured primitives that are not loops: cond as a branch; remat, root, root's
tangent solve (the user's solver), the custom derivative calls, checkpointed scans and
stop_gradient as their bodies (what reverse mode recomputes or differentiates is in the
IR already: compiled code computes each body once)."""

from __future__ import annotations

from ....ops.control import cond_operands, cond_p, stop_gradient_p
from ....ops.custom import FORWARD, custom_jvp_call_p, custom_lin_p, custom_vjp_call_p
from ....ops.remat import name_p, remat_p
from ....ops.root import root_p
from ....ops.checkpointed import checkpointed_p
from ....ops.checkpointed_scan import checkpointed_lin_p
from ....ops.tangent_solve import tangent_solve_p
from ..codegen.lower import LOWERINGS, lowering
from ..codegen.values import Array, Scalar


@lowering(cond_p)
def _cond_lower(lw, args, out_types, *, branches, num_captures):
    """A branch; outputs meet in registers (phis) or in one buffer both branches write."""
    caps, pred, ops = cond_operands(args, num_captures)
    dests = [None if t.shape == () else lw.out_buffer(i, t) for i, t in enumerate(out_types)]

    def run(region):
        def body():
            outs = lw.lower_region(region, caps + ops)
            regs = []
            for v, d in zip(outs, dests):
                if d is None:
                    regs.append(lw.scalar(v))
                else:
                    lw.store(v, d)
            return regs
        return body

    regs = iter(lw.fn.if_else(lw.scalar(pred), run(branches[0]), run(branches[1])))
    return [Scalar(t, next(regs)) if d is None else Array(t, d)
            for t, d in zip(out_types, dests)]


LOWERINGS[checkpointed_p] = lambda lw, args, out_types, *, body, **_: lw.lower_region(
    body, list(args))
LOWERINGS[checkpointed_lin_p] = lambda lw, args, out_types, *, forward, **_: lw.lower_region(
    forward, list(args))
LOWERINGS[stop_gradient_p] = lambda lw, args, out_types: args
LOWERINGS[remat_p] = lambda lw, args, out_types, *, body, **_: lw.lower_region(
    body, list(args))
LOWERINGS[name_p] = lambda lw, args, out_types, *, name: args


LOWERINGS[root_p] = lambda lw, args, out_types, *, solve, **_: lw.lower_region(
    solve, list(args))
LOWERINGS[tangent_solve_p] = lambda lw, args, out_types, *, solves, **_: lw.lower_region(
    solves[0], list(args))


def _lower_fun(lw, args, out_types, *, fun, **_):
    return lw.lower_region(fun, list(args))


LOWERINGS[custom_jvp_call_p] = _lower_fun
LOWERINGS[custom_vjp_call_p] = _lower_fun


@lowering(custom_lin_p)
def _custom_lin(lw, *args, **params):
    raise TypeError(FORWARD)  # forward mode reached a custom_vjp: only reverse mode can
