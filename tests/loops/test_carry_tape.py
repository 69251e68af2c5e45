"""Reverse mode of a scan recomputes cheap carry-made residuals from one tape of its carries
(ops/carry_tape.py): what it saves, and that gradients through it are unchanged on every
path and under the transformations that compose with it."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import PATHS, on

RNG = np.random.default_rng(19)
W = RNG.normal(0, 0.3, (6, 6))
B = RNG.normal(0, 0.1, 6)
C0 = RNG.normal(size=6)
XS = RNG.normal(size=(7, 2))


def per_step(loss, steps, *args) -> list[tuple]:
    """The shapes of what reverse mode of `loss` saves each step."""
    return [r.type.shape for r in rune.saved_residuals(loss, *args)
            if r.type.shape[:1] == (steps,)]


def recurrence(W, b, c0, xs, reverse=False):
    """c' = tanh(W c + b x0) with ys; its tanh reads the carry a step ends with, W's
    gradient the one it starts from, the ys both."""
    def step(c, x):
        m = rnp.tanh(W @ c + b * x[0])
        return m, rnp.sum(m * c) * x[1]
    c, ys = rune.scan(step, c0, xs, reverse=reverse)
    return rnp.sum(c ** 2) + rnp.sum(ys)


def pytree_carry(W, b, c0, xs):
    """A carry of a float vector, a counter and a constant: only the vector is taped."""
    def step(carry, x):
        c, k, s = carry["c"], carry["k"], carry["s"]
        m = rnp.tanh(W @ c + b * x[0] * s)
        return {"c": m, "k": k + 1, "s": s}, m[0] * k
    (out, ys) = rune.scan(step, {"c": c0, "k": np.int64(0), "s": np.float64(2.0)}, xs)
    return rnp.sum(out["c"]) + rnp.sum(ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_the_tape_holds_one_carry_a_step(reverse):
    """tanh's derivative 1 - c'^2 and the carry c are both read from one tape of the
    carries (rows t and t +/- 1, and the final carry), so one carry a step is saved
    (beside x[1], a scalar a step)."""
    steps = len(XS)
    saved = per_step(lambda W: recurrence(W, B, C0, XS, reverse), steps, W)
    assert sorted(saved) == [(steps,), (steps, 6)]


def test_a_costly_residual_stays_on_the_tape():
    """A residual made by a transcendental of the carry (sin(c)) is saved, not
    recomputed: only cheap equations are repeated in the backward loop."""
    def loss(W):
        return rnp.sum(rune.scan(lambda c, _: (rnp.tanh(W @ rnp.sin(c)), None), C0,
                                 length=5)[0])
    assert len(per_step(loss, 5, W)) >= 2


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [1, 2, 7])
def test_gradients_are_unchanged(path, reverse, length, monkeypatch):
    """Every path gives finite differences' gradient; one and two steps are the edge
    cases of the final carry (read at the last step, which is also the first)."""
    xs = XS[:length]
    f = on(path, lambda W, b, c0, xs: recurrence(W, b, c0, xs, reverse), monkeypatch)
    rune.check_grads(f, W, B, C0, xs)
    rune.check_grads(on(path, pytree_carry, monkeypatch), W, B, C0, xs)


def test_compiled_and_interpreted_gradients_agree(monkeypatch):
    grad = rune.grad(recurrence, argnums=(0, 1, 2, 3))
    got = rune.jit(grad)(W, B, C0, XS)
    monkeypatch.setattr(rune.config, "backend", "interpret")
    for a, b in zip(got, grad(W, B, C0, XS)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_under_vmap_jvp_hessian_and_inside_a_scan():
    """vmap of the gradient (a batched tape sliced per lane), forward over reverse, and
    the gradient of a scan nested in another scan's step, against finite differences
    and against a loop over the batch."""
    g = rune.grad(recurrence)
    Ws = np.stack([W, W * 0.5, -W])
    batched = rune.jit(rune.vmap(g, in_axes=(0, None, None, None)))(Ws, B, C0, XS)
    for i, w in enumerate(Ws):
        np.testing.assert_allclose(batched[i], g(w, B, C0, XS), rtol=1e-12, atol=1e-14)
    rune.check_grads(lambda b: rune.jvp(lambda w: recurrence(w, b, C0, XS), (W,), (W,))[1],
                     B)
    hess = rune.jit(rune.hessian(lambda c0: recurrence(W, B, c0, XS)))(C0)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12)

    def outer(W):
        def step(acc, x):
            return acc + recurrence(W, B, C0 * x[0], XS), None
        return rune.scan(step, np.float64(0.0), XS[:3])[0]
    rune.check_grads(outer, W)
    rune.check_grads(rune.remat(lambda W: recurrence(W, B, C0, XS)), W)


def test_a_scan_inside_an_iterate_step_keeps_its_gradient(monkeypatch):
    """A scan in an iterate's step: its reverse mode (inside the iterate's) recomputes
    from the tape of its carries too; every path gives finite differences' gradient."""
    def loss(W):
        def step(s):
            c, n = s
            return rune.scan(lambda c, x: (rnp.tanh(W @ c + B * x[0]), None), c, XS)[0], n + 1
        c, _ = rune.iterate(step, (C0, np.int64(0)), until=lambda s: s[1] >= 3, max_steps=5)
        return rnp.sum(c ** 2)

    for path in PATHS:
        rune.check_grads(on(path, loss, monkeypatch), W)
