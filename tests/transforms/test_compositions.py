"""A zoo of small programs, each put through compositions of transformations:
grad of grad, vmap of grad, jvp of grad, grad of vmap, jacfwd against jacrev,
and check_grads in both modes."""

from typing import Callable, NamedTuple

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

RNG = np.random.default_rng(42)


class Program(NamedTuple):
    f: Callable  # a float64 vector -> a float scalar
    x: np.ndarray
    batch: np.ndarray  # rows are inputs
    tol: float  # relative tolerance against finite differences
    h: float = 1e-3  # finite-difference step


def near(x, n=4, scale=0.1):
    return x + scale * RNG.standard_normal((n,) + x.shape)


# ------------------------------------------------------------- the programs

MLP_X, MLP_Y = RNG.standard_normal((5, 2)), RNG.standard_normal(5)


def mlp_loss(p):
    w1, b1 = p[:6].reshape(2, 3), p[6:9]
    w2, b2 = p[9:12], p[12]
    pred = rnp.tanh(MLP_X @ w1 + b1) @ w2 + b2
    return rnp.mean((pred - MLP_Y) ** 2)


CE_X, CE_LABELS = RNG.standard_normal((6, 3)), np.eye(4)[RNG.integers(0, 4, 6)]


def softmax_cross_entropy(w):
    logits = CE_X @ w.reshape(3, 4)
    top = rnp.max(logits, axis=1, keepdims=True)
    lse = top[:, 0] + rnp.log(rnp.sum(rnp.exp(logits - top), axis=1))
    return rnp.mean(lse - rnp.sum(logits * CE_LABELS, axis=-1))


POLY = np.array([0.5, -1.0, 2.0, 0.25, -0.1])  # c0 + c1 t + ... + c4 t^4


def horner(t):
    acc = POLY[-1] * rnp.ones_like(t)
    for c in POLY[-2::-1]:
        acc = acc * t + c
    return acc


def polynomial(x):
    return rnp.sum(horner(x))


def smooth_norm(x):
    return rnp.sqrt(rnp.sum(x * x) + 1e-3) * rnp.mean(x) + rnp.abs(x[0])


SPD = (lambda a: a @ a.T + 3 * np.eye(3))(RNG.standard_normal((3, 3)))
RHS = RNG.standard_normal(3)


def quadratic_solve(x):
    a = SPD + rnp.outer(x, x) + np.diag([1.0, 2.0, 3.0]) * rnp.exp(x[0])
    return RHS @ rnp.linalg.solve(a, RHS) + rnp.sum(x) * 0.1


def branch(x):
    return rune.cond(rnp.sum(x) > 0,
                     lambda x: rnp.sum(rnp.sin(x) * x),
                     lambda x: rnp.prod(x[:2]) + rnp.sum(x ** 3),
                     x)


def index_concat(x):
    i = rnp.argmax(x)  # a traced index; its own derivative is zero
    y = rnp.concatenate([x[::2], x[1:] * x[:-1], x[None, i]])
    return rnp.sum(y * y) + x[i] * x[-1]


W32 = np.array([0.5, -1.5, 2.0, 1.0], np.float32)


def mixed_precision(x):
    s = rnp.sum(rnp.sin(x.astype(np.float32)) * W32)  # float32
    return s * rnp.sum(x * x) + rnp.mean(rnp.exp(x))  # float32 * float64 is float64


X4 = np.array([0.3, -0.7, 1.1, 0.4])
X_POS = np.array([0.9, 0.4, 0.7, -0.2])
X_NEG = -X_POS
BRANCH_BATCH = np.stack([X_POS, X_NEG, X_POS * 0.5, X_NEG * 1.5])  # both branches

PROGRAMS = {
    "mlp": Program(mlp_loss, 0.5 * RNG.standard_normal(13),
                   0.5 * RNG.standard_normal((3, 13)), 1e-5),
    "softmax_xent": Program(softmax_cross_entropy, RNG.standard_normal(12),
                            RNG.standard_normal((3, 12)), 1e-5),
    "polynomial": Program(polynomial, X4, near(X4), 1e-6),
    "norm": Program(smooth_norm, X4, near(X4), 1e-5),
    "solve": Program(quadratic_solve, X4[:3], near(X4[:3]), 1e-5),
    "cond": Program(branch, X_POS, BRANCH_BATCH, 1e-5),
    "cond_false_branch": Program(branch, X_NEG, BRANCH_BATCH[::-1], 1e-5),
    "index_concat": Program(index_concat, X4, near(X4, scale=0.01), 1e-5),
    "mixed_f32_f64": Program(mixed_precision, X4, near(X4), 2e-2, 3e-2),
}


def fd_second_derivative(f, x, v, h):
    """v' H v from values of f only."""
    return (float(f(x + h * v)) - 2 * float(f(x)) + float(f(x - h * v))) / h ** 2


def close(a, b, tol):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.max(np.abs(b))))


def direction(x):
    return np.linspace(1.0, -0.5, x.size).reshape(x.shape)


@pytest.fixture(params=list(PROGRAMS))
def program(request):
    return PROGRAMS[request.param]


def exact(p):
    """Tolerance between two AD computations of one quantity."""
    return 1e-5 if p.tol > 1e-3 else 1e-10


# ------------------------------------------------------------- the compositions


def test_grad_of_grad_against_finite_differences(backend, program):
    p = program
    v = direction(p.x)
    along = lambda t: p.f(p.x + t * v)  # noqa: E731
    second = backend(rune.grad(rune.grad(along)))(0.0)
    assert isinstance(second, np.ndarray) and second.shape == ()
    close(second, fd_second_derivative(p.f, p.x, v, p.h), p.tol * 10)


def test_vmap_of_grad_is_per_example_gradients(backend, program):
    p = program
    per_example = backend(rune.vmap(rune.grad(p.f)))(p.batch)
    looped = np.stack([rune.grad(p.f)(row) for row in p.batch])
    assert per_example.shape == p.batch.shape
    close(per_example, looped, exact(p))


def test_jvp_of_grad_is_hessian_vector_product(backend, program):
    p = program
    v = direction(p.x)
    g, hvp = backend(lambda x, v: rune.jvp(rune.grad(p.f), (x,), (v,)))(p.x, v)
    close(g, rune.grad(p.f)(p.x), exact(p))
    hess = backend(rune.hessian(p.f))(p.x)
    close(hvp, hess @ v, exact(p))
    close(hess, hess.T, exact(p))
    fd = (rune.grad(p.f)(p.x + p.h * v) - rune.grad(p.f)(p.x - p.h * v)) / (2 * p.h)
    close(hvp, fd, p.tol * 10)


def test_grad_of_vmap(backend, program):
    p = program
    total = lambda xs: rnp.sum(rune.vmap(p.f)(xs))  # noqa: E731
    close(backend(rune.grad(total))(p.batch),
          np.stack([rune.grad(p.f)(row) for row in p.batch]), exact(p))


@pytest.mark.slow
def test_jacfwd_equals_jacrev(backend, program):
    p = program
    g = rune.grad(p.f)(p.x)
    close(backend(rune.jacfwd(p.f))(p.x), g, exact(p))
    close(backend(rune.jacrev(p.f))(p.x), g, exact(p))
    close(backend(rune.jacfwd(rune.grad(p.f)))(p.x), backend(rune.jacrev(rune.grad(p.f)))(p.x),
          exact(p))


def test_vmap_of_hessian_vector_products(backend, program):
    p = program
    v = direction(p.x)
    hvp = lambda x: rune.jvp(rune.grad(p.f), (x,), (v,))[1]  # noqa: E731
    close(backend(rune.vmap(hvp))(p.batch), np.stack([hvp(row) for row in p.batch]), exact(p))


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads(program, modes):
    p = program
    eps = 1e-4 if p.tol < 1e-3 else p.h
    rune.check_grads(p.f, p.x, modes=modes, eps=eps)
    rune.check_grads(rune.grad(p.f), p.x, modes=modes, eps=eps, rtol=max(1e-2, p.tol))


# ------------------------------------------------------------- analytic checks


@pytest.mark.parametrize("t", [-1.5, 0.0, 0.7])
def test_polynomial_derivatives_are_exact(backend, t):
    derivs = [POLY]
    for _ in range(3):
        c = derivs[-1]
        derivs.append(c[1:] * np.arange(1, len(c)))
    f = lambda t: horner(t)  # noqa: E731
    for k, c in enumerate(derivs):
        expected = np.polyval(c[::-1], t)
        assert backend(f)(t) == pytest.approx(expected, rel=1e-12, abs=1e-12), k
        f = rune.grad(f)


def test_mlp_per_example_gradients_from_batched_data(backend):
    """vmap over the data, with the parameters unmapped, against a loop."""
    params = PROGRAMS["mlp"].x

    def example_loss(p, xy):
        x, y = xy
        w1, b1, w2, b2 = p[:6].reshape(2, 3), p[6:9], p[9:12], p[12]
        return (rnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2

    per = backend(rune.vmap(rune.grad(example_loss), in_axes=(None, 0)))(params, (MLP_X, MLP_Y))
    loop = np.stack([rune.grad(example_loss)(params, (x, y)) for x, y in zip(MLP_X, MLP_Y)])
    close(per, loop, 1e-12)
    close(per.mean(0), rune.grad(mlp_loss)(params), 1e-12)
