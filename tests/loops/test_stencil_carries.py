"""Carries computed in their own buffers (issue 19, item 3): a scan or iterate whose new
carry is a concatenate, an `.at[box].set`, a pad or a where of pieces writes the pieces
straight into the buffer the current carry does not use. Every program here runs on the
NumPy interpreter (the oracle), eagerly (each loop compiled) and under jit; the ones
that would read what they overwrite if the carry were updated in place are here too:
their answers must not change."""

from __future__ import annotations

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit._src.ops.index import dynamic_update_slice

from loop_helpers import assert_trees_close

K = 0.25
STEPS = 7


def inner(u):
    return u[1:-1] + K * (u[:-2] - 2 * u[1:-1] + u[2:])


def heat_concat(u):
    return rnp.concatenate([u[:1], inner(u), u[-1:]])


def heat_at(u):
    return u.at[1:-1].set(inner(u))


def heat_pad(u):  # ends held at zero
    return rnp.pad(inner(u), 1)


def heat_where(u):  # the interior updated where it is above the mean, the ends kept
    new = rnp.concatenate([u[:1], inner(u), u[-1:]])
    return rnp.where(u > rnp.mean(u), new, u)


def heat_dus(u):
    return dynamic_update_slice(u, inner(u), [np.int64(1)])


def rotate(u):  # in place, each write would clobber a value still to be read
    return rnp.concatenate([u[1:], u[:1]])


def shift_at(u):  # the update overlaps the window it reads
    return u.at[1:].set(u[:-1] * 0.5)


def overlapping(u):  # pieces read overlapping parts of u
    h = u.shape[0] // 2
    return rnp.concatenate([u[:h] + u[1:h + 1], u[h - 1:-1] * 0.5])


def softmax_carry(u):  # the temporary exp is stored in the carry's buffer (reuse.py)
    e = rnp.exp(u - rnp.max(u))
    return e / rnp.sum(e)


STEPS_OF = [heat_concat, heat_at, heat_pad, heat_where, heat_dus, rotate, shift_at,
            overlapping, softmax_carry]
SIZES = [4, 300]  # a small carry (copied back in place) and one in two swapping buffers


def scan_of(new):
    return lambda u0: rune.scan(lambda u, _: (new(u), None), u0, length=STEPS)[0]


def interpreted(f, *args, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(config, "backend", "interpret")
        return f(*args)


def check(f, *args, monkeypatch, rtol=1e-12):
    """f's values eagerly and under jit equal the interpreter's."""
    want = interpreted(f, *args, monkeypatch=monkeypatch)
    assert_trees_close(f(*args), want, rtol=rtol, atol=1e-14)
    assert_trees_close(rune.jit(f)(*args), want, rtol=rtol, atol=1e-14)


def state(n, dtype=np.float64):
    return np.random.default_rng(n).uniform(0.0, 1.0, n).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("new", STEPS_OF, ids=lambda f: f.__name__)
def test_a_carry_made_of_pieces_equals_the_interpreters(new, n, monkeypatch):
    check(scan_of(new), state(n), monkeypatch=monkeypatch)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_other_dtypes(dtype, monkeypatch):
    f = scan_of(lambda u: rnp.concatenate([u[-1:], u[1:-1] + u[2:], u[:1]]))
    check(f, (state(50) * 100).astype(dtype), monkeypatch=monkeypatch, rtol=1e-6)


def test_the_new_state_read_by_other_carries_and_returned_as_ys(monkeypatch):
    def f(u0):
        def step(c, _):
            u, v, w = c
            new = heat_concat(u)
            # v's pieces read the new state; w reads it whole; ys hold it each step
            return (new, rnp.concatenate([new[1:], v[:1]]), w + new), (new, rnp.sum(new))
        return rune.scan(step, (u0, u0 * 2, u0 * 0), length=STEPS)
    check(f, state(200), monkeypatch=monkeypatch)


def test_swapped_and_shared_carries(monkeypatch):
    def f(a0, b0):
        def step(c, _):
            a, b = c
            new = rnp.concatenate([b[:1], inner(a), b[-1:]])
            return (rnp.concatenate([a[-1:], b[:-1]]), new), new  # b' reads a, a' reads b
        (a, b), ys = rune.scan(step, (a0, b0), length=STEPS)
        # one value as two carries
        twice = rune.scan(lambda c, _: ((heat_at(c[0]),) * 2, None), (a0, b0), length=STEPS)
        return a, b, ys, *twice[0]
    check(f, state(100), state(100) + 1, monkeypatch=monkeypatch)


def test_the_old_state_read_after_the_new_one_is_made(monkeypatch):
    def f(u0):
        def step(u, _):
            new = heat_at(u)
            return new, rnp.sum(new * u) + u[0]  # u read after new was written
        return rune.scan(step, u0, length=STEPS)
    check(f, state(200), monkeypatch=monkeypatch)


@pytest.mark.parametrize("new", [heat_concat, heat_at, heat_pad, rotate],
                         ids=lambda f: f.__name__)
def test_gradient_and_vmap(new, monkeypatch):
    u0 = state(60)
    loss = lambda u0: rnp.sum(scan_of(new)(u0) ** 2)  # noqa: E731
    check(rune.grad(loss), u0, monkeypatch=monkeypatch)
    check(rune.vmap(scan_of(new)), np.stack([u0, u0[::-1], u0 * 2]), monkeypatch=monkeypatch)


def test_nested_loops(monkeypatch):
    def f(u0):
        def outer(u, _):
            v = rune.scan(lambda v, _: (heat_concat(v), None), u, length=3)[0]
            w = rune.iterate(lambda c: (heat_at(c[0]), c[1] + 1), (v, np.int64(0)),
                             until=lambda c: c[1] >= 2, max_steps=5)[0]
            return rnp.concatenate([w[:1], inner(v) + w[1:-1], u[-1:]]), w
        return rune.scan(outer, u0, length=4)
    check(f, state(120), monkeypatch=monkeypatch)


def test_iterate(monkeypatch):
    def f(u0):
        return rune.iterate(lambda c: (rotate(heat_concat(c[0])), c[1] + 1), (u0, np.int64(0)),
                            until=lambda c: c[1] >= 5, max_steps=10)
    check(f, state(80), monkeypatch=monkeypatch)


def test_a_traced_start_and_a_box_in_two_axes(monkeypatch):
    def f(x, i):
        def step(c, _):
            y = dynamic_update_slice(c, c[:2, :3] * 2.0, [i, np.int64(1)])
            return y.at[1:3, 0].set(y[0, :2] + 1.0), None
        return rune.scan(step, x, length=STEPS)[0]
    check(f, state(40).reshape(5, 8), np.int64(2), monkeypatch=monkeypatch)
    check(f, state(40).reshape(5, 8), np.int64(9), monkeypatch=monkeypatch)  # clamped


def test_the_heat_step_copies_no_carry():
    """Only the copy of the initial state in and of the final one out remain."""
    for new in (heat_concat, heat_at):
        ir = rune.jit(scan_of(new)).lower(state(1000)).llvm_ir
        assert ir.count('call void @"llvm.memcpy') == 2, new.__name__
