"""L-BFGS: a history of m pairs in arrays updated with .at[].set at a rolling index, the
two-loop recursion with lax.fori_loop and dynamic indices, a while_loop driver."""
import jax
import jax.numpy as jnp
from jax import lax


def two_loop(g, s_hist, y_hist, rho_hist, k, m):
    def first(i, carry):
        q, alpha = carry
        j = (k - 1 - i) % m
        a = rho_hist[j] * jnp.dot(s_hist[j], q)
        valid = i < jnp.minimum(k, m)
        q = jnp.where(valid, q - a * y_hist[j], q)
        return q, alpha.at[j].set(jnp.where(valid, a, 0.0))

    q, alpha = lax.fori_loop(0, m, first, (g, jnp.zeros(m)))
    last = (k - 1) % m
    gamma = jnp.where(k > 0, jnp.dot(s_hist[last], y_hist[last])
                      / jnp.dot(y_hist[last], y_hist[last]), 1.0)
    r = gamma * q

    def second(i, r):
        j = (k - jnp.minimum(k, m) + i) % m
        b = rho_hist[j] * jnp.dot(y_hist[j], r)
        valid = i < jnp.minimum(k, m)
        return jnp.where(valid, r + s_hist[j] * (alpha[j] - b), r)

    return lax.fori_loop(0, m, second, r)


def minimize(fun, x0, m=5, maxiter=100):
    vg = jax.value_and_grad(fun)
    n = x0.shape[0]

    def cond(state):
        k, x, f, g, *_ = state
        return (k < maxiter) & (jnp.linalg.norm(g) > 1e-9)

    def body(state):
        k, x, f, g, s_hist, y_hist, rho_hist = state
        p = -two_loop(g, s_hist, y_hist, rho_hist, k, m)
        t = lax.while_loop(lambda t: (fun(x + t * p) > f + 1e-4 * t * jnp.dot(g, p)) & (t > 1e-12),
                           lambda t: 0.5 * t, 1.0)
        x_new = x + t * p
        f_new, g_new = vg(x_new)
        s, y = x_new - x, g_new - g
        j = k % m
        return (k + 1, x_new, f_new, g_new, s_hist.at[j].set(s), y_hist.at[j].set(y),
                rho_hist.at[j].set(1.0 / jnp.dot(y, s)))

    f0, g0 = vg(x0)
    init = (0, x0, f0, g0, jnp.zeros((m, n)), jnp.zeros((m, n)), jnp.zeros(m))
    k, x, *_ = lax.while_loop(cond, body, init)
    return x, k


def main():
    A = jnp.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
    b = jnp.array([1.0, -1.0, 2.0])

    def fun(x):
        return 0.5 * x @ A @ x - b @ x + 0.1 * jnp.sum(x ** 4)

    x, k = jax.jit(minimize, static_argnums=(0,))(fun, jnp.zeros(3))
    assert jnp.linalg.norm(jax.grad(fun)(x)) < 1e-8
    return {"x": x}
