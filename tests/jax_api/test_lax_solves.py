"""lax.custom_root and lax.custom_linear_solve: the user's solve gives the value, the
residual gives the derivatives (against closed forms, finite differences, and JAX)."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import lax
from loop_helpers import cg_x, richardson

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


# the user's iterative solvers: called for the tangents (JAX's semantics), compared with JAX

B = np.array([[4.0, 1.0, 0.0], [-1.0, 3.0, 0.5], [0.3, 0.0, 2.0]])  # not symmetric


def vector_root(theta):
    f = lambda x: A @ x + 0.1 * x ** 3 - theta  # noqa: E731
    newton = lambda f, x0: rune.iterate(  # noqa: E731
        lambda x: x - rnp.linalg.solve(A + rnp.diag(0.3 * x * x), f(x)), x0,
        until=lambda x: rnp.max(rnp.abs(f(x))) < 1e-14, max_steps=60)
    return lax.custom_root(f, rnp.zeros(3), newton, cg_x)


def general(scale, b, transpose_solve=richardson):
    return lax.custom_linear_solve(lambda v: (scale * B) @ v, b, richardson, transpose_solve)


def jax_versions():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.scipy.sparse.linalg import cg as jcg

    def jrichardson(matvec, b):
        cond = lambda x: jnp.max(jnp.abs(matvec(x) - b)) >= 1e-14  # noqa: E731
        return jax.lax.while_loop(cond, lambda x: x + 0.25 * (b - matvec(x)),
                                  jnp.zeros_like(b))

    def jnewton(f, x0):
        step = lambda x: x - jnp.linalg.solve(A + jnp.diag(0.3 * x * x), f(x))  # noqa: E731
        return jax.lax.fori_loop(0, 30, lambda i, x: step(x), x0)

    def jroot(theta, iterative=False):
        """JAX's reverse mode fails through an iterative tangent_solve (jax#5552): its
        gradients take the dense one JAX documents."""
        f = lambda x: A @ x + 0.1 * x ** 3 - theta  # noqa: E731
        dense = lambda g, y: jnp.linalg.solve(jax.jacobian(g)(y), y)  # noqa: E731
        iterative_solve = lambda g, y: jcg(g, y, tol=1e-14)[0]  # noqa: E731
        return jax.lax.custom_root(f, jnp.zeros(3), jnewton,
                                   iterative_solve if iterative else dense)

    def jgeneral(scale, b):
        return jax.lax.custom_linear_solve(lambda v: (scale * B) @ v, b, jrichardson,
                                           jrichardson)

    return jax, jroot, jgeneral


THETA = np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.slow
def test_custom_root_iterative_tangent_solve_against_jax(jit):
    jax, jroot, _ = jax_versions()
    wrap = rune.jit if jit else (lambda f: f)
    loss = lambda root, np_: lambda t: np_.sum(np_.sin(root(t)))  # noqa: E731
    import jax.numpy as jnp

    np.testing.assert_allclose(wrap(vector_root)(THETA), jroot(THETA), rtol=1e-12)
    np.testing.assert_allclose(wrap(rune.grad(loss(vector_root, rnp)))(THETA),
                               jax.grad(loss(jroot, jnp))(THETA), rtol=1e-8)
    t = np.array([0.5, 1.0, -1.0])
    np.testing.assert_allclose(wrap(lambda a: rune.jvp(vector_root, (a,), (t,))[1])(THETA),
                               jax.jvp(lambda a: jroot(a, True), (THETA,), (t,))[1], rtol=1e-8)
    thetas = np.stack([THETA, 0.1 * THETA])
    np.testing.assert_allclose(wrap(rune.vmap(rune.grad(loss(vector_root, rnp))))(thetas),
                               jax.vmap(jax.grad(loss(jroot, jnp)))(thetas), rtol=1e-8)
    rune.check_grads(vector_root, THETA)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.slow
def test_custom_linear_solve_iterative_against_jax(jit):
    jax, _, jgeneral = jax_versions()
    import jax.numpy as jnp

    wrap = rune.jit if jit else (lambda f: f)
    b = np.array([1.0, 2.0, -1.0])
    loss = lambda lin, np_: lambda s, b: np_.sum(np_.tanh(lin(s, b)))  # noqa: E731
    np.testing.assert_allclose(wrap(general)(2.0, b), np.linalg.solve(2 * B, b), rtol=1e-12)
    got = wrap(rune.grad(loss(general, rnp), argnums=(0, 1)))(2.0, b)
    want = jax.grad(loss(jgeneral, jnp), argnums=(0, 1))(2.0, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9)
    x = np.linalg.solve(2 * B, b)
    np.testing.assert_allclose(got[1], np.linalg.solve(2 * B.T, 1 - np.tanh(x) ** 2),
                               rtol=1e-9)
    t = (1.0, np.array([0.0, 1.0, 0.5]))
    np.testing.assert_allclose(wrap(lambda s, b: rune.jvp(general, (s, b), t)[1])(2.0, b),
                               jax.jvp(jgeneral, (2.0, b), t)[1], rtol=1e-9)
    bs = np.stack([b, -3 * b])
    np.testing.assert_allclose(
        wrap(rune.vmap(rune.grad(loss(general, rnp), argnums=1), in_axes=(None, 0)))(2.0, bs),
        jax.vmap(jax.grad(loss(jgeneral, jnp), argnums=1), in_axes=(None, 0))(2.0, bs),
        rtol=1e-9)


def test_the_users_tangent_solve_is_what_is_called():
    """A deliberately inexact tangent_solve gives JAX's (inexact) derivatives: it is called
    forward and, with g transposed, in reverse."""
    jax, _, _ = jax_versions()
    half = lambda g, y: 0.5 * y / g(1.0)  # noqa: E731
    f = lambda a: lax.custom_root(lambda x: x ** 3 - a, 1.0, newton, half)  # noqa: E731
    jf = lambda a: jax.lax.custom_root(  # noqa: E731
        lambda x: x ** 3 - a, 1.0, lambda f, x0: jax.numpy.cbrt(a), half)
    np.testing.assert_allclose(rune.grad(f)(8.0), jax.grad(jf)(8.0), rtol=1e-10)
    np.testing.assert_allclose(rune.grad(f)(8.0), 0.5 / 12, rtol=1e-10)
    np.testing.assert_allclose(rune.jvp(f, (8.0,), (1.0,))[1], 0.5 / 12, rtol=1e-10)


def test_reverse_mode_without_transpose_solve_names_it():
    b = np.array([1.0, 2.0, -1.0])
    no_transpose = lambda s, b: general(s, b, transpose_solve=None)  # noqa: E731
    dx = rune.jvp(no_transpose, (2.0, b), (0.0, b))[1]  # forward mode needs only solve
    np.testing.assert_allclose(dx, np.linalg.solve(2 * B, b), rtol=1e-10)
    with pytest.raises(TypeError, match="custom_linear_solve: reverse mode needs "
                                        "transpose_solve"):
        rune.grad(lambda b: rnp.sum(no_transpose(2.0, b)))(b)


def test_a_matvec_that_is_not_linear():
    with pytest.raises(TypeError, match="custom_linear_solve: matvec is not linear in its "
                                        "argument"):
        lax.custom_linear_solve(lambda v: v * v, np.ones(3), richardson, richardson)
    with pytest.raises(TypeError, match="matvec is not linear"):
        lax.custom_linear_solve(lambda v: rnp.sin(v), np.ones(3), richardson, richardson)


def test_transpose_solve_returning_the_wrong_dtype():
    with pytest.raises(TypeError, match=r"custom_linear_solve: transpose_solve returned "
                                        r"float32\[3\] at x, but x is float64\[3\]"):
        lax.custom_linear_solve(lambda v: B @ v, np.ones(3), richardson,
                                lambda mv, b: rnp.astype(richardson(mv, b), np.float32))


def test_symmetric_with_transpose_solve_calls_it_with_matvec():
    """JAX's choice: symmetric=True makes matvec its own transpose, and a given
    transpose_solve is still the one reverse mode calls."""
    calls = []

    def marked(matvec, b):
        calls.append("transpose_solve")
        return richardson(matvec, b)

    b = np.array([1.0, 2.0, -1.0])
    f = lambda b: rnp.sum(lax.custom_linear_solve(  # noqa: E731
        lambda v: A @ v, b, richardson, marked, symmetric=True) ** 2)
    x = np.linalg.solve(A, b)
    np.testing.assert_allclose(rune.grad(f)(b), np.linalg.solve(A, 2 * x), rtol=1e-10)
    assert calls == ["transpose_solve"]
