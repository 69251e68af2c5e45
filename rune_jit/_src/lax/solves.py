"""lax's implicit solves, `custom_root` and `custom_linear_solve`, as `rune_jit.root`:
the value is the user's solve's, the derivatives come from the residual at the point it
returns (the implicit function theorem), never from the solve's own operations.

The tangent system is solved by the user's solvers, through root's `linear_solve` rule
(rune_jit/_src/ops/tangent_solve.py), never by forming a Jacobian: custom_root calls
`tangent_solve(g, y)` with g the residual's linear map in x in forward mode and with its
transpose (derived) in reverse mode; custom_linear_solve, as JAX does, solves forward
tangents with `solve(matvec, b)` and cotangents with `transpose_solve(vecmat, b)` (vecmat
derived by transposing matvec); `symmetric` takes vecmat = matvec, and `solve` where
transpose_solve is absent; without either, reverse mode raises naming transpose_solve.
"""

from __future__ import annotations

from typing import Any, Callable

from ..control_flow.root import implicit
from .. import tree
from ..control_flow.linear_solve import TangentSolve


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """`solve(f, initial_guess)`, a root of `f`, differentiated through `f` alone.

    >>> from rune_jit import lax
    >>> def sqrt(a):
    ...     newton = lambda f, x: rune.iterate(lambda x: x - f(x) / (2 * x), x,
    ...                                        until=lambda x: abs(f(x)) < 1e-14, max_steps=50)
    ...     return lax.custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> round(float(rune.grad(sqrt)(4.0)), 12)   # 1 / (2 sqrt(a))
    0.25
    """
    _callable(f, "f", "custom_root")
    _callable(solve, "solve", "custom_root")
    _callable(tangent_solve, "tangent_solve", "custom_root")
    if has_aux:
        raise NotImplementedError("rune_jit.lax.custom_root: has_aux=True is not supported")
    spec = TangentSolve(tangent_solve, tangent_solve, "rune_jit.lax.custom_root",
                        ("tangent_solve", "tangent_solve"))
    return implicit(f, lambda: solve(f, initial_guess), "dense", spec)


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """`solve(matvec, b)`, the x of `matvec(x) = b`, differentiated as the solution of
    that linear system (in `b` and in what `matvec` closes over).

    >>> from rune_jit import lax
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> x = lax.custom_linear_solve(lambda v: A @ v, np.array([1.0, 2.0]),
    ...                             lambda mv, b: np.linalg.solve(A, b))
    >>> np.round(x, 6)
    array([0.090909, 0.636364])
    """
    _callable(matvec, "matvec", "custom_linear_solve")
    _callable(solve, "solve", "custom_linear_solve")
    if transpose_solve is not None:
        _callable(transpose_solve, "transpose_solve", "custom_linear_solve")
    if has_aux:
        raise NotImplementedError("rune_jit.lax.custom_linear_solve: has_aux=True is not "
                                  "supported")

    def residual(x: Any) -> Any:
        return tree.tree_map(lambda ax, bi: ax - bi, matvec(x), b)

    return implicit(residual, lambda: solve(matvec, b), "dense",
                    _linear_spec(matvec, solve, transpose_solve, symmetric))


def _linear_spec(matvec: Callable, solve: Callable, transpose_solve: Callable | None,
                 symmetric: bool) -> TangentSolve:
    """JAX's choices: symmetric without transpose_solve transposes with solve, and
    symmetric takes matvec as its own transpose."""
    where = "rune_jit.lax.custom_linear_solve"
    reverse, name = transpose_solve, "transpose_solve"
    if reverse is None and symmetric:
        reverse, name = solve, "solve"
    return TangentSolve(solve, reverse, where, ("solve", name),
                        matvec=lambda x, v: matvec(v), symmetric=symmetric,
                        missing=f"{where}: reverse mode needs transpose_solve (or "
                                f"symmetric=True), which was not given")


def _callable(fn: Any, name: str, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"rune_jit.lax.{where}: {name} must be callable, got "
                        f"{type(fn).__name__}")
