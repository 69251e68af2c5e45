"""root's tangent system solved by the user's own linear solver (`linear_solve=fn`).

`fn(matvec, b) -> x` solves A x = b given only `matvec(v) = A v`. At root() time
(control_flow/linear_solve.py) the regions are traced, each taking (captures..., x...,
b...): fn with A = J = ∂r/∂x at the root (the residual's jvp in x), the product J b, and
the same with Jᵀ (that map's transpose, derived by the transpose pass). The jvp of root binds `tangent_solve_p`; the
primitive is linear in b, and its transpose is the same primitive with J and Jᵀ
swapped: reverse mode solves Jᵀ λ = x̄ by the user's solver, never forming J. Under vmap
every region is batched, so an iterative solver written with `iterate` stops each lane
on its own. A second derivative differentiates the products (d(A⁻¹b) = A⁻¹(ḃ - Ȧ A⁻¹b)).

Closed form: operands (fixed..., b...) where fixed = captures and x; `solves`, the
regions (solve, product) with A and then with Aᵀ, each (fixed..., b...) -> x...; only
the first two when no reverse solver was given (lax.custom_linear_solve without
transpose_solve): reverse mode then raises `missing`.
"""

from __future__ import annotations


from ..ir import Type, renamed
from ..primitive import Primitive
from ..trace import bind
from .elementwise import neg

tangent_solve_p = Primitive("tangent_solve")


def solve_tangents(fixed: list, b: list, *, solves: tuple, missing: str) -> list:
    """x with A x = b by the user's solver, as an equation reverse mode transposes into
    the solve with Aᵀ. `solves` = (solve, A) or (solve, A, solve with Aᵀ, Aᵀ); without
    the last two reverse mode raises `missing`. The regions are bound anew: the equation
    this one derives from may hold them."""
    return bind(tangent_solve_p, *fixed, *b, solves=tuple(map(renamed, solves)),
                missing=missing, num_captures=len(fixed))


@tangent_solve_p.def_rule("shape")
def _shape(*types: Type, solves, missing, num_captures):
    if any(region.in_types != list(types) for region in solves):
        raise TypeError("tangent_solve: the regions' params do not match the operands")
    return solves[0].out_types


@tangent_solve_p.def_rule("impl")
def _impl(*args, solves, **_):
    from ..interpret import eval_region

    return eval_region(solves[0], list(args))


@tangent_solve_p.def_rule("jvp")
def _jvp(primals, tangents, *, solves, missing, num_captures):
    """d(A⁻¹ b) = A⁻¹ (ḃ - Ȧ A⁻¹ b), Ȧ y the jvp of the product A y in the fixed values."""
    from ..ad_util import Zero
    from .tangents import add_tangents, instantiate
    from ..passes.jvp import jvp_eval

    fixed, b = list(primals[:num_captures]), list(primals[num_captures:])
    y = solve_tangents(fixed, b, solves=solves, missing=missing)
    a_dot_y = jvp_eval(solves[1], fixed + y,
                       list(tangents[:num_captures]) + [Zero(t) for t in solves[0].out_types])[1]
    rhs = [add_tangents(db, ad if isinstance(ad, Zero) else neg(ad))
           for db, ad in zip(tangents[num_captures:], a_dot_y)]
    if all(isinstance(t, Zero) for t in rhs):
        return y, rhs
    return y, solve_tangents(fixed, [instantiate(t) for t in rhs], solves=solves,
                             missing=missing)


@tangent_solve_p.def_rule("transpose")
def _transpose_rule(cts, *args, solves, missing, num_captures):
    from .tangents import instantiate

    if len(solves) < 4:
        raise TypeError(missing)
    lam = solve_tangents(list(args[:num_captures]), [instantiate(c) for c in cts],
                         solves=solves[2:] + solves[:2], missing=missing)
    return [None] * num_captures + lam


@tangent_solve_p.def_rule("batch")
def _batch(size, args, dims, *, solves, missing, num_captures):
    """Each lane solves its own system (an `iterate` in the solver stops per lane)."""
    from ..passes.vmap import batch_region, materialize

    b = [materialize(a, d, size) for a, d in zip(args[num_captures:], dims[num_captures:])]
    in_dims = list(dims[:num_captures]) + [0] * len(b)
    solves = tuple(batch_region(r, size, in_dims, True)[0] for r in solves)
    outs = solve_tangents(list(args[:num_captures]), b, solves=solves, missing=missing)
    return outs, [0] * len(outs)
