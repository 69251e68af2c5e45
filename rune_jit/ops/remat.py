"""remat: a function that reverse mode recomputes instead of remembering.

    remat(f)(*args) == f(*args)               # the meaning, under every transformation

In reverse mode the forward pass keeps only f's arguments and captures, and
the backward pass computes f's intermediates again from them.

Closed form: operands (captures..., args...); region `body` (captures...,
args...) -> outputs....
"""

from __future__ import annotations

from typing import Callable

from .. import tree
from ..ad_util import live, nonzero
from ..interpret import eval_region
from ..ir import Region
from ..primitive import Primitive
from ..trace import bind, trace_closed, using
from . import loops
from ..tracebacks import api_boundary

remat_p = Primitive("remat")


def remat(f: Callable) -> Callable:
    """f, rematerialized in reverse mode."""
    from ..api import as_value, flatten_args, leaf_type, wraps

    @wraps(f)
    @api_boundary
    def g(*args):
        leaves, in_tree, _ = flatten_args(args, "args")
        box: dict = {}

        def flat(*xs):
            outs, box["tree"], _ = flatten_args(f(*tree.unflatten(in_tree, xs)), "output")
            return [as_value(o) for o in outs]

        body, caps = trace_closed(flat, [leaf_type(x)[0] for x in leaves])
        outs = bind(remat_p, *caps, *[as_value(x) for x in leaves], body=body,
                    num_captures=len(caps))
        return tree.unflatten(box["tree"], outs)

    return g


def _bind(args: list, body: Region) -> list:
    return bind(remat_p, *args, body=body, num_captures=0)


remat_p.def_rule("shape", lambda *types, body, num_captures: body.out_types)
remat_p.def_rule("impl", lambda *args, body, num_captures: eval_region(body, list(args)))


@remat_p.def_rule("jvp")
def _remat_jvp(primals, tangents, *, body, num_captures):
    from ..passes.jvp import jvp_region

    jbody, out_nz = jvp_region(body, nonzero(tangents))
    outs = _bind(list(primals) + live(tangents), jbody)
    n = len(body.outputs)
    return outs[:n], loops.with_zeros(out_nz, outs[n:], body.out_types)


@remat_p.def_rule("batch")
def _remat_batch(size, args, dims, *, body, num_captures):
    from ..passes.vmap import batch_region

    bbody, out_dims = batch_region(body, size, dims)
    return _bind(list(args), bbody), out_dims


@remat_p.def_rule("partial_eval")
def _remat_partial_eval(pe, unknowns, *args, body, num_captures):
    """Known side: the known outputs, with no residuals. Unknown side: the whole body
    again over all the arguments (the known ones become the residuals)."""
    from ..passes.partial_eval import partial_eval_region
    from ..passes.simplify import dce

    split = partial_eval_region(body, unknowns)
    k = split.known
    n_known = len(k.outputs) - split.num_res
    with using(pe.known):
        k_outs = _bind(loops.pick(args, unknowns, False),
                       dce(Region(k.params, k.eqns, k.outputs[:n_known])))
    u_body = dce(Region(body.params, body.eqns,
                        tuple(loops.pick(body.outputs, split.out_unknowns))))
    with using(pe.unknown):
        u_outs = _bind(list(args), u_body)
    return loops.merge(split.out_unknowns, u_outs, k_outs)


@remat_p.def_rule("transpose")
def _remat_transpose(cts, *args, body, num_captures):
    """Recompute the body's non-linear part from the saved arguments, then transpose.
    The recomputation stays a remat equation, so later passes (scan fission) know it
    is meant to be computed here, step by step, and not stored."""
    from ..ad_util import UndefinedPrimal
    from ..passes.partial_eval import partial_eval_region
    from ..passes.transpose import backward_pass

    linear = [isinstance(a, UndefinedPrimal) for a in args]
    # the body may hold loops that compute values and tangents together: split it so the
    # values are recomputed forward and only the tangent part is transposed
    split = partial_eval_region(body, linear, True)
    res = _bind(loops.pick(args, linear, False), split.known)
    cts_in = iter(backward_pass(split.unknown, [False] * split.num_res + [True] * sum(linear),
                                res, cts))
    return [next(cts_in) if lin else None for lin in linear]
