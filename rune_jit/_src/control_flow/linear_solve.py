"""The user's own linear solver of root's tangent system (`linear_solve=fn`,
lax.custom_root, lax.custom_linear_solve), traced into the regions the tangent_solve
primitive holds (ops/tangent_solve.py): fn with A = J = ∂r/∂x at the root, the product
J b, and the same with Jᵀ, derived by the transpose pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import tree
from ..api import jvp
from ..call.arguments import as_value, flatten_args, leaf_type
from ..ir import Type
from ..trace import trace_open
from ..transforms import linear_transpose


@dataclass(frozen=True)
class TangentSolve:
    """How root solves its tangent system: `forward(matvec, b)` with J, `reverse(vecmat,
    b)` with Jᵀ (`names` name them in errors). `matvec(x, v)` is A v at the root x
    (None: the residual's jvp in x); `symmetric` takes vecmat = matvec instead of
    deriving the transpose; `missing` is the error of a reverse mode without `reverse`."""
    forward: Callable
    reverse: Callable | None
    where: str = "root"
    names: tuple[str, str] = ("linear_solve", "linear_solve")
    matvec: Callable | None = None
    symmetric: bool = False
    missing: str = ""


def trace_solves(spec: TangentSolve, residual: Callable, x_tree, x_types: list[Type]) -> list:
    """The open traces of (solve, its matrix) with J and, if `spec.reverse`, with Jᵀ: each
    (x..., b...) -> x...; the matrix's product is what a second derivative differentiates."""
    n = len(x_types)

    def traced(transposed: bool, product: bool):
        def fn(*xb):
            x, b = (tree.unflatten(x_tree, list(part)) for part in (xb[:n], xb[n:]))
            matvec = _matvec(spec, residual, x)
            if transposed and not spec.symmetric:
                matvec = _transpose(matvec, b, spec.where)
            if product:
                name = "the transposed matvec" if transposed else "matvec"
                return _checked(matvec(b), x_tree, x_types, spec.where, name)
            solver = spec.reverse if transposed else spec.forward
            return _checked(solver(matvec, b), x_tree, x_types, spec.where,
                            spec.names[transposed])
        return trace_open(fn, x_types + x_types)

    sides = [False] if spec.reverse is None else [False, True]
    return [traced(side, product) for side in sides for product in (False, True)]


def _matvec(spec: TangentSolve, residual: Callable, x: Any) -> Callable:
    if spec.matvec is not None:
        return lambda v: spec.matvec(x, v)
    return lambda v: jvp(residual, (x,), (v,))[1]


def _transpose(matvec: Callable, b: Any, where: str) -> Callable:
    """vecmat(u) = Aᵀ u, by the transpose pass; a matvec that is not linear has none."""
    matvec(b)  # the user's own errors surface here, not as "not linear" below
    try:
        vecmat = linear_transpose(matvec, b)
    except (TypeError, NotImplementedError) as e:
        raise TypeError(f"{where}: matvec is not linear in its argument, so reverse mode "
                        f"cannot transpose it ({e})") from None
    return lambda u: vecmat(u)[0]


def _checked(out: Any, x_tree, x_types: list[Type], where: str, name: str) -> list:
    leaves, out_tree, _ = flatten_args(out, name)
    if out_tree != x_tree:
        raise TypeError(f"{where}: {name} returned structure {out_tree}, but x has {x_tree}")
    for path, want, leaf in zip(tree.leaf_paths(x_tree), x_types, leaves):
        got = leaf_type(leaf)[0]
        if (got.shape, got.dtype) != (want.shape, want.dtype):
            raise TypeError(f"{where}: {name} returned {got} at x{path}, but x{path} is "
                            f"{want}: the solution must have x's shape and dtype")
    return [as_value(v) for v in leaves]
