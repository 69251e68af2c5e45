"""cond (a branch chosen at run time) and stop_gradient.

cond's operands, closed form: (captures..., pred, operands...); its two
regions, `branches = (if_true, if_false)`, each take (captures..., operands...).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ad_util import UndefinedPrimal, Zero, is_undefined, live, nonzero
from .tangents import instantiate
from ..interpret import eval_region
from ..ir import Region, Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, bind1, trace_flat, type_of_value, using
from .elementwise import logical_not, select
from .shape import broadcast_in_dim, materialize

cond_p = Primitive("cond")
stop_gradient_p = Primitive("stop_gradient")


def cond_operands(args: Sequence[Any], k: int):
    """-> (captures, predicate, operands) of a closed cond."""
    return list(args[:k]), args[k], list(args[k + 1:])


@cond_p.def_rule("shape")
def _cond_shape(*types: Type, branches, num_captures) -> list[Type]:
    caps, pred, ops = cond_operands(types, num_captures)
    if pred.dtype.kind != "b" or pred.shape != ():
        raise TypeError(f"cond: the predicate must be a bool scalar, got {pred}")
    for b in branches:
        if b.in_types != caps + ops:
            raise TypeError("cond: a branch's params do not match the operands")
    if branches[0].out_types != branches[1].out_types:
        raise TypeError("cond: the branches return different types")
    return branches[0].out_types


@cond_p.def_rule("impl")
def _cond_impl(*args, branches, num_captures):
    caps, pred, ops = cond_operands(args, num_captures)
    return eval_region(branches[0] if pred else branches[1], caps + ops)


# ------------------------------------------------------------- jvp


@cond_p.def_rule("jvp")
def _cond_jvp(primals, tangents, *, branches, num_captures):
    from ..passes.jvp import jvp_region

    caps, pred, ops = cond_operands(primals, num_captures)
    tans = tangents[:num_captures] + tangents[num_captures + 1:]
    nz = nonzero(tans)
    probes = [jvp_region(b, nz) for b in branches]
    out_nz = [any(x) for x in zip(*(m for _, m in probes))]
    # a branch whose tangents are nonzero where the other's are already is final as probed
    new = tuple(r if m == out_nz else jvp_region(b, nz, out_nz)[0]
                for b, (r, m) in zip(branches, probes))
    outs = bind(cond_p, pred, *caps, *ops, *live(tans), branches=new, num_captures=0)
    n = len(branches[0].outputs)
    it = iter(outs[n:])
    return outs[:n], [next(it) if z else Zero(t) for z, t in zip(out_nz,
                                                                 branches[0].out_types)]


# ------------------------------------------------------------- vmap


@cond_p.def_rule("batch")
def _cond_batch(size, args, dims, *, branches, num_captures):
    from ..passes.vmap import batch_eval, lanes_taking
    caps, pred, ops = cond_operands(args, num_captures)
    vdims = dims[:num_captures] + dims[num_captures + 1:]
    if dims[num_captures] is None:
        from ..passes.vmap import batch_region

        new = tuple(batch_region(b, size, vdims, True)[0] for b in branches)
        outs = bind(cond_p, pred, *caps, *ops, branches=new, num_captures=0)
        return outs, [0] * len(outs)
    # a predicate per lane: run both branches on every lane and pick per lane (a check in
    # a branch fails in the lanes that take it only)
    results = []
    for b, taken in zip(branches, (pred, logical_not(pred))):
        with lanes_taking(taken):
            outs, ods = batch_eval(b, size, caps + ops, vdims)
        results.append([materialize(o, d, size) for o, d in zip(outs, ods)])
    picked = []
    for a, b in zip(*results):
        shape = type_of_value(a).shape
        picked.append(select(broadcast_in_dim(pred, shape, (0,)), a, b))
    return picked, [0] * len(picked)


# ------------------------------------------------------------- reverse mode


@cond_p.def_rule("partial_eval")
def _cond_partial_eval(pe, unknowns, *args, branches, num_captures):
    from ..passes.partial_eval import partial_eval_region

    if unknowns[num_captures]:
        return pe.default_rule(cond_p, unknowns, args, dict(branches=branches,
                                                            num_captures=num_captures))
    caps, pred, ops = cond_operands(args, num_captures)
    vals = caps + ops
    unk = unknowns[:num_captures] + unknowns[num_captures + 1:]
    probes = [partial_eval_region(b, unk) for b in branches]
    out_unk = [any(x) for x in zip(*(p.out_unknowns for p in probes))]
    # a branch whose unknown outputs are the union already is split as it must be
    splits = [p if p.out_unknowns == out_unk else partial_eval_region(b, unk, out_unk)
              for b, p in zip(branches, probes)]
    res_types = [s.known.out_types[len(s.known.outputs) - s.num_res:] for s in splits]
    known_vals = [v for v, u in zip(vals, unk) if not u]
    unknown_vals = [v for v, u in zip(vals, unk) if u]

    def known_branch(i: int) -> Region:
        def run(*xs):
            outs = eval_region(splits[i].known, xs)
            n_out = len(outs) - splits[i].num_res
            pads = [[instantiate(Zero(t)) for t in rt] for rt in res_types]
            pads[i] = outs[n_out:]
            return outs[:n_out] + [r for group in pads for r in group]
        return trace_flat(run, splits[i].known.in_types)

    def unknown_branch(i: int) -> Region:
        offsets = np.cumsum([0] + [s.num_res for s in splits])

        def run(*xs):
            mine = list(xs[offsets[i]:offsets[i + 1]])
            return eval_region(splits[i].unknown, mine + list(xs[offsets[-1]:]))
        return trace_flat(run, [t for rt in res_types for t in rt] + [
            t for t, u in zip(branches[0].in_types, unk) if u])

    with using(pe.known):
        k_outs = bind(cond_p, pred, *known_vals, branches=(known_branch(0), known_branch(1)),
                      num_captures=0)
    n_known = len(out_unk) - sum(out_unk)
    residuals = k_outs[n_known:]
    with using(pe.unknown):
        u_outs = bind(cond_p, pred, *residuals, *unknown_vals,
                      branches=(unknown_branch(0), unknown_branch(1)), num_captures=0)
    k_it, u_it = iter(k_outs[:n_known]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_unk]


@cond_p.def_rule("transpose")
def _cond_transpose(cts, *args, branches, num_captures):
    from ..passes.transpose import transpose_region

    caps, pred, ops = cond_operands(args, num_captures)
    if is_undefined(pred):
        raise TypeError("cond: the predicate cannot be linear")
    vals = caps + ops
    linear = [isinstance(v, UndefinedPrimal) for v in vals]
    new = tuple(transpose_region(b, linear)[0] for b in branches)
    nonlinear = [v for v in vals if not isinstance(v, UndefinedPrimal)]
    ct_vals = [instantiate(c) for c in cts]
    outs = iter(bind(cond_p, pred, *nonlinear, *ct_vals, branches=new, num_captures=0))
    result = [next(outs) if lin else None for lin in linear]
    return result[:num_captures] + [None] + result[num_captures:]


# ------------------------------------------------------------- stop_gradient

stop_gradient_p.def_rule("shape", lambda x: [x])
stop_gradient_p.def_rule("impl", lambda x: [x])
stop_gradient_p.def_rule("jvp", lambda primals, tangents: (
    [bind1(stop_gradient_p, primals[0])], [Zero(type_of_value(primals[0]))]))
stop_gradient_p.def_rule("batch", lambda size, args, dims: ([bind1(stop_gradient_p, args[0])], dims))
stop_gradient_p.def_rule("transpose", NOT_LINEAR)


