"""remat (checkpoint): a function that reverse mode recomputes instead of remembering.

    remat(f)(*args) == f(*args)               # the meaning, under every transformation

In reverse mode the forward pass keeps only f's arguments and captures, and
the backward pass computes f's intermediates again from them; a `policy` may name
intermediates worth keeping anyway (the results of matrix products, say), as
`jax.checkpoint`'s policies do.

Closed form: operands (captures..., args...); region `body` (captures...,
args...) -> outputs....
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..ad_util import live, nonzero
from ..interpret import eval_region
from ..ir import Region, Var
from ..primitive import Primitive
from ..trace import bind, bind1, using
from . import loops
from .jvp_rules import linear_jvp

remat_p = Primitive("remat")
name_p = Primitive("name")


class Policy:
    """Which intermediates of a rematerialized function reverse mode keeps rather than
    recomputes: `saves(prim, *types, **params) -> bool`, as JAX's policies."""

    def __init__(self, name: str, saves: Callable[..., bool]):
        self.name, self.saves = name, saves

    def __call__(self, prim, *types, **params) -> bool:
        return bool(self.saves(prim, *types, **params))

    def __repr__(self) -> str:
        return self.name


def _dot(prim) -> bool:
    from .linalg import dot_general_p

    return prim is dot_general_p


nothing_saveable = Policy("nothing_saveable", lambda prim, *types, **params: False)
everything_saveable = Policy("everything_saveable", lambda prim, *types, **params: True)
dots_saveable = Policy("dots_saveable", lambda prim, *types, **params: _dot(prim))
dots_with_no_batch_dims_saveable = Policy(
    "dots_with_no_batch_dims_saveable",
    lambda prim, *types, **params: _dot(prim) and params["batch"] == ((), ()))


def save_only_these_names(*names: str) -> Policy:
    """Keep the values marked with `checkpoint_name(x, name)` for these names only."""
    return Policy(f"save_only_these_names{names}",
                  lambda prim, *types, **params: prim is name_p and params["name"] in names)


def save_any_names_but_these(*names: str) -> Policy:
    """Keep every value marked with `checkpoint_name` except those of these names."""
    return Policy(f"save_any_names_but_these{names}", lambda prim, *types, **params: (
        prim is name_p and params["name"] not in names))


name_p.def_rule("shape", lambda x, *, name: [x])
name_p.def_rule("impl", lambda x, *, name: [x])
name_p.def_rule("batch", lambda size, args, dims, *, name: ([bind1(name_p, args[0], name=name)],
                                                           dims))
name_p.def_rule("transpose", lambda cts, x, *, name: [cts[0]])
linear_jvp(name_p)


def _bind(args: list, body: Region, policy: Policy) -> list:
    return bind(remat_p, *args, body=body, policy=policy, num_captures=0)


remat_p.def_rule("shape", lambda *types, body, policy, num_captures: body.out_types)
remat_p.def_rule("impl", lambda *args, body, policy, num_captures: eval_region(body, list(args)))


@remat_p.def_rule("jvp")
def _remat_jvp(primals, tangents, *, body, policy, num_captures):
    from ..passes.jvp import jvp_region

    jbody, out_nz = jvp_region(body, nonzero(tangents))
    outs = _bind(list(primals) + live(tangents), jbody, policy)
    n = len(body.outputs)
    return outs[:n], loops.with_zeros(out_nz, outs[n:], body.out_types)


@remat_p.def_rule("batch")
def _remat_batch(size, args, dims, *, body, policy, num_captures):
    from ..passes.vmap import batch_region

    bbody, out_dims = batch_region(body, size, dims)
    return _bind(list(args), bbody, policy), out_dims


def _known_eqns(body: Region, unknowns: Sequence[bool]) -> tuple[list, set]:
    """The equations of `body` its known arguments alone determine, and their values."""
    known = {p for p, u in zip(body.params, unknowns) if not u}
    eqns = []
    for e in body.eqns:
        reads = [a for a in e.inputs if isinstance(a, Var)] + list(e.captures)
        if all(a in known for a in reads):
            known.update(e.outputs)
            eqns.append(e)
    return eqns, known


@remat_p.def_rule("partial_eval")
def _remat_partial_eval(pe, unknowns, *args, body, policy, num_captures):
    """Known side: the known outputs, and the values the policy saves. Unknown side: the
    rest of the body again over all the arguments (the known ones, and the saved values,
    become the residuals). With nothing saved, the known side is the body's own split
    (a loop in it splits too)."""
    from ..passes.partial_eval import partial_eval_region
    from ..passes.simplify import dce

    known_eqns, _ = _known_eqns(body, unknowns)
    saved = tuple(v for e in known_eqns if policy(e.prim, *[a.type for a in e.inputs],
                                                   **e.params) for v in e.outputs)
    # the body's own split, the saved values as outputs more: a loop in the body (whose
    # jvp computes values and tangents in one equation) splits too, so that its values
    # stay known (the known equations alone would leave them unknown)
    split = partial_eval_region(Region(body.params, body.eqns, body.outputs + saved),
                                unknowns)
    out_unknowns, k = split.out_unknowns[:len(body.outputs)], split.known
    k_body = Region(k.params, k.eqns, k.outputs[:len(k.outputs) - split.num_res])
    with using(pe.known):
        k_outs = _bind(loops.pick(args, unknowns, False), dce(k_body), policy)
    n_known = len(k_outs) - len(saved)
    saved_by = {id(e) for e in known_eqns if set(e.outputs) & set(saved)}
    u_body = dce(Region(saved + body.params,
                        tuple(e for e in body.eqns if id(e) not in saved_by),
                        tuple(loops.pick(body.outputs, out_unknowns))))
    with using(pe.unknown):
        u_outs = _bind(k_outs[n_known:] + list(args), u_body, policy)
    return loops.merge(out_unknowns, u_outs, k_outs[:n_known])


@remat_p.def_rule("transpose")
def _remat_transpose(cts, *args, body, policy, num_captures):
    """Recompute the body's non-linear part from the saved arguments, then transpose.
    The recomputation stays a remat equation, so later passes (scan fission) know it
    is meant to be computed here, step by step, and not stored."""
    from ..ad_util import UndefinedPrimal
    from ..passes.partial_eval import partial_eval_region
    from ..passes.transpose import backward_pass

    linear = [isinstance(a, UndefinedPrimal) for a in args]
    # the body may hold loops that compute values and tangents together: split it so the
    # values are recomputed forward and only the tangent part is transposed
    split = partial_eval_region(body, linear, True, recompute_unsized=True)
    res = _recomputed(split.known, loops.pick(args, linear, False), policy)
    cts_in = iter(backward_pass(split.unknown, [False] * split.num_res + [True] * sum(linear),
                                res, cts))
    return [next(cts_in) if lin else None for lin in linear]


def _recomputed(known: Region, args: list, policy: Policy) -> list:
    """The outputs of `known` (closed) at `args`, recomputed by a remat equation, but for
    those that are an argument or a view of one (a reshape): those are taken from the
    argument, outside it, so later passes see them for what they are (scan fission reads
    a view of a loop's row from the stacked rows, rather than stacking it again)."""
    from ..passes.simplify import dce

    arg_of = dict(zip(known.params, args))
    made = {v: e for e in known.eqns for v in e.outputs}
    outside = {o: arg_of[o] for o in known.outputs if o in arg_of}
    for o in known.outputs:
        e = made.get(o)
        if e is not None and "view" in e.prim.traits and e.inputs[0] in arg_of:
            outside[o] = bind1(e.prim, arg_of[e.inputs[0]], **e.params)
    inside = tuple(o for o in known.outputs if o not in outside)
    vals = iter(_bind(args, dce(Region(known.params, known.eqns, inside)), policy)
                if inside else [])
    return [outside[o] if o in outside else next(vals) for o in known.outputs]
