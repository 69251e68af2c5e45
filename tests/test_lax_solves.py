"""lax.custom_root and lax.custom_linear_solve: the user's solve gives the value, the
residual gives the derivatives (against closed forms, finite differences, and JAX)."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import lax

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def newton(f, x0):
    return rune.iterate(lambda x: x - f(x) / rune.grad(f)(x), x0,
                        until=lambda x: abs(f(x)) < 1e-13, max_steps=60)


def cube_root(a):
    return lax.custom_root(lambda x: x ** 3 - a, 1.0, newton, lambda g, y: y / g(1.0))


def linear(scale, b):
    matvec = lambda v: (scale * A) @ v  # noqa: E731
    return lax.custom_linear_solve(matvec, b, lambda mv, b: rnp.linalg.solve(scale * A, b),
                                   symmetric=True)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_custom_root_value_and_derivatives(jit):
    wrap = rune.jit if jit else (lambda f: f)
    a = np.array([8.0, 27.0, 2.0])
    np.testing.assert_allclose(wrap(rune.vmap(cube_root))(a), np.cbrt(a), rtol=1e-12)
    np.testing.assert_allclose(wrap(rune.vmap(rune.grad(cube_root)))(a),
                               1 / (3 * np.cbrt(a) ** 2), rtol=1e-10)
    np.testing.assert_allclose(wrap(lambda a: rune.jvp(cube_root, (a,), (1.0,))[1])(8.0),
                               1 / 12, rtol=1e-10)
    step = lambda c, a: (c + cube_root(a), None)  # noqa: E731
    np.testing.assert_allclose(wrap(rune.grad(lambda a: rune.scan(step, 0.0, a)[0]))(a),
                               1 / (3 * np.cbrt(a) ** 2), rtol=1e-10)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_custom_linear_solve_value_and_derivatives(jit):
    wrap = rune.jit if jit else (lambda f: f)
    b = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(wrap(linear)(2.0, b), np.linalg.solve(2 * A, b), rtol=1e-12)
    g_b = wrap(rune.grad(lambda b: rnp.sum(linear(2.0, b) ** 2)))(b)
    x = np.linalg.solve(2 * A, b)
    np.testing.assert_allclose(g_b, np.linalg.solve((2 * A).T, 2 * x), rtol=1e-10)
    g_s = wrap(rune.grad(lambda s: rnp.sum(linear(s, b))))(2.0)
    np.testing.assert_allclose(g_s, -np.sum(x) / 2.0, rtol=1e-10)  # x(s) = x(1) / s
    rune.check_grads(lambda s, b: rnp.sum(rnp.sin(linear(s, b))), 2.0, b)
    batched = rune.vmap(linear, in_axes=(None, 0))(2.0, np.stack([b, 2 * b]))
    np.testing.assert_allclose(batched[1], 2 * x, rtol=1e-12)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def jlinear(s, b):
        return jax.lax.custom_linear_solve(lambda v: (s * A) @ v, b,
                                           lambda mv, b: jnp.linalg.solve(s * A, b),
                                           symmetric=True)

    b = np.array([1.0, 2.0, -1.0])
    f = lambda lin, np_: lambda s, b: np_.sum(np_.tanh(lin(s, b)))  # noqa: E731
    want = jax.grad(f(jlinear, jnp), argnums=(0, 1))(2.0, b)
    got = rune.grad(f(linear, rnp), argnums=(0, 1))(2.0, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10)


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="tangent_solve must be callable"):
        lax.custom_root(lambda x: x, 1.0, newton, None)
    with pytest.raises(TypeError, match="solve must be callable"):
        lax.custom_linear_solve(lambda v: v, np.ones(2), 3)
