"""An adaptive Dormand-Prince (RK45) integrator in lax.while_loop over a pytree state,
and the gradient of its result with respect to a parameter (through the loop)."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.tree_util import tree_map

# JAX cannot run this program: its while_loop is not reverse-differentiable. rune_jit can.
JAX_CANNOT = "reverse-mode differentiation of lax.while_loop"

A = [[1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
     [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
     [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
     [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
B_ERR = [71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]


def axpy(y, terms):
    return tree_map(lambda y0, *ks: y0 + sum(c * k for c, k in zip(terms[0], ks)), y, *terms[1])


def rk45_step(f, t, y, h, args):
    ks = [f(t, y, args)]
    for i, row in enumerate(A):
        yi = tree_map(lambda y0, *k: y0 + h * sum(a * kk for a, kk in zip(row, k)), y, *ks)
        ks.append(f(t + C[i + 1] * h, yi, args))
    y_new = tree_map(lambda y0, *k: y0 + h * sum(a * kk for a, kk in zip(A[-1], k)), y, *ks[:6])
    err = tree_map(lambda *k: h * sum(b * kk for b, kk in zip(B_ERR, k)), *ks)
    return y_new, err


def odeint(f, y0, t1, args, rtol=1e-8, atol=1e-10):
    def cond(state):
        t, _, _ = state
        return t < t1

    def body(state):
        t, y, h = state
        h = jnp.minimum(h, t1 - t)
        y_new, err = rk45_step(f, t, y, h, args)
        scale = tree_map(lambda a, b: atol + rtol * jnp.maximum(jnp.abs(a), jnp.abs(b)), y, y_new)
        ratio = jnp.sqrt(sum(jnp.sum((e / s) ** 2) for e, s in
                             zip(jax.tree_util.tree_leaves(err),
                                 jax.tree_util.tree_leaves(scale)))
                         / sum(x.size for x in jax.tree_util.tree_leaves(y)))
        accept = ratio <= 1.0
        factor = jnp.clip(0.9 * ratio ** (-0.2), 0.2, 5.0)
        t = jnp.where(accept, t + h, t)
        y = tree_map(lambda a, b: jnp.where(accept, a, b), y_new, y)
        return t, y, h * factor

    _, y, _ = lax.while_loop(cond, body, (jnp.asarray(0.0), y0, jnp.asarray(0.01)))
    return y


def lotka_volterra(t, y, args):
    a, b = args
    return {"prey": a * y["prey"] - b * y["prey"] * y["pred"],
            "pred": -y["pred"] + b * y["prey"] * y["pred"]}


def main():
    y0 = {"prey": jnp.asarray(1.0), "pred": jnp.asarray(0.5)}
    args = (jnp.asarray(1.5), jnp.asarray(1.0))
    y = jax.jit(lambda a: odeint(lotka_volterra, y0, 3.0, a))(args)
    g = jax.grad(lambda a: odeint(lotka_volterra, y0, 3.0, a)["prey"])(args)
    h = 1e-5
    fd = (odeint(lotka_volterra, y0, 3.0, (args[0] + h, args[1]))["prey"]
          - odeint(lotka_volterra, y0, 3.0, (args[0] - h, args[1]))["prey"]) / (2 * h)
    assert abs(g[0] - fd) < 1e-4 * (1 + abs(fd)), (g, fd)
    return {"y": y, "g": g}
