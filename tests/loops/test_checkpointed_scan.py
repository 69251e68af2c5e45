"""scan(..., checkpoints=k): the binomial schedule (optimal, valid), the step count it
promises, gradients equal to the tape's in every composition, memory of k carries."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import float_bytes, squash
from rune_jit._src.ops.revolve import advances, schedule, split

TOL = dict(rtol=1e-11, atol=1e-12)
SETTINGS = settings(deadline=None, derandomize=True, max_examples=12,
                    phases=(Phase.explicit, Phase.generate))
W = np.random.default_rng(0).normal(size=(3, 3)) * 0.6


# ------------------------------------------------------------- the schedule


@functools.lru_cache(maxsize=None)
def fewest_advances(n: int, k: int) -> int:
    """Dynamic programming over every split: the optimum the closed form claims."""
    if n == 1:
        return 0
    if k == 1:
        return n * (n - 1) // 2
    return min(m + fewest_advances(m, k) + fewest_advances(n - m, k - 1) for m in range(1, n))


def replay(s) -> int:
    """Run the schedule's tables on step numbers; check each load finds the carry it
    claims and at most k + 1 slots exist; -> the advances of the reverse pass."""
    slots = {int(s.forward[i]): i for i in range(s.n)}
    made = 0
    for i in range(s.n - 1, -1, -1):
        pos, ptr = slots[int(s.load[i])], int(s.first_store[i])
        assert pos == s.start[i] <= i
        while pos < i:
            pos, made = pos + 1, made + 1
            if s.stored_at[ptr] == pos:
                slots[int(s.stored_in[ptr])], ptr = pos, ptr + 1
            else:
                slots[s.k] = pos
    assert set(slots) <= set(range(s.k + 1))
    return made


@pytest.mark.parametrize("k", range(1, 7))
def test_closed_form_is_the_optimum(k):
    for n in range(1, 45):
        assert advances(n, k) == fewest_advances(n, k), (n, k)
        if k >= 2 and n >= 2:
            m = split(n, k)
            assert m + fewest_advances(m, k) + fewest_advances(n - m, k - 1) == advances(n, k)


@pytest.mark.parametrize("k", range(1, 7))
def test_schedule_reaches_every_carry_with_the_fewest_advances(k):
    for n in range(k + 1, 45):
        s = schedule(n, k)
        assert replay(s) == s.reverse_advances() == advances(n, k) - (n - 1)


def test_large_schedule_is_quick_and_small():
    s = schedule(100_000, 64)
    assert s.reverse_advances() == advances(100_000, 64) - 99_999
    assert len(s.stored_at) < 100_000


# ------------------------------------------------------------- a loop to differentiate


def rnn(c0, xs, k="all", reverse=False, calls=None):
    def step(c, x):
        if calls is not None:
            rune.debug.callback(lambda c: calls.append(1), c)
        c = rnp.tanh(W @ c + x)
        return c, rnp.sum(c * c)

    c, ys = rune.scan(step, c0, xs, checkpoints=k, reverse=reverse)
    return rnp.sum(c * c) + rnp.sum(ys * np.arange(1.0, len(xs) + 1))


def inputs(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=3), rng.normal(size=(n, 3))


@pytest.mark.parametrize("n, k", [(1, 1), (2, 1), (7, 1), (7, 2), (12, 3), (12, 11), (5, 9)])
def test_step_runs_as_often_as_the_schedule_says(backend, n, k):
    calls: list = []
    c0, xs = inputs(n)
    grad = backend(rune.grad(lambda c: rnn(c, xs, k, calls=calls)))
    calls.clear()  # (tracing a function does not call it; compiling may run nothing)
    grad(c0)
    expected = n if k >= n else n + advances(n, k) + 1
    assert len(calls) == expected


def test_a_loop_nobody_differentiates_runs_each_step_once(backend):
    calls: list = []
    c0, xs = inputs(9)
    backend(lambda c: rnn(c, xs, 2, calls=calls))(c0)
    assert len(calls) == 9
    assert "dynamic_update_slice" not in str(rune.make_ir(lambda c: rnn(c, xs, 2))(c0))


@pytest.mark.parametrize("reverse", [False, True])
def test_gradient_is_the_tapes(backend, reverse):
    c0, xs = inputs(10)
    want = rune.grad(rnn, argnums=(0, 1))(c0, xs, "all", reverse)
    for k in (1, 2, 4, 9, 10):
        got = backend(rune.grad(lambda c, x: rnn(c, x, k, reverse), argnums=(0, 1)))(c0, xs)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, **TOL)


def _gradient(loss):
    return rune.grad(loss, argnums=(0, 1, 2))


def _hvp(loss):  # grad of grad: a Hessian-vector product along a fixed direction
    def inner(c0, xs, w, k):
        g = rune.grad(loss)(c0, xs, w, k)
        return rnp.sum(g * rnp.cos(rnp.arange(g.size).reshape(g.shape)))
    return rune.grad(inner, argnums=(0, 1, 2))


def _vmap_grad(loss):  # over two initial carries
    return lambda c0, xs, w, k: rune.vmap(lambda c: rune.grad(loss)(c, xs, w, k))(
        rnp.stack([c0, 2.0 * c0]))


TRANSFORMS = {"grad": _gradient, "hvp": _hvp, "vmap_grad": _vmap_grad}


@st.composite
def cases(draw):
    n = draw(st.integers(1, 9))
    return (n, draw(st.integers(1, n + 1)), draw(st.sampled_from([(), (2,), (2, 3)])),
            draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from(sorted(TRANSFORMS))))


@SETTINGS
@given(cases())
def test_gradients_agree_generated(case):
    n, k, shape, reverse, jitted, how = case
    rng = np.random.default_rng(n * 7 + k)
    c0, xs, w = rng.normal(size=shape), rng.normal(size=(n,) + shape), rng.normal(size=shape)

    def loss(c0, xs, w, k):
        def step(c, x):
            c2 = rnp.sin(c * w + x) + 0.5 * c
            return c2, rnp.tanh(c2 * x)
        c, ys = rune.scan(step, c0, xs, checkpoints=k, reverse=reverse)
        return rnp.sum(c) + rnp.sum(ys * ys)

    g = TRANSFORMS[how](loss)
    want = g(c0, xs, w, "all")
    run = rune.jit(g, static_argnums=3) if jitted else g
    for a, b in zip(rune.tree_util.tree_leaves(run(c0, xs, w, k)),
                    rune.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, **TOL)


# ------------------------------------------------------------- compositions


def test_jvp_unaffected(backend):
    c0, xs = inputs(8)
    dc, dx = inputs(8, seed=2)
    want = rune.jvp(lambda c, x: rnn(c, x), (c0, xs), (dc, dx))
    got = backend(lambda c, x, d, e: rune.jvp(lambda c, x: rnn(c, x, 3), (c, x), (d, e)))(
        c0, xs, dc, dx)
    np.testing.assert_allclose(got, want, **TOL)


def test_vmap_of_grad_and_grad_of_vmap(backend):
    c0s = np.random.default_rng(3).normal(size=(4, 3))
    _, xs = inputs(9)
    want = rune.vmap(rune.grad(lambda c: rnn(c, xs)))(c0s)
    got = backend(rune.vmap(rune.grad(lambda c: rnn(c, xs, 2))))(c0s)
    np.testing.assert_allclose(got, want, **TOL)
    got = backend(rune.grad(lambda cs: rnp.sum(rune.vmap(lambda c: rnn(c, xs, 2))(cs))))(c0s)
    np.testing.assert_allclose(got, want, **TOL)


def test_grad_of_grad(backend):
    c0, xs = inputs(7)
    v = np.array([0.3, -1.0, 0.5])

    def hvp(k):
        g = rune.grad(lambda c: rnn(c, xs, k))
        return rune.grad(lambda c: rnp.sum(g(c) * v))

    np.testing.assert_allclose(backend(hvp(2))(c0), hvp("all")(c0), **TOL)
    rune.check_grads(rune.grad(lambda c: rnn(c, xs, 2)), c0, modes=["rev"])


def nested(c0, xs, k_out, k_in):
    def outer(c, block):
        def inner(h, x):
            h = rnp.tanh(W @ h + x)
            return h, None
        return rune.scan(inner, c, block, checkpoints=k_in)[0], rnp.sum(c)

    c, ys = rune.scan(outer, c0, xs, checkpoints=k_out)
    return rnp.sum(c * c) + rnp.sum(ys)


@pytest.mark.parametrize("k_out, k_in", [(2, 1), ("all", 1), (2, "all")])
def test_nested_checkpointed_scans(backend, k_out, k_in):
    c0, flat = inputs(12)
    xs = flat.reshape(4, 3, 3)
    want = rune.grad(nested, argnums=(0, 1))(c0, xs, "all", "all")
    got = backend(rune.grad(lambda c, x: nested(c, x, k_out, k_in), argnums=(0, 1)))(c0, xs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, **TOL)


def test_remat_in_the_step(backend):
    layer = rune.remat(lambda c, x: rnp.tanh(W @ rnp.sin(c) + x))

    def loss(c0, xs, k):
        return rnp.sum(rune.scan(lambda c, x: (layer(c, x), None), c0, xs,
                                 checkpoints=k)[0])

    c0, xs = inputs(9)
    want = rune.grad(loss)(c0, xs, "all")
    np.testing.assert_allclose(backend(rune.grad(lambda c: loss(c, xs, 2)))(c0), want, **TOL)


def test_random_keys_in_the_step_draw_the_same_numbers_again(backend):
    def loss(c0, key, k):
        def step(carry, _):
            c, key = carry
            key, sub = rune.random.split(key)
            c = rnp.tanh(c * (1.0 + rune.random.normal(sub, (3,))))
            return (c, key), None
        return rnp.sum(rune.scan(step, (c0, key), None, length=9, checkpoints=k)[0][0])

    c0, _ = inputs(1)
    key = rune.random.PRNGKey(4)
    want = rune.grad(loss)(c0, key, "all")
    np.testing.assert_allclose(backend(rune.grad(lambda c: loss(c, key, 2)))(c0), want, **TOL)


def test_custom_vjp_in_the_step(backend):
    def loss(c0, xs, k):
        return rnp.sum(rune.scan(lambda c, x: (squash(W @ c + x), None), c0, xs,
                                 checkpoints=k)[0])

    c0, xs = inputs(9)
    want = rune.grad(loss)(c0, xs, "all")
    np.testing.assert_allclose(backend(rune.grad(lambda c: loss(c, xs, 3)))(c0), want, **TOL)


def test_pytree_carry_with_an_integer_leaf(backend):
    """A counter carried along (known in reverse mode, kept in the snapshots too) and
    a dict of float leaves."""
    def loss(c0, xs, k):
        def step(carry, x):
            i, c = carry
            h = rnp.tanh(W @ c["h"] + x * i)
            return (i + 1, {"h": h, "s": c["s"] + rnp.sum(h)}), h[0]
        (i, c), ys = rune.scan(step, (np.int32(1), c0), xs, checkpoints=k)
        return c["s"] + rnp.sum(c["h"]) + rnp.sum(ys * ys) + i

    h0, xs = inputs(11)
    c0 = {"h": h0, "s": np.float64(0.5)}
    want = rune.grad(loss, argnums=(0, 1))(c0, xs, "all")
    got = backend(rune.grad(lambda c, x: loss(c, x, 3), argnums=(0, 1)))(c0, xs)
    for a, b in zip(rune.tree_util.tree_leaves(got), rune.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, **TOL)


def test_unused_outputs_are_dropped_when_compiled(backend):
    c0, xs = inputs(6)

    def final_only(c, k):
        return rune.scan(lambda c, x: (rnp.tanh(W @ c + x), rnp.sin(c)), c, xs,
                         checkpoints=k)[0]

    np.testing.assert_allclose(backend(lambda c: final_only(c, 2))(c0),
                               final_only(c0, "all"), **TOL)
    from rune_jit._src.passes.simplify import dce

    program = rune.make_ir(lambda c: final_only(c, 2))(c0)
    assert "sin" in str(program) and "sin" not in str(dce(program))


def test_linearize_evaluates_the_linear_map(backend):
    c0, xs = inputs(8)
    d = np.array([1.0, -2.0, 0.5])
    _, want = rune.jvp(lambda c: rnn(c, xs), (c0,), (d,))
    _, f_jvp = rune.linearize(lambda c: rnn(c, xs, 2), c0)
    np.testing.assert_allclose(backend(f_jvp)(d), want, **TOL)
    ds = np.stack([d, 2.0 * d])
    np.testing.assert_allclose(backend(rune.vmap(f_jvp))(ds), [want, 2.0 * want], **TOL)
    f_vjp = rune.vjp(lambda c: rnn(c, xs, 2), c0)[1]
    np.testing.assert_allclose(backend(rune.vmap(f_vjp))(np.array([1.0, 2.0]))[0],
                               rune.vmap(rune.vjp(lambda c: rnn(c, xs), c0)[1])(
                                   np.array([1.0, 2.0]))[0], **TOL)


# ------------------------------------------------------------- memory


@pytest.mark.parametrize("k", [1, 4, 16])
def test_gradient_program_holds_k_carries(k):
    """No float array of the gradient's program (its loops' included) is larger than
    the snapshot buffer, k + 1 carries; the tape's is n carries."""
    n, carry = 500, np.linspace(0.1, 0.9, 64)
    a = np.linspace(-1.0, 1.0, 64)

    def loss(c0, k):
        c = rune.scan(lambda c, _: (rnp.tanh(c * a + 0.1), None), c0, None, length=n,
                      checkpoints=k)[0]
        return rnp.sum(c)

    tape = float_bytes(rune.make_ir(rune.grad(lambda c: loss(c, "all")))(carry))
    assert max(tape) == n * carry.nbytes
    sizes = float_bytes(rune.make_ir(rune.grad(lambda c: loss(c, k)))(carry))
    assert max(sizes) == (k + 1) * carry.nbytes


def compiled_scratch(n: int, k) -> int:
    carry, a = np.linspace(0.1, 0.9, 64), np.linspace(-1.0, 1.0, 64)

    def loss(c0):
        c = rune.scan(lambda c, _: (rnp.tanh(c * a + 0.1), None), c0, None, length=n,
                      checkpoints=k)[0]
        return rnp.sum(c)

    return rune.jit(rune.grad(loss)).lower(carry).cost()["scratch_bytes"] // carry.nbytes


def test_compiled_gradient_scratch_grows_with_k_not_n():
    """The compiled program's scratch memory, in carries: the tape's grows with n; the
    checkpointed one's does not, and is two copies of the snapshot buffer (the forward
    loop's and the reverse loop's, which the loop advancing to each step updates in
    place: codegen/carries.py, `donated` and `in_place`) and a few carries."""
    assert compiled_scratch(600, "all") - compiled_scratch(300, "all") == 300
    for k in (2, 8):
        scratch = compiled_scratch(300, k)
        assert scratch == compiled_scratch(600, k)
        assert scratch <= 2 * (k + 1) + 8


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (1.5, TypeError),
                                        ("some", TypeError), (True, TypeError),
                                        (None, TypeError)])
def test_bad_checkpoints(bad, error):
    c0, xs = inputs(4)
    with pytest.raises(error, match="checkpoints"):
        rnn(c0, xs, bad)


def test_checkpoints_at_least_n_is_the_tape():
    c0, xs = inputs(5)
    tape = str(rune.make_ir(rune.grad(lambda c: rnn(c, xs)))(c0))
    assert str(rune.make_ir(rune.grad(lambda c: rnn(c, xs, 5)))(c0)) == tape
    assert str(rune.make_ir(rune.grad(lambda c: rnn(c, xs, 4)))(c0)) != tape
