"""The forward algorithm of a hidden Markov model in log space with lax.scan, its
gradient with respect to the parameters, and vmap over sequences."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import logsumexp


def log_likelihood(params, obs):
    log_pi = jax.nn.log_softmax(params["pi"])
    log_A = jax.nn.log_softmax(params["A"], axis=-1)
    log_B = jax.nn.log_softmax(params["B"], axis=-1)

    def step(log_alpha, o):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, o]
        return log_alpha, logsumexp(log_alpha)

    init = log_pi + log_B[:, obs[0]]
    final, _ = lax.scan(step, init, obs[1:])
    return logsumexp(final)


def main():
    key = jax.random.PRNGKey(0)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    params = {"pi": jax.random.normal(k1, (3,)), "A": jax.random.normal(k2, (3, 3)),
              "B": jax.random.normal(k3, (3, 4))}
    obs = jax.random.randint(k4, (5, 20), 0, 4)
    ll = jax.jit(jax.vmap(log_likelihood, in_axes=(None, 0)))(params, obs)
    grads = jax.jit(jax.grad(lambda p: jnp.sum(jax.vmap(log_likelihood, (None, 0))(p, obs))))(
        params)
    assert jnp.all(ll < 0)
    return {"ll": ll, "grads": grads, "one": jax.jit(log_likelihood)(params, obs[0])}
