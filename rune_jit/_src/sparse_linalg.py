"""Krylov solvers of jax.scipy.sparse.linalg (re-exported by
rune_jit.scipy.sparse.linalg): cg and bicgstab, JAX's iterations step for step, as
rune_jit while loops (compiled, and under vmap each lane stops on its own residual).

A is a matrix or a function computing A @ x; b (and x0, and what A and M take and
give) may be any pytree of arrays, as in JAX. As in JAX, the second result (info) is
None. Unlike JAX's (an implicit derivative through custom_linear_solve), derivatives
go through the steps taken, which is exact for the iterate returned.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import numpy as rnp
from . import tree
from .numpy._core import shape_of
from .control_flow import while_loop


def _operator(A: Any, where: str, name: str) -> Callable:
    """A as a function x -> A @ x (x an array or pytree)."""
    if callable(A):
        return A
    if A is None:
        return lambda x: x
    matrix = rnp.asarray(A)
    if len(matrix.shape) != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{where}: {name} must be a square matrix or a function, got shape "
                         f"{matrix.shape}")
    return lambda x: rnp.matmul(matrix, x)


def _dot(x: Any, y: Any) -> Any:
    """The real inner product of two pytrees of the same structure."""
    parts = [rnp.sum(rnp.multiply(a, b)) for a, b in zip(tree.leaves(x), tree.leaves(y))]
    return sum(parts[1:], parts[0])


def _add(x: Any, y: Any) -> Any:
    return tree.tree_map(rnp.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree.tree_map(rnp.subtract, x, y)


def _scale(c: Any, x: Any) -> Any:
    return tree.tree_map(lambda v: rnp.multiply(c, v), x)


def _setup(A: Any, b: Any, x0: Any, maxiter: Any, M: Any, where: str):
    """(A, M as functions, b and x0 as float arrays, maxiter, the size of b)."""
    b = tree.tree_map(lambda v: rnp.astype(v, np.result_type(rnp.asarray(v).dtype,
                                                             np.float32)), b)
    x0 = tree.tree_map(rnp.zeros_like, b) if x0 is None else tree.tree_map(rnp.asarray, x0)
    if tree.structure(x0) != tree.structure(b) or any(
            shape_of(u) != shape_of(v) for u, v in zip(tree.leaves(x0), tree.leaves(b))):
        raise ValueError(f"{where}: x0 and b must have the same structure and shapes")
    size = sum(int(np.prod(shape_of(v))) for v in tree.leaves(b))
    return (_operator(A, where, "A"), _operator(M, where, "M"), b, x0,
            10 * size if maxiter is None else maxiter)


def _tolerance(b: Any, tol: float, atol: float) -> Any:
    return rnp.maximum(tol * tol * _dot(b, b), atol * atol)


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """x with A x = b for a symmetric positive definite A, by conjugate gradients
    (preconditioned by M, an approximation of A's inverse), until |r| <= max(tol |b|,
    atol) or maxiter steps (10 size(b) by default). Returns (x, None), as JAX's.

    >>> import rune_jit.scipy as rsp
    >>> x, _ = rsp.sparse.linalg.cg(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]),
    ...                             tol=1e-12)
    >>> print(np.round(x, 6))
    [0.090909 0.636364]
    """
    plain = M is None  # then r.z is r.r: JAX tests it instead of computing r.r again
    A, M, b, x0, maxiter = _setup(A, b, x0, maxiter, M, "rune_jit.scipy.sparse.linalg.cg")
    bound = _tolerance(b, tol, atol)

    def keep_going(state):
        _, r, gamma, _, k = state
        rs = gamma if plain else _dot(r, r)
        return rnp.logical_and(rs > bound, k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _dot(p, Ap)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, Ap))
        z = M(r)
        gamma_next = _dot(r, z)
        p = _add(z, _scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    r0 = _sub(b, A(x0))
    p0 = M(r0)
    state = (x0, r0, _dot(r0, p0), p0, np.int64(0))
    return while_loop(keep_going, step, state)[0], None


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """x with A x = b for a general A, by BiCGSTAB (van der Vorst), as JAX's: stops at
    |r| <= max(tol |b|, atol), after maxiter steps, or at a breakdown (rho, alpha or
    omega zero). Returns (x, None).

    >>> import rune_jit.scipy as rsp
    >>> x, _ = rsp.sparse.linalg.bicgstab(np.array([[4.0, 1.0], [-2.0, 3.0]]),
    ...                                   np.array([1.0, 2.0]), tol=1e-12)
    >>> print(np.round(x, 6))
    [0.071429 0.714286]
    """
    A, M, b, x0, maxiter = _setup(A, b, x0, maxiter, M,
                                  "rune_jit.scipy.sparse.linalg.bicgstab")
    bound = _tolerance(b, tol, atol)

    def keep_going(state):
        r, k = state[1], state[-1]
        return rnp.logical_and(rnp.logical_and(_dot(r, r) > bound, k < maxiter), k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _dot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _dot(rhat, q)
        s = _sub(r, _scale(alpha, q))
        done = _dot(s, s) < bound
        shat = M(s)
        t = A(shat)
        omega = _dot(t, s) / _dot(t, t)
        half = _add(x, _scale(alpha, phat))
        x = tree.tree_map(lambda u, v: rnp.where(done, u, v), half,
                          _add(half, _scale(omega, shat)))
        r = tree.tree_map(lambda u, v: rnp.where(done, u, v), s, _sub(s, _scale(omega, t)))
        # JAX's breakdown codes: -11 (omega or alpha zero), -10 (rho zero)
        k = rnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = rnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = _sub(b, A(x0))
    one = np.ones((), np.result_type(*[rnp.asarray(v).dtype for v in tree.leaves(b)]))
    state = (x0, r0, r0, one, one, one, r0, r0, np.int64(0))
    return while_loop(keep_going, step, state)[0], None


__all__ = ["bicgstab", "cg"]
