"""Reinforcement-learning returns: discounted returns and generalized advantage
estimation with a reversed lax.scan, vmapped over environments."""
import jax
import jax.numpy as jnp
from jax import lax


def discounted_returns(rewards, dones, gamma=0.99):
    def step(acc, inp):
        r, d = inp
        acc = r + gamma * acc * (1.0 - d)
        return acc, acc

    _, out = lax.scan(step, jnp.zeros(()), (rewards, dones), reverse=True)
    return out


def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    deltas = rewards + gamma * values[1:] * (1.0 - dones) - values[:-1]

    def step(adv, inp):
        delta, d = inp
        adv = delta + gamma * lam * (1.0 - d) * adv
        return adv, adv

    _, adv = lax.scan(step, jnp.zeros_like(deltas[0]), (deltas, dones), reverse=True)
    return adv


def main():
    key = jax.random.PRNGKey(3)
    k1, k2, k3 = jax.random.split(key, 3)
    rewards = jax.random.normal(k1, (4, 50))
    dones = (jax.random.uniform(k2, (4, 50)) < 0.05).astype(jnp.float32)
    values = jax.random.normal(k3, (4, 51))
    ret = jax.jit(jax.vmap(discounted_returns))(rewards, dones)
    adv = jax.vmap(gae)(rewards, values, dones)
    g = jax.grad(lambda v: jnp.sum(gae(rewards[0], v, dones[0]) ** 2))(values[0])
    return {"ret": ret, "adv": adv, "g": g}
