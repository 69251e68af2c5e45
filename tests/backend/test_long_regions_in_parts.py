"""Long regions lowered in parts, each an LLVM function of its own (backend/cpu/codegen/chunks.py):
what LLVM compiles stays a bounded function whatever the program's length (issue 18).

With `tiny_parts` every region of more than a few equations is cut into parts, so that
values of every kind cross cuts: scalars, small arrays that parts keep in registers,
large arrays in the caller's buffers, lazy views, bools and integers, loop rows and ys,
carries, tapes, and failures (IterateError, IndexError) raised inside a part. Each
program is compared with the interpreter, eager and jitted and under the
transformations."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import fuzz_programs as fuzz
import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit import tree
from rune_jit._src.backend.cpu.codegen import chunks
from rune_jit._src.backend.cpu import runtime


# compiled as traced: their repeated operations, not a loop over them
pytestmark = pytest.mark.usefixtures("layers_as_written")


@pytest.fixture
def tiny_parts(monkeypatch):
    """Parts of a few equations, compiled afresh (no cached code made with other parts)."""
    monkeypatch.setattr(chunks, "PART_WEIGHT", 3)
    monkeypatch.setenv("RUNE_JIT_CACHE", "0")
    monkeypatch.setattr(runtime, "_cache", type(runtime._cache)())
    monkeypatch.setattr(runtime, "_recent", type(runtime._recent)())


def interpreted(f, *args):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "backend", "interpret")
        return rune.jit(f)(*args)


def agree(f, *args, rtol=1e-12):
    """f jitted (in parts), f called eagerly and f interpreted give the same values."""
    want = tree.leaves(interpreted(f, *args))
    for got in (rune.jit(f)(*args), f(*args)):
        got = tree.leaves(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300)
            assert np.asarray(g).dtype == np.asarray(w).dtype


def parts_of(f, *args) -> int:
    return len(re.findall(r"define internal i64 @\"rune\.part", rune.jit(f).lower(*args).llvm_ir))


def straight(x, y, k, flags):
    """Scalars, small and large arrays, a lazy view, ints and bools across cuts."""
    a = rnp.sin(x) * 2.0 + y[::-1]            # large, lazy then stored
    b = rnp.cos(y[:4]) + x[-1]               # small (4 elements)
    c = rnp.sum(a) * b[0]                    # a scalar
    i = (k * 3 + 1) % 7                      # an int scalar
    m = rnp.where(flags, b, -b)              # bools
    t = a.reshape(10, 100).T                 # a view of a stored value
    d = t[1:4, 2] * c + m[1] + i
    e = rnp.concatenate([b * 2.0, d, rnp.cumsum(b)])
    return e, t[::2, ::3], c > 0, i, x  # an output that is an argument


def test_a_program_in_parts_agrees_with_the_interpreter(tiny_parts):
    x, y = np.linspace(-1.0, 1.0, 1000), np.linspace(0.5, 1.5, 1000)
    args = (x, y, np.int64(5), np.array([True, False, True, True]))
    assert parts_of(straight, *args) > 5
    agree(straight, *args)


def loss(c, xs):
    """A scan whose step crosses cuts: a small carry, a large one, an int carry, rows of
    xs (vectors and scalars), ys of every size, a step read backwards."""
    def step(carry, row):
        s, big, n = carry
        v, w = row
        s = rnp.tanh(s * v[:4] + w) + s[::-1] * 0.5
        big = big * 0.99 + rnp.sin(rnp.sum(s)) * v[4]
        n = n + (w > 0).astype(np.int64)
        return (s, big, n), (s * w, rnp.sum(big), w > 0.1)

    big0 = rnp.linspace(0.0, 1.0, 300)
    (s, big, n), (ys, sums, flags) = rune.scan(step, (c, big0, np.int64(0)),
                                               (xs, xs[:, 0] - 0.3), reverse=True)
    return (rnp.sum(s) + rnp.sum(big) * 1e-3 + rnp.sum(ys) + rnp.sum(sums) * 1e-3 + n
            + rnp.sum(flags))


def test_a_scan_step_in_parts_and_its_transformations(tiny_parts):
    c, xs = np.linspace(0.1, 0.4, 4), np.linspace(-1.0, 1.0, 35).reshape(7, 5)
    assert parts_of(loss, c, xs) > 5
    agree(loss, c, xs)
    agree(rune.grad(loss), c, xs, rtol=1e-10)
    agree(lambda c, xs: rune.jvp(loss, (c, xs), (c * 0 + 1.0, xs * 0.5)), c, xs, rtol=1e-10)
    cs = np.stack([c, c * 2, c - 0.3])
    agree(rune.vmap(loss, in_axes=(0, None)), cs, xs, rtol=1e-10)
    agree(rune.vmap(rune.grad(loss), in_axes=(0, None)), cs, xs, rtol=1e-10)
    rune.check_grads(rune.jit(loss), c, xs, modes=["rev"])


def newton(a):
    """An iterate whose step and until cross cuts; its tapes (reverse mode) too."""
    def step(z):
        x, k = z
        return x - (x * x - a) / (2.0 * x) * 0.5 + rnp.sin(x) * 0.0, k + 1

    x, k = rune.iterate(step, (a * 0 + 1.0, np.int64(0)),
                        until=lambda z: rnp.all(rnp.abs(z[0] * z[0] - a) < 1e-12),
                        max_steps=200)
    return rnp.sum(x) + k


def test_an_iterate_in_parts_and_its_failures(tiny_parts):
    a = np.array([2.0, 3.0, 5.0])
    agree(newton, a)
    agree(rune.grad(newton), a, rtol=1e-8)
    agree(rune.vmap(rune.grad(newton)), np.stack([a, a * 2]), rtol=1e-8)

    def short(a):
        x = rune.iterate(lambda x: x * 0.5 + 1.0 + rnp.sin(x) * 0.0, a,
                         until=lambda x: rnp.all(x > 10.0), max_steps=3)
        return rnp.cos(x) * 2.0 + x[::-1]

    with pytest.raises(rune.IterateError, match=r"max_steps = 3 steps, in lane 1"):
        rune.jit(rune.vmap(short))(np.stack([a + 20, a, a]))

    def gathered(x, i):
        y = rnp.sin(x) * 2.0 + rnp.cos(x)
        return y[i] + rnp.sum(y * 3.0)

    assert parts_of(gathered, a, np.array([0, 2])) > 1
    agree(gathered, a, np.array([0, 2]))
    with pytest.raises(IndexError):
        rune.jit(gathered)(a, np.array([0, 7]))


def test_nested_loops_branches_and_threaded_maps_in_parts(tiny_parts):
    def f(x, ys):
        def outer(c, y):
            def inner(d, z):
                return rnp.where(z > 0, rune.cond(d[0] > 0, lambda: d * z, lambda: d - z),
                                 d + 1.0), rnp.sum(d)
            d, s = rune.scan(inner, c, y)
            return d * 0.5, s
        big = rnp.exp(-x) * 3.0 + rnp.sqrt(x + 1.0)  # large enough for the pool's threads
        c, s = rune.scan(outer, x[:3], ys)
        return rnp.sum(big) + rnp.sum(c) + rnp.sum(s)

    x, ys = np.linspace(0.0, 1.0, 200_000), np.linspace(-1.0, 1.0, 24).reshape(4, 2, 3)
    agree(f, x, ys, rtol=1e-11)
    agree(rune.grad(f, argnums=1), x, ys, rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("start", range(0, 100, 25))
def test_generated_programs_agree_in_parts(tiny_parts, start):
    """The fuzzer's programs (tests/loops/test_fuzz.py), every region cut into tiny parts:
    100 seeds (test_fuzz.py runs 800 whole)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports, stats = fuzz.run_chunk(range(start, start + 25))
    assert not reports, "\n\n".join(reports)
    assert stats["programs"] == 25


@pytest.mark.slow
def test_what_llvm_compiles_stays_bounded_as_a_step_grows():
    """bench/compile_scaling.py's step of k operations on 4 floats: its gradient is in
    more parts as k grows, and no LLVM function of it (the code that joins the parts
    included) grows with k."""
    def sizes(k):
        ops = [lambda c, x, i: rnp.sin(c), lambda c, x, i: c * (1.0 - 1e-4 * i),
               lambda c, x, i: c + rnp.roll(c, 1) * x, lambda c, x, i: rnp.tanh(c)]

        def step(c, x):
            for i in range(k):
                c = ops[i % 4](c, x, i)
            return c, None

        def f(c0, xs):
            return rnp.sum(rune.scan(step, c0, xs)[0])

        text = rune.jit(rune.grad(f)).lower(np.linspace(0.1, 0.4, 4), np.zeros(100)).llvm_ir
        return [body.count("\n") for body in text.split("\ndefine ")[1:]]

    small, large = sizes(300), sizes(1500)
    assert len(large) > 3 * len(small) / 2
    assert max(large) < 1.3 * max(small), (max(small), max(large))


def test_full_collections_are_held_off_while_compiling_and_run_again_after():
    """Tracing and compiling run without collections of the oldest generation
    (rune_jit/_src/call/gc_pause.py: they made compile time grow faster than the program); the
    thresholds are the user's again afterwards, also when the trace fails."""
    import gc

    from rune_jit._src.call import gc_pause

    seen = []

    def f(x):
        seen.append(gc.get_threshold()[2])
        return x * 2.0

    def bad(x):
        raise ValueError("no")

    before = gc.get_threshold()
    gc.set_threshold(500, 7, 13)
    try:
        rune.jit(f)(np.ones(3))
        with pytest.raises(ValueError):
            rune.jit(bad)(np.ones(3))
        assert seen == [gc_pause.NEVER] and gc.get_threshold() == (500, 7, 13)
    finally:
        gc.set_threshold(*before)
