"""BFGS with a backtracking (Armijo) line search, written as JAX library code is: a
NamedTuple state in lax.while_loop, jnp.finfo, value_and_grad."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax


class BFGSState(NamedTuple):
    k: jax.Array
    x: jax.Array
    f: jax.Array
    g: jax.Array
    H: jax.Array


def line_search(fun, x, f, g, p, c1=1e-4):
    def cond(carry):
        t, f_new = carry
        return (f_new > f + c1 * t * jnp.dot(g, p)) & (t > 1e-10)

    def body(carry):
        t, _ = carry
        return t * 0.5, fun(x + 0.5 * t * p)

    t, _ = lax.while_loop(cond, body, (jnp.asarray(1.0), fun(x + p)))
    return t


def minimize(fun, x0, maxiter=200, gtol=1e-8):
    value_and_grad = jax.value_and_grad(fun)
    f0, g0 = value_and_grad(x0)
    n = x0.shape[0]
    eps = jnp.finfo(x0.dtype).eps

    def cond(s):
        return (s.k < maxiter) & (jnp.linalg.norm(s.g, ord=jnp.inf) > gtol)

    def body(s):
        p = -s.H @ s.g
        t = line_search(fun, s.x, s.f, s.g, p)
        x_new = s.x + t * p
        f_new, g_new = value_and_grad(x_new)
        sk, yk = x_new - s.x, g_new - s.g
        rho = 1.0 / jnp.maximum(jnp.dot(yk, sk), eps)
        I = jnp.eye(n)
        H = (I - rho * jnp.outer(sk, yk)) @ s.H @ (I - rho * jnp.outer(yk, sk)) \
            + rho * jnp.outer(sk, sk)
        H = jnp.where(jnp.isfinite(rho), H, s.H)
        return BFGSState(s.k + 1, x_new, f_new, g_new, H)

    s = lax.while_loop(cond, body, BFGSState(jnp.asarray(0), x0, f0, g0, jnp.eye(n)))
    return s.x, s.k


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def main():
    x0 = jnp.array([-1.2, 1.0, -0.5, 0.8])
    x, k = jax.jit(lambda x0: minimize(rosenbrock, x0))(x0)
    assert jnp.allclose(x, 1.0, atol=1e-6), x
    x_eager, _ = minimize(rosenbrock, x0)
    return {"x": x, "x_eager": x_eager}
