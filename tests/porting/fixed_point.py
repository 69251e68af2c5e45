"""The custom_vjp fixed point of JAX's documentation: the backward rule solves its own
fixed point by calling the custom function again."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return jnp.abs(x_prev - x) > 1e-12

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)

    _, x_star = lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star


def fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
    a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, jnp.zeros_like(x_star)


fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)


def newton_sqrt(a):
    update = lambda a, x: 0.5 * (x + a / x)
    return fixed_point(update, a, a)


def main():
    g = jax.grad(newton_sqrt)(2.0)
    assert abs(g - 0.5 / 2.0 ** 0.5) < 1e-10
    gj = jax.jit(jax.grad(newton_sqrt))(2.0)
    gv = jax.vmap(jax.grad(newton_sqrt))(jnp.array([1.0, 4.0, 9.0]))
    return {"g": g, "gj": gj, "gv": gv, "v": newton_sqrt(9.0)}
