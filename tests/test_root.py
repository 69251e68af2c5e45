"""root: the value is solve()'s, the derivatives come from the residual at that point
(implicit function theorem), whatever the solve does."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import central_difference

SOLVERS = ["dense", "diagonal"]


def newton(a, max_steps=50):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.all(rnp.abs(x * x - a) < 1e-12),
                        max_steps=max_steps)


def sqrt_root(a, linear_solver="dense"):
    return rune.root(lambda x: x * x - a, lambda: newton(a), linear_solver=linear_solver)


def total(f):
    return lambda *args: rnp.sum(f(*args))


def test_value_is_what_solve_returns(backend):
    """Even where the residual is not quite zero: root does not refine the solve."""
    a = np.array([4.0, 9.0])
    rough = backend(lambda a: rune.root(lambda x: x * x - a, lambda: newton(a, 50) + 1e-3))(a)
    np.testing.assert_array_equal(rough, [2.001, 3.001])


@pytest.mark.parametrize("solver", SOLVERS)
def test_gradient_of_the_seed(backend, solver):
    a = np.array([4.0, 9.0])
    g = backend(rune.grad(total(lambda a: sqrt_root(a, solver))))(a)
    np.testing.assert_allclose(g, [0.25, 0.16666666666666666], rtol=1e-15)


@pytest.mark.parametrize("solver", SOLVERS)
def test_check_grads(solver):
    rune.check_grads(lambda a: sqrt_root(a, solver), np.array([4.0, 9.0, 0.25]))


@pytest.mark.parametrize("solver", SOLVERS)
def test_jvp_is_the_implicit_derivative(solver):
    a, t = np.array([4.0, 9.0]), np.array([1.0, -2.0])
    x, dx = rune.jvp(lambda a: sqrt_root(a, solver), (a,), (t,))
    np.testing.assert_allclose(dx, t / (2 * np.sqrt(a)), rtol=1e-14)


@pytest.mark.parametrize("solver", SOLVERS)
def test_vmap_solves_each_lane(backend, solver):
    a = np.array([[4.0, 9.0], [16.0, 25.0], [2.0, 1.0]])
    np.testing.assert_allclose(backend(rune.vmap(lambda a: sqrt_root(a, solver)))(a),
                               np.sqrt(a), rtol=1e-14)
    g = rune.grad(total(lambda a: sqrt_root(a, solver)))
    got = backend(rune.vmap(g))(a)
    np.testing.assert_allclose(got, [g(row) for row in a], rtol=1e-14)
    np.testing.assert_allclose(got, 0.5 / np.sqrt(a), rtol=1e-14)


@pytest.mark.parametrize("solver", SOLVERS)
def test_grad_of_vmap(solver):
    a = np.array([[4.0, 9.0], [16.0, 25.0]])
    g = rune.grad(lambda a: rnp.sum(rune.vmap(lambda r: sqrt_root(r, solver))(a)))(a)
    np.testing.assert_allclose(g, 0.5 / np.sqrt(a), rtol=1e-14)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("how", ["grad of grad", "jvp of grad", "hessian"])
def test_second_derivatives_are_analytic(solver, how):
    """d²/da² sqrt(a) = -a**-1.5 / 4, from the residual's own derivatives."""
    a = np.array([4.0, 9.0])
    f = total(lambda a: sqrt_root(a, solver))
    want = -0.25 * a ** -1.5
    if how == "grad of grad":
        got = rune.grad(total(rune.grad(f)))(a)
    elif how == "jvp of grad":
        got = rune.jvp(rune.grad(f), (a,), (np.ones(2),))[1]
    else:
        got = rune.hessian(f)(a)
        want = np.diag(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def linear_system(theta):
    """A(θ) x = b with a full (not diagonal) A: only the dense solver applies."""
    A = rnp.stack([rnp.stack([2.0 + theta[0], theta[1]]),
                   rnp.stack([theta[1], 3.0 - theta[0]])])
    b = rnp.stack([1.0 + theta[1], 2.0])

    def solve():
        return rune.iterate(lambda x: x - 0.2 * (A @ x - b), rnp.zeros(2),
                            until=lambda x: rnp.max(rnp.abs(A @ x - b)) < 1e-13,
                            max_steps=500)

    return rune.root(lambda x: A @ x - b, solve)


def np_linear_system(theta):
    A = np.array([[2.0 + theta[0], theta[1]], [theta[1], 3.0 - theta[0]]])
    return np.linalg.solve(A, np.array([1.0 + theta[1], 2.0]))


def test_dense_jacobian_of_a_coupled_residual():
    theta = np.array([0.3, 0.5])
    want = central_difference(np_linear_system, theta)
    np.testing.assert_allclose(rune.jacrev(linear_system)(theta), want, rtol=1e-8)
    np.testing.assert_allclose(rune.jacfwd(linear_system)(theta), want, rtol=1e-8)
    rune.check_grads(linear_system, theta)


def tree_root(p):
    """x = {u, v} with u² = p0 and u v = p1: u = sqrt(p0), v = p1 / sqrt(p0)."""
    return rune.root(lambda x: {"u": x["u"] * x["u"] - p[0], "v": x["u"] * x["v"] - p[1]},
                     lambda: {"u": rnp.sqrt(p[0]), "v": p[1] / rnp.sqrt(p[0])})


def test_pytree_x():
    p = np.array([4.0, 3.0])
    x = tree_root(p)
    assert set(x) == {"u", "v"}
    np.testing.assert_allclose([x["u"], x["v"]], [2.0, 1.5], rtol=1e-15)
    want = {"u": [0.5 / 2.0, 0.0], "v": [-0.5 * 3.0 * 4.0 ** -1.5, 1 / 2.0]}
    for jac in (rune.jacrev(tree_root)(p), rune.jacfwd(tree_root)(p)):
        np.testing.assert_allclose(jac["u"], want["u"], rtol=1e-14)
        np.testing.assert_allclose(jac["v"], want["v"], rtol=1e-14)
    rune.check_grads(tree_root, p)
    batch = np.array([[4.0, 3.0], [9.0, 1.0]])
    got = rune.vmap(tree_root)(batch)
    np.testing.assert_allclose(got["v"], [1.5, 1 / 3], rtol=1e-14)


@pytest.mark.parametrize("solve", [
    lambda a: rune.stop_gradient(rnp.sqrt(a)),
    lambda a: rnp.astype(rnp.astype(rnp.sqrt(a) * 2 ** 20, np.int64), np.float64) / 2 ** 20,
    lambda a: rnp.sqrt(a) + 0.0 * rnp.astype(rnp.argmax(a), np.float64),
    lambda a: np.sqrt(np.array([4.0, 9.0])),
    lambda a: newton(a),
], ids=["stop_gradient", "round trip through int", "argmax", "constant", "iterate"])
def test_the_solve_is_not_differentiated(solve):
    """Whatever the solve does, the derivative is the residual's: 1 / (2x)."""
    a = np.array([4.0, 9.0])
    g = rune.grad(lambda a: rnp.sum(rune.root(lambda x: x * x - a, lambda: solve(a))))(a)
    np.testing.assert_allclose(g, [0.25, 1 / 6], rtol=1e-15)


def test_derivative_with_respect_to_every_captured_value():
    """r(x, a, b) = b x - a: x = a / b, dx/da = 1/b, dx/db = -a/b²."""
    def f(a, b):
        return rune.root(lambda x: b * x - a, lambda: a / b, linear_solver="diagonal")

    ga, gb = rune.grad(f, argnums=(0, 1))(np.float64(3.0), np.float64(2.0))
    np.testing.assert_allclose([ga, gb], [0.5, -0.75], rtol=1e-15)


def test_float32():
    a = np.array([4.0, 9.0], np.float32)
    g = rune.grad(lambda a: rnp.sum(rune.root(lambda x: x * x - a, lambda: rnp.sqrt(a))))(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [0.25, 1 / 6], rtol=1e-6)
