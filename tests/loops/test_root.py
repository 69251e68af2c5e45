"""root: the value is solve()'s, the derivatives come from the residual at that point
(implicit function theorem), whatever the solve does."""

import math

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import central_difference, cg, cg_x, richardson

SOLVERS = ["dense", "diagonal"]


def newton(a, max_steps=50):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.all(rnp.abs(x * x - a) < 1e-12),
                        max_steps=max_steps)


def sqrt_root(a, linear_solver="dense"):
    """sqrt(a) by root, its tangent system solved as `linear_solver` says ("cg": the
    user's conjugate gradients, as linear_solve)."""
    how = ({"linear_solve": cg_x} if linear_solver == "cg"
           else {"linear_solver": linear_solver})
    return rune.root(lambda x: x * x - a, lambda: newton(a), **how)


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


@pytest.mark.parametrize("solver", SOLVERS + ["cg"])
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
    np.testing.assert_allclose(got, want, rtol=1e-10 if solver == "cg" else 1e-12, atol=1e-15)


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


# linear_solve=fn: the user's solver of the tangent system, with J forward and Jᵀ reverse

K = np.array([[4.0, 1.0, 0.5, 0.0], [1.0, 3.0, 0.2, 0.1],
              [0.5, 0.2, 2.0, 0.3], [0.0, 0.1, 0.3, 1.5]])  # SPD


def spd_root(theta, s=1.0, **how):
    """r(x) = (2 I + s K) x + 0.1 x³ - θ: J = 2 I + s K + 0.3 diag(x²), SPD."""
    A = 2.0 * np.eye(4) + s * K
    residual = lambda x: A @ x + 0.1 * x ** 3 - theta  # noqa: E731

    def newton():
        return rune.iterate(
            lambda x: x - rnp.linalg.solve(A + rnp.diag(0.3 * x * x), residual(x)),
            rnp.zeros(4), until=lambda x: rnp.max(rnp.abs(residual(x))) < 1e-14, max_steps=60)

    return rune.root(residual, newton, **how)


THETA = np.array([1.0, -2.0, 0.5, 3.0])
HOWS = {"dense": {}, "cg": {"linear_solve": cg_x}}


def test_linear_solve_equals_dense(backend):
    f = {k: (lambda t, how=how: spd_root(t, **how)) for k, how in HOWS.items()}
    loss = {k: total(lambda t, g=g: rnp.sin(g(t))) for k, g in f.items()}
    t = np.array([0.3, -1.0, 2.0, 0.5])
    for want, got in [(backend(fn)(THETA) for fn in (f["dense"], f["cg"])),
                      (backend(lambda a, g=g: rune.jvp(g, (a,), (t,))[1])(THETA)
                       for g in (f["dense"], f["cg"])),
                      (backend(rune.grad(loss[k]))(THETA) for k in ("dense", "cg"))]:
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)
    J = 2 * np.eye(4) + K + np.diag(0.3 * f["dense"](THETA) ** 2)
    np.testing.assert_allclose(rune.jacrev(f["cg"])(THETA), np.linalg.inv(J), rtol=1e-8)
    np.testing.assert_allclose(rune.jacfwd(f["cg"])(THETA), np.linalg.inv(J), rtol=1e-8)


def test_linear_solve_check_grads():
    rune.check_grads(lambda t: spd_root(t, linear_solve=cg_x), THETA)


def test_linear_solve_lanes_take_their_own_step_counts(backend):
    """Lane 0 has J = 2 I (CG is exact after one step, its r exactly 0: another step
    would divide 0 by 0), lane 1 a full J; each lane's CG stops on its own."""
    steps = []

    def counting_cg(matvec, b):
        x, k = cg(matvec, b)
        rune.debug.callback(lambda k: steps.append(np.asarray(k)), k)
        return x

    def f(s, theta):
        A = 2.0 * np.eye(4) + s * K
        return rune.root(lambda x: A @ x - theta, lambda: rnp.linalg.solve(A, theta),
                         linear_solve=counting_cg)

    s, theta = np.array([0.0, 1.0]), np.stack([THETA, 2 * THETA])
    g = backend(rune.vmap(rune.grad(lambda s, t: rnp.sum(f(s, t) ** 2), argnums=(0, 1))))
    gs, gt = g(s, theta)
    for lane in range(2):
        A = 2.0 * np.eye(4) + s[lane] * K
        x = np.linalg.solve(A, theta[lane])
        lam = np.linalg.solve(A.T, 2 * x)
        np.testing.assert_allclose(gt[lane], lam, rtol=1e-10)
        np.testing.assert_allclose(gs[lane], -lam @ K @ x, rtol=1e-10)
    assert [int(k) for k in np.concatenate([np.ravel(k) for k in steps])] == [1, 4]


def test_linear_solve_in_a_scan_step(backend):
    step = lambda c, t: (c + rnp.sum(spd_root(t, linear_solve=cg_x) ** 2), None)  # noqa
    dense = lambda c, t: (c + rnp.sum(spd_root(t) ** 2), None)  # noqa: E731
    thetas = np.stack([THETA, -THETA, 0.5 * THETA])
    got = backend(rune.grad(lambda ts: rune.scan(step, 0.0, ts)[0]))(thetas)
    want = rune.grad(lambda ts: rune.scan(dense, 0.0, ts)[0])(thetas)
    np.testing.assert_allclose(got, want, rtol=1e-8)


def test_linear_solve_grad_of_vmap():
    thetas = np.stack([THETA, 0.1 * THETA])
    def f(how):
        return lambda ts: rnp.sum(rnp.tanh(rune.vmap(lambda t: spd_root(t, **how))(ts)))

    np.testing.assert_allclose(rune.grad(f(HOWS["cg"]))(thetas), rune.grad(f({}))(thetas),
                               rtol=1e-8)


def tree_cg(matvec, b):
    """CG on a pytree x, flattened: the user's solver sees x's own structure."""
    flat = lambda t: rnp.concatenate([t["u"], t["v"][None]])  # noqa: E731
    unflat = lambda v: {"u": v[:2], "v": v[2]}  # noqa: E731
    return unflat(cg_x(lambda v: flat(matvec(unflat(v))), flat(b)))


def test_linear_solve_pytree_x():
    def f(p):
        res = lambda x: {"u": 3 * x["u"] + x["v"] - p[:2],  # noqa: E731
                         "v": rnp.sum(x["u"]) + 4 * x["v"] + 0.1 * x["v"] ** 3 - p[2]}
        def newton_step(x):
            d = tree_cg(lambda v: rune.jvp(res, (x,), (v,))[1], res(x))
            return {k: x[k] - d[k] for k in x}

        solve = lambda: rune.iterate(  # noqa: E731
            newton_step, {"u": rnp.zeros(2), "v": np.float64(0.0)},
            until=lambda x: rnp.abs(res(x)["v"]) + rnp.max(rnp.abs(res(x)["u"])) < 1e-13,
            max_steps=50)
        return rune.root(res, solve, linear_solve=tree_cg)

    p = np.array([1.0, 2.0, -1.0])
    x = f(p)
    jac = rune.jacrev(f)(p)
    J = np.array([[3, 0, 1], [0, 3, 1], [1, 1, 4 + 0.3 * float(x["v"]) ** 2]])
    inv = np.linalg.inv(J)
    np.testing.assert_allclose(jac["u"], inv[:2], rtol=1e-8)
    np.testing.assert_allclose(jac["v"], inv[2], rtol=1e-8)
    rune.check_grads(f, p)


@pytest.mark.parametrize("bad, message", [
    (lambda mv, b: b[:3], r"linear_solve returned float64\[3\] at x, but x is float64\[4\]"),
    (lambda mv, b: rnp.astype(b, np.float32),
     r"linear_solve returned float32\[4\] at x, but x is float64\[4\]"),
    (lambda mv, b: (b, b), "linear_solve returned structure"),
    ("cg", "linear_solve must be callable, got str"),
])
def test_linear_solve_bad_result(bad, message):
    with pytest.raises(TypeError, match=message):
        spd_root(THETA, linear_solve=bad)


def implicit_layer(theta):
    """A 4096-wide layer: r(x) = 3x - roll(x, 1) - roll(x, -1) + x³ - θ, J SPD and sparse."""
    residual = lambda x: 3 * x - rnp.roll(x, 1) - rnp.roll(x, -1) + x ** 3 - theta  # noqa
    jacobi = lambda: rune.iterate(  # noqa: E731
        lambda x: (theta + rnp.roll(x, 1) + rnp.roll(x, -1) - x ** 3) / 3, rnp.zeros_like(theta),
        until=lambda x: rnp.max(rnp.abs(residual(x))) < 1e-13, max_steps=200)
    return rune.root(residual, jacobi, linear_solve=lambda mv, b: cg(mv, b, 1e-24)[0])


def _outputs(region):
    from rune_jit._src.ir import region_params

    for eqn in region.eqns:
        yield from eqn.outputs
        for _, inner in region_params(eqn.params):
            yield from _outputs(inner)


def test_implicit_layer_gradient_never_forms_the_jacobian():
    n = 4096
    theta = 0.2 * np.sin(np.arange(n))
    loss = lambda t: rnp.sum(implicit_layer(t))  # noqa: E731
    ir = rune.make_ir(rune.grad(loss))(theta)
    biggest = max(math.prod(v.type.shape) for v in _outputs(ir))
    assert n <= biggest < n * n
    g = rune.jit(rune.grad(loss))(theta)
    x = implicit_layer(theta)
    jt_g = 3 * g - np.roll(g, 1) - np.roll(g, -1) + 3 * x ** 2 * g  # Jᵀ g = 1 (J symmetric)
    np.testing.assert_allclose(jt_g, np.ones(n), atol=1e-9)


def test_linear_solve_hessian_equals_dense():
    f = {k: total(lambda t, how=how: rnp.sin(spd_root(t, **how))) for k, how in HOWS.items()}
    np.testing.assert_allclose(rune.hessian(f["cg"])(THETA), rune.hessian(f["dense"])(THETA),
                               rtol=1e-7, atol=1e-12)


def test_linear_solve_with_a_named_linear_solver():
    with pytest.raises(ValueError, match="linear_solver='diagonal' or linear_solve, not both"):
        spd_root(THETA, linear_solve=cg_x, linear_solver="diagonal")


def test_linear_solve_reverse_mode_uses_the_transpose():
    """A J that is not symmetric, solved by Richardson's iteration: reverse mode must call
    it with Jᵀ (jacrev's rows are J⁻¹'s rows only then)."""
    B = np.array([[4.0, 1.0, 0.0], [-1.0, 3.0, 0.5], [0.3, 0.0, 2.0]])

    def f(theta):
        residual = lambda x: B @ x + 0.1 * x ** 3 - theta  # noqa: E731
        return rune.root(residual, lambda: rune.iterate(
            lambda x: x - rnp.linalg.solve(B + rnp.diag(0.3 * x * x), residual(x)),
            rnp.zeros(3), until=lambda x: rnp.max(rnp.abs(residual(x))) < 1e-14,
            max_steps=60), linear_solve=richardson)

    theta = np.array([1.0, -2.0, 0.5])
    want = np.linalg.inv(B + np.diag(0.3 * f(theta) ** 2))
    np.testing.assert_allclose(rune.jacrev(f)(theta), want, rtol=1e-10)
    np.testing.assert_allclose(rune.jit(rune.jacfwd(f))(theta), want, rtol=1e-10)
