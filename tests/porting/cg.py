"""Conjugate gradients from jax.scipy.sparse.linalg on a matrix-free operator over a
pytree, its gradient with respect to the right-hand side, and vmap over systems."""
import jax
import jax.numpy as jnp
from jax.scipy.sparse.linalg import cg


def laplacian(u):
    return 2.2 * u - jnp.roll(u, 1) - jnp.roll(u, -1)


def solve(b):
    x, _ = cg(laplacian, b, tol=1e-12, maxiter=200)
    return x


def main():
    b = jnp.sin(jnp.linspace(0, 3, 32))
    x = jax.jit(solve)(b)
    assert jnp.allclose(laplacian(x), b, atol=1e-9)
    g = jax.grad(lambda b: jnp.sum(solve(b) ** 2))(b)
    xs = jax.vmap(solve)(jnp.stack([b, 2 * b, b ** 2]))
    tree = cg(lambda t: {"a": laplacian(t["a"]), "c": 3.0 * t["c"]},
              {"a": b, "c": jnp.ones(2)}, tol=1e-12)[0]
    return {"x": x, "g": g, "xs": xs, "tree": tree}
