"""root: the value of a solve, differentiated through its residual (implicit function).

    root(residual, solve) == solve()          # the meaning; solve is never differentiated

With r(x, θ) = 0 at x = solve(), where θ are the values `residual` captures:
dx = -(∂r/∂x)⁻¹ (∂r/∂θ) dθ. The jvp forms ∂r/∂x at the root (by jacfwd, or its
diagonal for an elementwise residual) and solves with it; reverse mode then
transposes that solve into a solve with (∂r/∂x)ᵀ at the root and pulls -λ back
through ∂r/∂θ, by the solve primitive's own transpose rule. With `linear_solve=fn` the
jvp instead calls the user's solver through _src/tangent_solve.py, whose transpose calls
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

from .. import tree
from ..tangent_solve import TangentSolve, solve_tangents, trace_solves
from ..ad_util import Zero
from .tangents import instantiate
from ..interpret import eval_region
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, close_together, trace_open, type_of_value
from .elementwise import neg
from .linalg import diag_solve
from .linalg import solve as lu_solve
from .shape import concatenate, reshape
from ..tracebacks import api_boundary

root_p = Primitive("root")
SOLVERS = ("dense", "diagonal")


@api_boundary
def root(residual: Callable, solve: Callable, *, linear_solver: str = "dense",
         linear_solve: Callable | None = None) -> Any:
    """`solve()`, whose derivatives come from `residual(x) = 0` at the point it returns.

    The tangent system is solved with the residual's Jacobian J = ∂r/∂x at x, formed
    (`linear_solver="dense"`) or taken as diagonal (`"diagonal"`); or, given
    `linear_solve=fn`, by `fn(matvec, b) -> x`, the user's solver of A x = b from
    `matvec(v) = A v` alone: forward mode calls it with A = J, reverse mode with Jᵀ.

    >>> def cube_root(a):  # Newton's iterations; the derivative comes from x**3 - a = 0
    ...     return rune.root(lambda x: x ** 3 - a, lambda: rune.iterate(
    ...         lambda x: x - (x ** 3 - a) / (3 * x * x), 1.0,
    ...         until=lambda x: abs(x ** 3 - a) < 1e-12, max_steps=100))
    >>> float(rune.grad(cube_root)(8.0).round(6))  # 1 / (3 x**2) at x = 2
    0.083333
    >>> scalar_solve = lambda matvec, b: b / matvec(np.ones_like(b))  # J is 1 x 1
    >>> float(rune.grad(lambda a: rune.root(lambda x: x * x - a, lambda: np.sqrt(a),
    ...                                     linear_solve=scalar_solve))(4.0))
    0.25
    """
    if linear_solve is not None and not callable(linear_solve):
        raise TypeError(f"root: linear_solve must be callable, got "
                        f"{type(linear_solve).__name__}")
    if linear_solve is not None and linear_solver != "dense":
        raise ValueError(f"root: give linear_solver={linear_solver!r} or linear_solve, "
                         f"not both")
    spec = None if linear_solve is None else TangentSolve(linear_solve, linear_solve)
    return implicit(residual, solve, linear_solver, spec)


def implicit(residual: Callable, solve: Callable, linear_solver: str,
             spec: TangentSolve | None) -> Any:
    """root, its tangent system solved as `spec` says (None: by `linear_solver`)."""
    from ..arguments import as_value, flatten_args, leaf_type

    if linear_solver not in SOLVERS:
        raise ValueError(f"root: linear_solver must be one of {SOLVERS}, got {linear_solver!r}")
    box: dict = {}

    def solve_flat():
        leaves, box["tree"], box["paths"] = flatten_args(solve(), "x")
        return [as_value(x) for x in leaves]

    solved = trace_open(solve_flat, [])
    x_types = solved[0].out_types

    def residual_flat(*xs):
        x = tree.unflatten(box["tree"], xs)
        leaves, r_tree, _ = flatten_args(residual(x), "residual(x)")
        _check_residual(box["tree"], x_types, r_tree, [leaf_type(r)[0] for r in leaves])
        return [as_value(r) for r in leaves]

    traces = [solved, trace_open(residual_flat, x_types)]
    if spec is not None:
        traces += trace_solves(spec, residual, box["tree"], x_types)
    (s, r, *user), caps = close_together(traces)
    outs = bind(root_p, *caps, solve=s, residual=r, linear_solver=linear_solver, lanes=(),
                num_captures=len(caps), tangent=tuple(user),
                missing="" if spec is None else spec.missing)
    return tree.unflatten(box["tree"], outs)


def _check_residual(x_tree, x_types: list[Type], r_tree, r_types: list[Type]) -> None:
    if r_tree != x_tree:
        raise TypeError(f"root: residual(x) has structure {r_tree}, but x has {x_tree}")
    for path, a, b in zip(tree.leaf_paths(x_tree), x_types, r_types):
        if a != b:
            raise TypeError(f"root: residual(x){path} is {b}, but x{path} is {a}")
        if a.dtype.kind != "f":
            raise TypeError(f"root: x{path} is {a}; root needs float values")


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
    from ..api import vmap
    from .shape import transpose

    eye = np.eye(layout.n, dtype=layout.types[0].dtype)
    cols = vmap(lambda e: along(layout.basis(e)))(eye)  # [n, lanes, n]: column j of each J
    jac = transpose(cols, (1, 2, 0))
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
