"""root: the value of a solve, differentiated through its residual (implicit function).

    root(residual, solve) == solve()          # the meaning; solve is never differentiated

With r(x, θ) = 0 at x = solve(), where θ are the values `residual` captures:
dx = -(∂r/∂x)⁻¹ (∂r/∂θ) dθ. The jvp forms ∂r/∂x at the root (by jacfwd, or its
diagonal for an elementwise residual) and solves with it; reverse mode then
transposes that solve into a solve with (∂r/∂x)ᵀ at the root and pulls -λ back
through ∂r/∂θ, by the solve primitive's own transpose rule. With `linear_solve=fn` the
jvp instead calls the user's solver through ops/tangent_solve.py, whose transpose calls
it again with (∂r/∂x)ᵀ: ∂r/∂x is never formed.

Closed form: operands (captures...); regions `solve` (captures...) -> x... and
`residual` (captures..., x...) -> r...; `tangent`, the user's solver's regions
(captures..., x..., b...) -> x... (see tangent_solve.py; empty without linear_solve),
and `missing`, the error of a reverse mode it cannot do.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .tangent_solve import solve_tangents
from ..ad_util import Zero
from .tangents import instantiate
from ..interpret import eval_region
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, trace_closed, type_of_value
from .elementwise import neg
from .linalg import diag_solve
from .linalg import solve as lu_solve
from .shape import concatenate, moveaxis, reshape

root_p = Primitive("root")
SOLVERS = ("dense", "diagonal")


@root_p.def_rule("shape")
def _root_shape(*caps: Type, solve, residual, linear_solver, lanes, num_captures, tangent,
                missing):
    if solve.in_types != list(caps) or residual.in_types != list(caps) + solve.out_types:
        raise TypeError("root: the regions' params do not match the operands")
    if residual.out_types != solve.out_types:
        raise TypeError("root: residual(x) must have the types of x")
    if any(t.in_types != residual.in_types + solve.out_types for t in tangent):
        raise TypeError("root: the linear solve's params do not match the operands")
    if any(t.shape[:len(lanes)] != tuple(lanes) for t in solve.out_types):
        raise TypeError(f"root: every x must lead with the lane axes {lanes}")
    return solve.out_types


root_p.def_rule("impl", lambda *caps, solve, **_: eval_region(solve, list(caps)))
root_p.def_rule("transpose", NOT_LINEAR)


class Flat:
    """x's leaves as one [lanes, n] matrix: a row per lane (under vmap, lanes solve apart)."""

    def __init__(self, types: list[Type], lanes: tuple):
        self.types, self.nl = types, len(lanes)
        self.rows = math.prod(lanes)
        self.sizes = [math.prod(t.shape[self.nl:]) for t in types]
        self.n = sum(self.sizes)

    def flat(self, values: list) -> Any:
        return concatenate([reshape(v, (self.rows, s)) for v, s in zip(values, self.sizes)], 1)

    def unflat(self, mat: Any) -> list:
        from .shape import slice_op

        out, offset = [], 0
        for t, s in zip(self.types, self.sizes):
            piece = slice_op(mat, (0, offset), (self.rows, offset + s))
            out.append(reshape(piece, t.shape))
            offset += s
        return out

    def basis(self, vec: Any) -> list:
        """A vector of length n as a tangent: the same in every lane."""
        from .shape import broadcast_in_dim

        return self.unflat(broadcast_in_dim(vec, (self.rows, self.n), (1,)))


@root_p.def_rule("jvp")
def _root_jvp(primals, tangents, *, solve, residual, linear_solver, lanes, num_captures,
              tangent, missing):
    from ..passes.jvp import jvp_eval

    caps = list(primals)
    x = bind(root_p, *caps, solve=solve, residual=residual, linear_solver=linear_solver,
             lanes=lanes, num_captures=num_captures, tangent=tangent, missing=missing)
    layout = Flat(solve.out_types, lanes)
    zero_x = [Zero(t) for t in layout.types]
    r_dot = jvp_eval(residual, caps + x, list(tangents) + zero_x)[1]
    if all(isinstance(t, Zero) for t in r_dot):
        return x, zero_x
    if tangent:  # the user's solver, with J: never formed
        return x, solve_tangents(caps + x, [neg(instantiate(t)) for t in r_dot],
                                 solves=tangent, missing=missing)
    rhs = neg(layout.flat([instantiate(t) for t in r_dot]))
    zero_caps = [Zero(type_of_value(c)) for c in caps]

    def along(direction: list) -> Any:  # ∂r/∂x · direction, per lane
        return layout.flat(jvp_eval(residual, caps + x, zero_caps + direction)[1])

    if linear_solver == "diagonal":
        ones = np.ones(layout.n, layout.types[0].dtype)
        dx = diag_solve(along(layout.basis(ones)), rhs)
    else:
        dx = _dense_solve(along, layout, rhs)
    return x, layout.unflat(dx)


def _dense_solve(along: Callable, layout: Flat, rhs: Any) -> Any:
    """Form ∂r/∂x per lane, one column per basis direction, and solve by LU."""
    from ..passes.vmap import batch_eval, materialize
    from .shape import transpose

    dtype = layout.types[0].dtype
    column, caps = trace_closed(lambda e: [along(layout.basis(e))], [Type(dtype, (layout.n,))])
    (cols,), (dim,) = batch_eval(column, layout.n, [*caps, np.eye(layout.n, dtype=dtype)],
                                 [None] * len(caps) + [0])
    cols = materialize(cols if dim in (None, 0) else moveaxis(cols, dim, 0), dim, layout.n)
    jac = transpose(cols, (1, 2, 0))  # cols: [n, lanes, n], column j of each lane's J
    return reshape(lu_solve(jac, reshape(rhs, (layout.rows, layout.n, 1))),
                   (layout.rows, layout.n))


@root_p.def_rule("batch")
def _root_batch(size, args, dims, *, solve, residual, linear_solver, lanes, num_captures,
                tangent, missing):
    """A root per lane: x gains the lane axis, and each lane solves its own system."""
    from ..passes.vmap import batch_region

    n_x = len(solve.outputs)
    bsolve = batch_region(solve, size, dims, True)[0]
    bres = batch_region(residual, size, list(dims) + [0] * n_x, True)[0]
    dims_xb = list(dims) + [0] * (2 * n_x)
    tangent = tuple(batch_region(t, size, dims_xb, True)[0] for t in tangent)
    outs = bind(root_p, *args, solve=bsolve, residual=bres, linear_solver=linear_solver,
                lanes=(size,) + tuple(lanes), num_captures=0, tangent=tangent,
                missing=missing)
    return outs, [0] * len(outs)
