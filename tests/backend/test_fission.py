"""Scan fission's accumulators: a weight gradient is summed after the backward loop (one
matrix product over stacked operands) or in its carry, whichever pays; under remat what
the step recomputes is never stacked. Results equal the interpreter's either way."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config

STEPS = 300


def recurrence(steps, remat, of=lambda c: c):
    """sum(final c) for c' = tanh(W of(c) + b): issue 19's program (a loop with no xs)."""
    def loss(W, b, c0):
        def step(c):
            return rnp.tanh(W @ of(c) + b)
        body = rune.remat(step) if remat else step
        return rnp.sum(rune.scan(lambda c, _: (body(c), None), c0, length=steps)[0])
    return loss


def inputs(n):
    rng = np.random.default_rng(n)
    return rng.normal(0, 0.5 / np.sqrt(n), (n, n)), rng.normal(0, 0.1, n), rng.normal(size=n)


def backward_loop(f, *args):
    """The compiled gradient's backward scan, and the equations after it."""
    eqns = rune.jit(f).lower(*args).region.eqns
    (i,) = [i for i, e in enumerate(eqns) if e.prim.name == "scan" and e.params["reverse"]]
    return eqns[i], eqns[i + 1:]


def carried(loop):
    return [v.type.shape for v in loop.outputs[:loop.params["num_carry"]]]


# n = 4: a small product, accumulated in the carry; n = 64: a 64 x 64 product a step,
# summed after the loop (without remat)
@pytest.mark.parametrize("remat", [False, True], ids=["plain", "remat"])
@pytest.mark.parametrize("n", [4, 64])
def test_gradients_equal_the_interpreters(n, remat, monkeypatch):
    args = inputs(n)
    g = rune.grad(recurrence(STEPS, remat), argnums=(0, 1))
    jitted, eager = rune.jit(g)(*args), g(*args)
    monkeypatch.setattr(config, "backend", "interpret")
    want = g(*args)
    for got in (jitted, eager):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("remat", [False, True], ids=["plain", "remat"])
def test_check_grads(remat):
    rune.check_grads(recurrence(20, remat), *inputs(4))


@pytest.mark.parametrize("remat", [False, True], ids=["plain", "remat"])
def test_a_small_weight_gradient_is_accumulated_in_the_carry(remat):
    args = inputs(16)
    loop, after = backward_loop(rune.grad(recurrence(STEPS, remat)), *args)
    assert (16, 16) in carried(loop)
    assert loop.outputs[loop.params["num_carry"]:] == ()  # nothing stacked
    assert not any(e.prim.name == "dot_general" for e in after)


def test_a_large_weight_gradient_is_summed_after_the_loop():
    args = inputs(64)
    loop, after = backward_loop(rune.grad(recurrence(STEPS, False)), *args)
    assert (64, 64) not in carried(loop)
    assert sum(e.prim.name == "dot_general" for e in after) == 1


def test_under_remat_a_view_of_the_tape_is_read_from_it():
    """At 64 x 64 a step the product is summed after the loop under remat too: over the
    stacked cotangent and the tape itself (the step's c, recomputed as a reshape of its
    row, is read from the tape rather than stacked again)."""
    steps, args, carry = 1000, inputs(64), 64 * 8
    f = rune.grad(recurrence(steps, True), argnums=(0, 1))
    loop, after = backward_loop(f, *args)
    assert (64, 64) not in carried(loop)
    assert [v.type.shape for v in loop.outputs[loop.params["num_carry"]:]] == [(steps, 64, 1)]
    assert scratch_per_step(f, steps, *args) <= 1.1 * 2 * carry


@pytest.mark.parametrize("remat", [False, True], ids=["plain", "remat"])
def test_under_remat_the_recomputed_values_are_never_stacked(remat, monkeypatch):
    """c' = tanh(W sin(c) + b), 64 x 64 a step: W's gradient sums g sin(c)^T. Without
    remat, sin(c) is on the tape and the product is summed after the loop; with it,
    sin(c) is recomputed each step, and the gradient stays in the carry rather than
    stack it."""
    args = inputs(64)
    g = rune.grad(recurrence(STEPS, remat, rnp.sin), argnums=(0, 1))
    loop, after = backward_loop(g, *args)
    assert ((64, 64) in carried(loop)) == remat
    got = rune.jit(g)(*args)
    monkeypatch.setattr(config, "backend", "interpret")
    for a, b in zip(got, g(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)


def scratch_per_step(f, steps, *args):
    """What a compiled call of f stores, a step: the tapes and whatever else is stacked."""
    return rune.jit(f).lower(*args).cost()["scratch_bytes"] / steps


def tape_per_step(loss, steps, *args):
    """What reverse mode of `loss` saves a step (its per-step residuals)."""
    return sum(r.type.nbytes for r in rune.saved_residuals(loss, *args)
               if r.type.shape[:1] == (steps,)) / steps


@pytest.mark.parametrize("steps", [10_000, 100_000])
def test_reverse_mode_keeps_one_carry_a_step_under_remat(steps):
    """Issue 19: the gradient of a 16-float recurrence over many steps, remat on its step,
    holds one carry (128 bytes) a step: the tape. Nothing else is stacked."""
    loss, args, carry = recurrence(steps, True), inputs(16), 16 * 8
    assert tape_per_step(loss, steps, *args) == carry
    assert scratch_per_step(rune.grad(loss, argnums=(0, 1)), steps, *args) <= 1.1 * carry


def test_reverse_mode_keeps_one_carry_a_step_without_remat():
    """Issue 19: without remat too, the tape holds one carry a step: the step's transpose
    reads c and 1 - c'^2, and both are recomputed from one tape of the carries, at rows t
    and t + 1 (ops/carry_tape.py); the backward loop stacks nothing more."""
    steps, args, carry = 10_000, inputs(16), 16 * 8
    loss = recurrence(steps, False)
    assert tape_per_step(loss, steps, *args) == carry
    assert scratch_per_step(rune.grad(loss, argnums=(0, 1)), steps, *args) <= 1.1 * carry
