"""Hamiltonian Monte Carlo building blocks: a leapfrog integrator over pytree positions
with lax.fori_loop, a Metropolis step with jax.random, a chain with lax.scan."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.tree_util import tree_map


def potential(q):
    return 0.5 * jnp.sum(q["a"] ** 2) + 0.5 * jnp.sum((q["b"] - 1.0) ** 2 / 4.0)


def leapfrog(q, p, step_size, n_steps):
    grad_u = jax.grad(potential)

    def body(_, state):
        q, p = state
        p = tree_map(lambda p, g: p - 0.5 * step_size * g, p, grad_u(q))
        q = tree_map(lambda q, p: q + step_size * p, q, p)
        p = tree_map(lambda p, g: p - 0.5 * step_size * g, p, grad_u(q))
        return q, p

    return lax.fori_loop(0, n_steps, body, (q, p))


def kinetic(p):
    return sum(0.5 * jnp.sum(x ** 2) for x in jax.tree_util.tree_leaves(p))


def hmc_step(q, key):
    k1, k2 = jax.random.split(key)
    leaves, treedef = jax.tree_util.tree_flatten(q)
    keys = jax.random.split(k1, len(leaves))
    p = jax.tree_util.tree_unflatten(
        treedef, [jax.random.normal(k, x.shape) for k, x in zip(keys, leaves)])
    q_new, p_new = leapfrog(q, p, 0.2, 10)
    log_accept = potential(q) + kinetic(p) - potential(q_new) - kinetic(p_new)
    accept = jnp.log(jax.random.uniform(k2)) < log_accept
    q = jax.tree_util.tree_map(lambda new, old: jnp.where(accept, new, old), q_new, q)
    return q, accept


def main():
    q0 = {"a": jnp.zeros(2), "b": jnp.zeros(3)}
    keys = jax.random.split(jax.random.PRNGKey(1), 300)
    _, (samples, accepts) = jax.jit(
        lambda q0: lax.scan(lambda q, k: (lambda r: (r[0], r))(hmc_step(q, k)), q0, keys))(q0)
    assert jnp.mean(accepts) > 0.5
    return {"mean_b": jnp.mean(samples["b"][100:]), "accepts": jnp.mean(accepts)}
