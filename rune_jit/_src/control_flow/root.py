"""The user's `root`: the solve and the residual traced as regions over pytrees, bound as
the root primitive (ops/root.py), with the tangent system solved as the user says."""

from __future__ import annotations

from typing import Any, Callable

from .. import tree
from ..call.arguments import as_value, flatten_args, leaf_type
from ..ir import Type
from ..ops import complex_parts as cp
from ..ops.root import SOLVERS, root_p
from ..trace import bind, close_together, trace_open
from ..tracebacks import api_boundary
from .linear_solve import TangentSolve, trace_solves


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
    if linear_solver not in SOLVERS:
        raise ValueError(f"root: linear_solver must be one of {SOLVERS}, got {linear_solver!r}")
    box: dict = {}

    def solve_flat():
        leaves, box["tree"], box["paths"] = flatten_args(solve(), "x")
        return [as_value(x) for x in leaves]

    solved = trace_open(solve_flat, [])
    x_types = solved[0].out_types
    if any(t.dtype.kind == "c" for t in x_types):
        return _over_real_parts(residual, solve, linear_solver, spec)

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


def _over_real_parts(residual: Callable, solve: Callable, linear_solver: str,
                     spec: TangentSolve | None) -> Any:
    """The root of a complex residual as the root of a real one over the parts of x (and
    of r): its Jacobian is the real-linear map of the complex one, whose dense solve gives
    JAX's derivatives. A diagonal or a user's solver would be handed the parts' system,
    which is not theirs: refused."""
    if spec is not None or linear_solver != "dense":
        raise TypeError("root: x is complex; the tangent system of a complex residual is "
                        "solved over the real and imaginary parts, densely: leave "
                        "linear_solver='dense' and give no linear_solve")
    box: dict = {}

    def split(x: Any, what: str) -> list:
        leaves, box[what], _ = flatten_args(x, what)
        box[what + " complex"] = [leaf_type(v)[0].dtype.kind == "c" for v in leaves]
        return [p for v, c in zip(leaves, box[what + " complex"])
                for p in (cp.parts(as_value(v)) if c else (v,))]

    def join(flat: list, what: str) -> Any:
        it = iter(flat)
        leaves = [cp.complex_(next(it), next(it)) if c else next(it)
                  for c in box[what + " complex"]]
        return tree.unflatten(box[what], leaves)

    real = implicit(lambda xs: split(residual(join(xs, "x")), "residual(x)"),
                    lambda: split(solve(), "x"), linear_solver, None)
    return join(real, "x")


def _check_residual(x_tree, x_types: list[Type], r_tree, r_types: list[Type]) -> None:
    if r_tree != x_tree:
        raise TypeError(f"root: residual(x) has structure {r_tree}, but x has {x_tree}")
    for path, a, b in zip(tree.leaf_paths(x_tree), x_types, r_types):
        if a != b:
            raise TypeError(f"root: residual(x){path} is {b}, but x{path} is {a}")
        if a.dtype.kind != "f":
            raise TypeError(f"root: x{path} is {a}; root needs float values")
