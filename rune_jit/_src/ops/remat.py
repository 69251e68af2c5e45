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

from typing import Any, Callable, Sequence

from .. import tree
from ..ad_util import live, nonzero
from ..interpret import eval_region
from ..ir import Region, Var
from ..primitive import Primitive
from ..trace import bind, bind1, trace_closed, using
from . import loops
from .jvp_rules import linear_jvp
from ..tracebacks import api_boundary

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


def checkpoint_name(x: Any, name: str) -> Any:
    """`x`, marked `name` for the policies `save_only_these_names` and
    `save_any_names_but_these` (a pytree: every leaf is marked).

    >>> import numpy as np, rune_jit as rune
    >>> rune.checkpoint_name(np.ones(2), "hidden").tolist()
    [1.0, 1.0]
    """
    return tree.tree_map(lambda v: bind1(name_p, v, name=str(name)), x)


name_p.def_rule("shape", lambda x, *, name: [x])
name_p.def_rule("impl", lambda x, *, name: [x])
name_p.def_rule("batch", lambda size, args, dims, *, name: ([bind1(name_p, args[0], name=name)],
                                                           dims))
name_p.def_rule("transpose", lambda cts, x, *, name: [cts[0]])
linear_jvp(name_p)


def remat(f: Callable, *, policy: Policy | Callable | None = None,
          static_argnums: int | Sequence[int] = ()) -> Callable:
    """f, rematerialized in reverse mode: its intermediates are computed again in the
    backward pass instead of kept, but for those `policy` saves (see
    `dots_saveable`, `save_only_these_names`...; default: none). Arguments at
    `static_argnums` are passed as they are, not traced.

    >>> import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    >>> g = rune.grad(rune.remat(lambda x: rnp.sin(rnp.sin(x))))(np.float64(0.5))
    >>> bool(np.isclose(g, np.cos(np.sin(0.5)) * np.cos(0.5)))
    True
    """
    from ..arguments import as_argnums, as_value, flatten_args, leaf_type, wraps

    policy = _as_policy(policy)
    statics = as_argnums(static_argnums)

    @wraps(f)
    @api_boundary
    def g(*args):
        dyn = [a for i, a in enumerate(args) if i not in statics]
        leaves, in_tree, _ = flatten_args(tuple(dyn), "args")
        box: dict = {}

        def flat(*xs):
            it = iter(tree.unflatten(in_tree, xs))
            full = [a if i in statics else next(it) for i, a in enumerate(args)]
            outs, box["tree"], _ = flatten_args(f(*full), "output")
            return [as_value(o) for o in outs]

        body, caps = trace_closed(flat, [leaf_type(x)[0] for x in leaves])
        outs = bind(remat_p, *caps, *[as_value(x) for x in leaves], body=body, policy=policy,
                    num_captures=len(caps))
        return tree.unflatten(box["tree"], outs)

    return g


def checkpoint(f: Callable, *, prevent_cse: bool = True, policy: Policy | Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """`jax.checkpoint`'s name for `remat` (`prevent_cse` is accepted: rune_jit never
    merges the recomputation with the forward pass it stands apart from).

    >>> float(rune.grad(rune.checkpoint(lambda x: rnp.sin(x) * x))(1.0).round(6))
    1.381773
    """
    return remat(f, policy=policy, static_argnums=static_argnums)


def _as_policy(policy: Policy | Callable | None) -> Policy:
    if policy is None:
        return nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if not callable(policy):
        raise TypeError(f"remat: policy must be a policy or a function of (prim, *types, "
                        f"**params) -> bool, got {policy!r}")
    return Policy(getattr(policy, "__qualname__", repr(policy)), policy)


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

    known_eqns, known = _known_eqns(body, unknowns)
    saved = tuple(v for e in known_eqns if policy(e.prim, *[a.type for a in e.inputs],
                                                   **e.params) for v in e.outputs)
    if saved:
        out_unknowns = [isinstance(o, Var) and o not in known for o in body.outputs]
        k_body = Region(tuple(loops.pick(body.params, unknowns, False)), tuple(known_eqns),
                        tuple(loops.pick(body.outputs, out_unknowns, False)) + saved)
    else:
        split = partial_eval_region(body, unknowns)
        out_unknowns, k = split.out_unknowns, split.known
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
