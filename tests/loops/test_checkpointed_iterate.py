"""iterate / while_loop(..., checkpoints=k): the online schedule (valid, its step count),
gradients equal to the tape's in every composition, k carries per lane whatever the
number of steps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import float_bytes, squash
from rune_jit._src.ops.online import advances, enough_slots, simulate

TOL = dict(rtol=1e-11, atol=1e-12)
SETTINGS = settings(deadline=None, derandomize=True, max_examples=10,
                    phases=(Phase.explicit, Phase.generate))
SLOW = pytest.mark.slow
W = np.random.default_rng(0).normal(size=(3, 3)) * 0.6


# ------------------------------------------------------------- the schedule


def test_schedule_holds_k_carries_and_costs_its_formula():
    for k in range(1, 9):
        for n in range(0, 130):
            made, held = simulate(n, k)
            assert held <= k, (n, k)
            if enough_slots(n, k):
                assert made == advances(n, k), (n, k)
    # a long loop: about log2(n / k) / 2 advances a step, 32 slots of 64 at most
    assert simulate(10_000, 64) == (advances(10_000, 64), 32)


# ------------------------------------------------------------- a loop to differentiate


def rnn(c0, steps, k="all", calls=None, max_steps=None, w=1.0):
    """A while_loop of `steps` steps (a float carried along counts them)."""
    def step(carry):
        h, t = carry
        if calls is not None:
            rune.debug.callback(lambda h: calls.append(1), h)
        return rnp.tanh(W @ h * w + 0.1 * t), t + 1.0

    h, _ = rune.while_loop(lambda c: c[1] < steps, step, (c0, 0.0), max_steps=max_steps,
                           checkpoints=k)
    return rnp.sum(h * h)


C0 = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("n, k", [(0, 1), (7, 2), (40, 4), pytest.param(1, 1, marks=SLOW),
                                  pytest.param(7, 1, marks=SLOW),
                                  pytest.param(12, 3, marks=SLOW),
                                  pytest.param(40, 8, marks=SLOW), (5, 9)])
def test_step_runs_as_often_as_the_schedule_says(backend, n, k):
    calls: list = []
    grad = backend(rune.grad(lambda c, n: rnn(c, n, k, calls)))
    calls.clear()
    got = grad(C0, float(n))
    assert len(calls) == 2 * n + simulate(n, k)[0]
    np.testing.assert_allclose(got, rune.grad(rnn)(C0, float(n)), **TOL)


def test_a_loop_nobody_differentiates_runs_each_step_once(backend):
    calls: list = []
    backend(lambda c: rnn(c, 9.0, 2, calls))(C0)
    assert len(calls) == 9
    assert "dynamic_update_slice" not in str(rune.make_ir(lambda c: rnn(c, 9.0, 2))(C0))


def test_iterate_with_max_steps_and_a_pytree_carry(backend):
    """An int counter (known in reverse mode, kept in the snapshots too), a dict carry,
    a captured weight differentiated; k at and above max_steps is the tape."""
    def loss(c0, w, k):
        def step(carry):
            i, c = carry
            h = rnp.tanh(W @ c["h"] * w + 0.1 * i)
            return i + 1, {"h": h, "s": c["s"] + rnp.sum(h)}
        i, c = rune.iterate(step, (np.int32(0), c0), until=lambda c: c[0] >= 11,
                            max_steps=20, checkpoints=k)
        return c["s"] + rnp.sum(c["h"] * c["h"]) + i

    c0, w = {"h": C0, "s": np.float64(0.5)}, np.array([1.0, 0.7, -0.4])
    want = rune.grad(loss, argnums=(0, 1))(c0, w, "all")
    for k in (1, 3, 20):
        got = backend(rune.grad(lambda c, w: loss(c, w, k), argnums=(0, 1)))(c0, w)
        for a, b in zip(rune.tree_util.tree_leaves(got), rune.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, **TOL)
    with pytest.raises(rune.IterateError):
        rune.grad(lambda c: rune.iterate(lambda c: c * 0.5, c, until=lambda c: c < 0.0,
                                         max_steps=5, checkpoints=2))(1.0)


@pytest.mark.slow
def test_lanes_that_stop_apart(backend):
    """Each lane runs its own schedule: vmap of grad, grad of vmap, steps 0 to 12."""
    c0s = np.random.default_rng(3).normal(size=(4, 3))
    steps = np.array([3.0, 0.0, 12.0, 7.0])
    want = rune.vmap(rune.grad(lambda c, n: rnn(c, n)))(c0s, steps)
    for k in (1, 2, 5):
        got = backend(rune.vmap(rune.grad(lambda c, n: rnn(c, n, k))))(c0s, steps)
        np.testing.assert_allclose(got, want, **TOL)
        got = backend(rune.grad(lambda cs: rnp.sum(rune.vmap(lambda c, n: rnn(c, n, k))(
            cs, steps))))(c0s)
        np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.slow
def test_grad_of_grad_jvp_and_linearize(backend):
    w = np.array([1.0, 0.5, -0.3])

    def hvp(k):
        g = rune.grad(lambda c, w: rnn(c, 9.0, k, w=w), argnums=(0, 1))
        return rune.grad(lambda c, w: rnp.sum(g(c, w)[0] * w) + rnp.sum(g(c, w)[1]),
                         argnums=(0, 1))

    for a, b in zip(backend(hvp(3))(C0, w), hvp("all")(C0, w)):
        np.testing.assert_allclose(a, b, **TOL)
    want = rune.jvp(lambda c: rnn(c, 9.0), (C0,), (w,))
    got = backend(lambda c, d: rune.jvp(lambda c: rnn(c, 9.0, 2), (c,), (d,)))(C0, w)
    np.testing.assert_allclose(got, want, **TOL)
    _, f_jvp = rune.linearize(lambda c: rnn(c, 9.0, 2), C0)
    np.testing.assert_allclose(backend(rune.vmap(f_jvp))(np.stack([w, 2 * w])),
                               [want[1], 2 * want[1]], **TOL)
    f_vjp = rune.vjp(lambda c: rnn(c, 9.0, 2), C0)[1]
    np.testing.assert_allclose(backend(rune.vmap(f_vjp))(np.array([1.0, 2.0]))[0],
                               rune.vmap(rune.vjp(lambda c: rnn(c, 9.0), C0)[1])(
                                   np.array([1.0, 2.0]))[0], **TOL)
    np.testing.assert_allclose(backend(rune.hessian(lambda c: rnn(c, 6.0, 2)))(C0),
                               rune.hessian(lambda c: rnn(c, 6.0))(C0), **TOL)


def _in_scan(c0, xs, k, k_scan="all"):
    def step(c, x):
        h = rnn(c * x, 5.0 * x, k)
        return c * 0.9 + h, h
    c, ys = rune.scan(step, c0, xs, checkpoints=k_scan)
    return rnp.sum(c) + rnp.sum(ys)


@pytest.mark.parametrize("k_scan", ["all", 2])
def test_inside_a_scan_step(backend, k_scan):
    xs = np.array([0.6, 1.0, 1.4, 0.8])
    want = rune.grad(_in_scan)(C0, xs, "all")
    got = backend(rune.grad(lambda c: _in_scan(c, xs, 2, k_scan)))(C0)
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.slow
def test_random_keys_and_custom_vjp_in_the_step(backend):
    def loss(c0, key, k):
        def step(carry):
            c, key, t = carry
            key, sub = rune.random.split(key)
            return squash(c * (1.0 + rune.random.normal(sub, (3,)))), key, t + 1
        return rnp.sum(rune.iterate(step, (c0, key, 0), until=lambda c: c[2] >= 9,
                                    max_steps=30, checkpoints=k)[0])

    key = rune.random.PRNGKey(4)
    want = rune.grad(loss)(C0, key, "all")
    np.testing.assert_allclose(backend(rune.grad(lambda c: loss(c, key, 2)))(C0), want,
                               **TOL)


@st.composite
def cases(draw):
    lanes = draw(st.sampled_from([(), (3,)]))
    steps = draw(st.lists(st.integers(0, 14), min_size=1, max_size=3))
    return lanes, steps, draw(st.integers(1, 6)), draw(st.booleans()), draw(st.booleans())


@pytest.mark.slow
@SETTINGS
@given(cases())
def test_gradients_agree_generated(case):
    """Carries of two dtypes, a weight captured, lanes stopping apart, with and without
    max_steps, eager and jitted."""
    lanes, steps, k, bounded, jitted = case
    n = np.resize(np.array(steps, np.int64), lanes or (1,)).reshape(lanes)
    rng = np.random.default_rng(sum(steps) * 7 + k)
    c0, w = rng.normal(size=lanes + (2,)), rng.normal(size=2)

    def loss(c0, w, n, k):
        def one(c, n):
            def step(carry):
                c, i = carry
                return rnp.sin(c * w + i) + 0.5 * c, i + 1
            return rune.while_loop(lambda c: c[1] < n, step, (c, np.int64(0)),
                                   max_steps=20 if bounded else None, checkpoints=k)[0]
        out = rune.vmap(one)(c0, n) if lanes else one(c0, n)
        return rnp.sum(out * out)

    g = rune.grad(loss, argnums=(0, 1))
    run = rune.jit(g, static_argnums=3) if jitted else g
    for a, b in zip(run(c0, w, n, k), g(c0, w, n, "all")):
        np.testing.assert_allclose(a, b, **TOL)


# ------------------------------------------------------------- memory


def long_loss(c0, k, max_steps, steps=250):
    a = np.linspace(-1.0, 1.0, 64)
    c = rune.while_loop(lambda c: c[1] < steps, lambda c: (rnp.tanh(c[0] * a + 0.1), c[1] + 1),
                        (c0, 0), max_steps=max_steps, checkpoints=k)[0]
    return rnp.sum(c)


@pytest.mark.parametrize("k", [1, pytest.param(4, marks=SLOW), pytest.param(16, marks=SLOW)])
def test_gradient_program_holds_k_carries(k):
    """No float array of the gradient's program (its loops' included) is larger than
    the snapshot buffer, k + 1 carries (per lane under vmap); the tape's is max_steps
    carries. Compiled, the scratch memory does not grow with max_steps: two snapshot
    buffers (the forward loop's, the reverse loop's) and a few carries."""
    carry = np.linspace(0.1, 0.9, 64)
    tape = float_bytes(rune.make_ir(rune.grad(lambda c: long_loss(c, "all", 500)))(carry))
    assert max(tape) == 500 * carry.nbytes
    sizes = float_bytes(rune.make_ir(rune.grad(lambda c: long_loss(c, k, 500)))(carry))
    assert max(sizes) == (k + 1) * carry.nbytes
    two = np.stack([carry, carry[::-1]])
    sizes = float_bytes(rune.make_ir(rune.grad(lambda c: rnp.sum(rune.vmap(
        lambda c: long_loss(c, k, None))(c))))(two))
    assert max(sizes) == 2 * (k + 1) * carry.nbytes

    def scratch(m):
        return rune.jit(rune.grad(lambda c: long_loss(c, k, m))).lower(carry).cost()[
            "scratch_bytes"] // carry.nbytes

    assert scratch(300) == scratch(600) == scratch(None) <= 2 * (k + 1) + 8


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (1.5, TypeError),
                                        ("some", TypeError), (True, TypeError),
                                        (None, TypeError)])
def test_bad_checkpoints(bad, error):
    with pytest.raises(error, match="while_loop: checkpoints"):
        rnn(C0, 3.0, bad)
    with pytest.raises(error, match="iterate: checkpoints"):
        rune.iterate(lambda c: c + 1, 0, until=lambda c: c > 2, max_steps=5, checkpoints=bad)

