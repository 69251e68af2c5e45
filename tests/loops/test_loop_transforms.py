"""Every loop (scan, iterate, root, remat, cond, and loops nested in loops) under every
transformation and their compositions, each against an independent reference:
a Python loop over NumPy for values, central differences for derivatives, a Python
loop over lanes for vmap."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import lanes, np_iterate, np_scan


def newton(a):
    return rune.iterate(lambda y: (y + a / y) / 2, a,
                        until=lambda y: rnp.abs(y * y - a) < 1e-12, max_steps=60)


# ------------------------------------------------------------- the loops, and their references


def scan_loop(x, reverse=False):
    def step(c, r):
        n = rnp.sin(c) * r + rnp.cos(r) * 0.5
        return n, n * r

    c, ys = rune.scan(step, 0.3, x, reverse=reverse)
    return c + rnp.sum(ys)


def np_scan_loop(x, reverse=False):
    def step(c, r):
        n = np.sin(c) * r + np.cos(r) * 0.5
        return n, n * r

    c, ys = np_scan(step, 0.3, x, reverse=reverse)
    return c + np.sum(ys)


def iterate_loop(x):
    s = rnp.sum(x * x) + 3.0
    v = rune.iterate(lambda v: v * 0.5 + rnp.sin(v) * 0.01, s, until=lambda v: v < 1.0,
                     max_steps=20)
    return v * rnp.sum(rnp.sin(x))


def np_iterate_loop(x):
    v, _ = np_iterate(lambda v: v * 0.5 + np.sin(v) * 0.01, np.sum(x * x) + 3.0,
                      lambda v: v < 1.0, 20)
    return v * np.sum(np.sin(x))


def root_loop(x):
    a = rnp.sum(x * x) + 1.0
    return rune.root(lambda y: y * y - a, lambda: newton(a)) * rnp.sum(x)


def np_root_loop(x):
    return np.sqrt(np.sum(x * x) + 1.0) * np.sum(x)


def remat_loop(x):
    return rnp.sum(rune.remat(lambda v: rnp.tanh(rnp.sin(v)))(x) * x)


def np_remat_loop(x):
    return np.sum(np.tanh(np.sin(x)) * x)


def cond_loop(x):
    return rune.cond(rnp.sum(x) > 0, lambda v: rnp.sum(rnp.sin(v) * v),
                     lambda v: rnp.sum(rnp.cos(v) * v), x)


def np_cond_loop(x):
    return np.sum(np.sin(x) * x) if np.sum(x) > 0 else np.sum(np.cos(x) * x)


def scan_in_scan(x):
    def outer(c, row):
        inner, ys = rune.scan(lambda d, r: (rnp.sin(d * r + c), d), c, row)
        return inner * 0.9 + rnp.sum(ys) * 0.1, inner

    c, ys = rune.scan(outer, 0.2, rnp.reshape(x, (2, 2)))
    return c + rnp.sum(rnp.cos(ys))


def np_scan_in_scan(x):
    def outer(c, row):
        inner, ys = np_scan(lambda d, r: (np.sin(d * r + c), d), c, row)
        return inner * 0.9 + np.sum(ys) * 0.1, inner

    c, ys = np_scan(outer, 0.2, x.reshape(2, 2))
    return c + np.sum(np.cos(ys))


def iterate_in_scan(x):
    def outer(c, r):
        v = rune.iterate(lambda v: v * 0.5, r * r + c * c + 1.5, until=lambda v: v < 1.0,
                         max_steps=30)
        return rnp.sin(c + v), v

    c, ys = rune.scan(outer, 0.1, x)
    return c + rnp.sum(ys)


def np_iterate_in_scan(x):
    def outer(c, r):
        v, _ = np_iterate(lambda v: v * 0.5, r * r + c * c + 1.5, lambda v: v < 1.0, 30)
        return np.sin(c + v), v

    c, ys = np_scan(outer, 0.1, x)
    return c + np.sum(ys)


def scan_in_iterate(x):
    def step(state):
        c, k = state
        return rune.scan(lambda d, r: (rnp.tanh(d + r * c), None), c, x)[0], k + 1

    c, _ = rune.iterate(step, (rnp.sum(x) * 0.1, np.int32(0)), until=lambda s: s[1] >= 3,
                        max_steps=5)
    return c


def np_scan_in_iterate(x):
    def step(state):
        c, k = state
        return np_scan(lambda d, r: (np.tanh(d + r * c), None), c, x)[0], k + 1

    return np_iterate(step, (np.sum(x) * 0.1, 0), lambda s: s[1] >= 3, 5)[0][0]


def remat_in_scan(x):
    layer = rune.remat(lambda a, b: rnp.tanh(rnp.sin(a) * b + a))
    return rune.scan(lambda c, r: (layer(c, r), None), 0.4, x)[0]


def np_remat_in_scan(x):
    return np_scan(lambda c, r: (np.tanh(np.sin(c) * r + c), None), 0.4, x)[0]


def cond_in_scan(x):
    def step(c, r):
        return rune.cond(r > 0, lambda c: rnp.sin(c) + r, lambda c: c * r, c), c

    c, ys = rune.scan(step, 0.5, x)
    return c + rnp.sum(ys * ys)


def np_cond_in_scan(x):
    c, ys = np_scan(lambda c, r: (np.sin(c) + r if r > 0 else c * r, c), 0.5, x)
    return c + np.sum(ys * ys)


def root_in_scan(x):
    def step(c, r):
        a = c * c + r * r + 1.0
        return rune.root(lambda y: y * y - a, lambda: newton(a)) * 0.5, c

    c, ys = rune.scan(step, 0.5, x)
    return c + rnp.sum(ys)


def np_root_in_scan(x):
    c, ys = np_scan(lambda c, r: (np.sqrt(c * c + r * r + 1.0) * 0.5, c), 0.5, x)
    return c + np.sum(ys)


LOOPS = {
    "scan": (scan_loop, np_scan_loop),
    "scan reverse": (lambda x: scan_loop(x, True), lambda x: np_scan_loop(x, True)),
    "iterate": (iterate_loop, np_iterate_loop),
    "root": (root_loop, np_root_loop),
    "remat": (remat_loop, np_remat_loop),
    "cond": (cond_loop, np_cond_loop),
    "scan in scan": (scan_in_scan, np_scan_in_scan),
    "iterate in scan": (iterate_in_scan, np_iterate_in_scan),
    "scan in iterate": (scan_in_iterate, np_scan_in_iterate),
    "remat in scan": (remat_in_scan, np_remat_in_scan),
    "cond in scan": (cond_in_scan, np_cond_in_scan),
    "root in scan": (root_in_scan, np_root_in_scan),
}

X = np.array([0.3, -0.2, 0.5, 0.7])
# Lanes that take different branches (cond) and different numbers of steps (iterate).
LANES = np.stack([X, -1.5 * X, X[::-1] * 1.2])


@pytest.fixture(params=list(LOOPS), ids=list(LOOPS))
def loop(request):
    return LOOPS[request.param]


def test_value(backend, loop):
    f, ref = loop
    np.testing.assert_allclose(backend(f)(X), ref(X), rtol=1e-12)


def test_jvp(backend, loop):
    f, ref = loop
    out, _ = backend(lambda x, t: rune.jvp(f, (x,), (t,)))(X, np.ones(4))
    np.testing.assert_allclose(out, ref(X), rtol=1e-12)
    rune.check_grads(f, X, modes=("fwd",))


def test_grad(backend, loop):
    f, ref = loop
    value, g = backend(rune.value_and_grad(f))(X)
    np.testing.assert_allclose(value, ref(X), rtol=1e-12)
    rune.check_grads(f, X, modes=("rev",))


def test_vmap(backend, loop):
    f, ref = loop
    np.testing.assert_allclose(backend(rune.vmap(f))(LANES), lanes(ref, LANES), rtol=1e-12)


def test_vmap_of_grad(backend, loop):
    f, _ = loop
    g = rune.grad(f)
    np.testing.assert_allclose(backend(rune.vmap(g))(LANES), lanes(g, LANES), rtol=1e-12)


def test_grad_of_vmap(backend, loop):
    f, _ = loop
    got = backend(rune.grad(lambda xs: rnp.sum(rune.vmap(f)(xs))))(LANES)
    np.testing.assert_allclose(got, lanes(rune.grad(f), LANES), rtol=1e-12)


def test_grad_of_grad(loop):
    """Reverse mode of reverse mode: the pullback of the gradient."""
    f, _ = loop
    rune.check_grads(rune.grad(f), X, modes=("rev",))


def test_jvp_of_grad(loop):
    f, _ = loop
    rune.check_grads(rune.grad(f), X, modes=("fwd",))
