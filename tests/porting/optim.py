"""An optax-style optimizer library: GradientTransformation NamedTuples chained, states
as pytrees, updates with jax.tree.map, a schedule, global-norm clipping."""
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp


class GradientTransformation(NamedTuple):
    init: Callable
    update: Callable


class ScaleByAdamState(NamedTuple):
    count: jax.Array
    mu: Any
    nu: Any


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8):
    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return ScaleByAdamState(jnp.zeros([], jnp.int32), zeros, zeros)

    def update(updates, state, params=None):
        mu = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, updates)
        nu = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g ** 2, state.nu, updates)
        count = state.count + 1
        mu_hat = jax.tree.map(lambda m: m / (1 - b1 ** count), mu)
        nu_hat = jax.tree.map(lambda v: v / (1 - b2 ** count), nu)
        out = jax.tree.map(lambda m, v: m / (jnp.sqrt(v) + eps), mu_hat, nu_hat)
        return out, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def clip_by_global_norm(max_norm):
    def update(updates, state, params=None):
        norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(updates)))
        scale = jnp.where(norm < max_norm, 1.0, max_norm / norm)
        return jax.tree.map(lambda g: g * scale, updates), state

    return GradientTransformation(lambda p: (), update)


def scale_by_schedule(schedule):
    def init(params):
        return jnp.zeros([], jnp.int32)

    def update(updates, count, params=None):
        return jax.tree.map(lambda g: -schedule(count) * g, updates), count + 1

    return GradientTransformation(init, update)


def chain(*transforms):
    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None):
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init, update)


def apply_updates(params, updates):
    return jax.tree.map(lambda p, u: p + u, params, updates)


def main():
    opt = chain(clip_by_global_norm(1.0), scale_by_adam(),
                scale_by_schedule(lambda c: 0.05 * 0.99 ** c))
    params = {"w": jnp.array([[1.0, -2.0], [0.5, 3.0]]), "b": jnp.array([0.1, 0.2])}
    x = jnp.linspace(-1, 1, 8).reshape(4, 2)
    y = jnp.array([1.0, 0.0, -1.0, 2.0])

    def loss(p):
        return jnp.mean((jnp.tanh(x @ p["w"]) @ jnp.ones(2) + jnp.sum(p["b"]) - y) ** 2)

    @jax.jit
    def step(params, state):
        l, g = jax.value_and_grad(loss)(params)
        updates, state = opt.update(g, state, params)
        return apply_updates(params, updates), state, l

    state = opt.init(params)
    losses = []
    for _ in range(60):
        params, state, l = step(params, state)
        losses.append(l)
    assert losses[-1] < losses[0]
    return {"params": params, "losses": jnp.stack(losses)}
