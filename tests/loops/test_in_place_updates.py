"""A loop carry updated in places (`b.at[i].set(row)`, `dynamic_update_slice`) and read by
nothing else is updated in its own buffer in compiled code (backend/cpu/codegen/
carries.py: `updated_in_place`): a loop filling a buffer row by row writes each row once,
where copying the rest every step made it quadratic (4000 rows of 256: 2.4 s, now 2 ms).
Every case is compiled against the interpreter, with the patterns where the update must
not be in place (the carry read elsewhere, swapped, kept as a y) beside those where it
is."""

from __future__ import annotations

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import lax

X = np.linspace(-1.0, 2.0, 16)
N = 12


def fill(x):
    buf = rnp.zeros((N, x.shape[0]))
    return rune.fori_loop(0, N, lambda i, b: b.at[i].set(x * i), buf)


def fill_from_previous_row(x):  # reads the carry besides updating it: not in place
    buf = rnp.zeros((N, x.shape[0])).at[0].set(x)
    return rune.fori_loop(1, N, lambda i, b: b.at[i].set(rnp.sin(b[i - 1]) + x), buf)


def swapped(x):  # each new carry updates the other's current one
    def body(i, c):
        a, b = c
        return b.at[i].set(x * i), a.at[i].add(x)
    z = rnp.zeros((N, x.shape[0]))
    return rune.fori_loop(0, N, body, (z, z + 1.0))


def kept_as_ys(x):  # the old carry is also a y of the step
    def step(b, i):
        return b.at[i].set(x * i), b
    return rune.scan(step, rnp.zeros((N, x.shape[0])), np.arange(N))


def window(x):  # dynamic_update_slice of a box at a traced start, and at a fixed one
    def step(b, i):
        b = lax.dynamic_update_slice(b, x[None, :4] * i, (i, i % 3))
        return b, None
    first = rune.scan(step, rnp.zeros((N, x.shape[0])), np.arange(N))[0]
    return rune.fori_loop(0, 3, lambda i, b: lax.dynamic_update_slice(
        b, rnp.full((1, 2), i * 1.5), (2, 5)), first)


def until_full(x):  # a while loop, and a scatter that adds
    def body(c):
        i, b = c
        return i + 1, b.at[i % 4, :].add(x)
    return rune.while_loop(lambda c: c[0] < N, body, (0, rnp.zeros((4, x.shape[0]))))[1]


def nested(x):  # an inner loop fills the row the outer one sets
    def outer(i, b):
        row = rune.fori_loop(0, x.shape[0], lambda j, r: r.at[j].set(x[j] * i + j),
                             rnp.zeros(x.shape[0]))
        return b.at[i].set(row)
    return rune.fori_loop(0, N, outer, rnp.zeros((N, x.shape[0])))


def handed_to_an_inner_loop(x):  # the inner loop runs in the outer carry's buffer
    def outer(i, b):
        row = b[i % N]  # a view of it, read as the inner loop starts
        def inner(c):
            j, r, b = c
            return j + 1, r * 0.5 + x, b.at[j].set(r)
        return rune.while_loop(lambda c: c[0] < i % 5, inner, (0, row, b))[2]
    return rune.fori_loop(0, N, outer, rnp.zeros((N, x.shape[0])) + x)


def swapping_inner_loop(x):  # the inner loop ends in its own spare buffer every other time
    def outer(i, b):
        return rune.while_loop(lambda c: c[0] < i, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0),
                               (0, b))[1]
    return rune.fori_loop(0, 7, outer, rnp.zeros((N, x.shape[0])) + x)


def read_after_the_inner_loop(x):  # the outer carry is read after the inner loop
    def outer(i, b):
        b2 = rune.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].at[c[0]].set(
            x * i)), (0, b))[1]
        return b2 + b[0]
    return rune.fori_loop(0, 5, outer, rnp.zeros((N, x.shape[0])) + x)


PROGRAMS = [fill, fill_from_previous_row, swapped, kept_as_ys, window, until_full, nested,
            handed_to_an_inner_loop, swapping_inner_loop, read_after_the_inner_loop]


def _interpreted(f, *args, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(rune.config, "backend", "interpret")
        return rune.jit(f)(*args)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_values_are_the_interpreters(f, monkeypatch):
    got, want = rune.jit(f)(X), _interpreted(f, X, monkeypatch=monkeypatch)
    for g, w in zip(rune.tree.leaves(got), rune.tree.leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)  # sin's last bit is the CPU's


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_gradients_and_lanes_are_the_interpreters(f, monkeypatch):
    def loss(x):
        return sum(rnp.sum(leaf ** 2) for leaf in rune.tree.leaves(f(x)))

    xs = np.stack([X, X[::-1] * 0.5])
    for g, arg in ((rune.grad(loss), X), (rune.vmap(f), xs), (rune.vmap(rune.grad(loss)), xs)):
        got, want = rune.jit(g)(arg), _interpreted(g, arg, monkeypatch=monkeypatch)
        for a, b in zip(rune.tree.leaves(got), rune.tree.leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_a_filled_buffer_is_copied_once_out_and_never_in_the_loop():
    ir = rune.jit(fill).lower(X).llvm_ir
    assert ir.count('call void @"llvm.memcpy') == 1
    # where the carry is read besides, its update is computed aside (a copy a step)
    ir = rune.jit(fill_from_previous_row).lower(X).llvm_ir
    assert ir.count('call void @"llvm.memcpy') >= 2


def test_an_inner_loop_takes_the_outer_carry_without_a_copy(monkeypatch):
    """An iterate in a loop's step whose carry starts from the step's carry, which
    nothing else reads after, runs in that carry's buffer (carries.py: `donated`): no
    copy in, none out (the snapshot buffer of a checkpointed loop's reverse pass)."""
    from rune_jit._src.backend.cpu.codegen import carries

    def copies(f):
        return rune.jit(f).lower(X).llvm_ir.count('call void @"llvm.memcpy')

    donated = [copies(f) for f in PROGRAMS[-3:]]
    monkeypatch.setattr(carries, "donated", lambda *args: False)
    assert [copies(f) for f in PROGRAMS[-3:]] == [n + 1 for n in donated[:2]] + donated[2:]


def test_a_carry_updated_in_place_has_no_spare_buffer():
    """A carry the step updates in place never uses the spare buffer of the pair a
    carry swaps between (carries.py: `in_place`): the loop holds it once."""
    def buffers(f):
        return rune.jit(f).lower(X).cost()["scratch_bytes"] // (N * X.nbytes)

    assert [buffers(f) for f in (fill, nested, handed_to_an_inner_loop)] == [1, 1, 1]
    assert buffers(fill_from_previous_row) >= 2
