"""Property tests: generated step functions inside scan and iterate.

A step is a small program over its carry, its row and a captured value, drawn
from a table of smooth ops; its new carry is squashed by tanh so that values
and derivatives stay bounded over the steps. The same program runs on NumPy (a
plain Python loop, the reference) and traced inside rune_jit's loops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import assert_trees_close, lanes, np_iterate, np_scan

# No shrinking: programs are at most five ops already, and shrinking a failing
# example re-runs whole transformations hundreds of times.
SETTINGS = settings(deadline=None, derandomize=True, max_examples=15,
                    phases=(Phase.explicit, Phase.generate))

# name -> (arity, apply(xp, *operands)); each is smooth everywhere.
OPS = {
    "sin": (1, lambda xp, a: xp.sin(a)),
    "cos": (1, lambda xp, a: xp.cos(a)),
    "tanh": (1, lambda xp, a: xp.tanh(a)),
    "log1p_sq": (1, lambda xp, a: xp.log(1.0 + a * a)),
    "scale": (1, lambda xp, a: a * -1.5),
    "add": (2, lambda xp, a, b: a + b),
    "sub": (2, lambda xp, a, b: a - b),
    "mul": (2, lambda xp, a, b: a * b),
    "div_1p_sq": (2, lambda xp, a, b: a / (1.0 + b * b)),
    "sum_mul": (2, lambda xp, a, b: a * xp.sum(b)),
}
K = 3  # every value is f64[K]


@dataclass(frozen=True)
class Program:
    """ops over numbered values: the inputs first, then one value per op."""
    num_inputs: int
    ops: tuple[tuple[str, tuple[int, ...]], ...]

    def run(self, xp, *inputs):
        env = list(inputs)
        for name, args in self.ops:
            env.append(OPS[name][1](xp, *[env[a] for a in args]))
        return env[-1]


@st.composite
def programs(draw, num_inputs):
    ops = []
    for i in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(sorted(OPS)))
        arity = OPS[name][0]
        ops.append((name, tuple(draw(st.integers(0, num_inputs + i - 1))
                                for _ in range(arity))))
    return Program(num_inputs, tuple(ops))


def values(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, s) for s in shapes]


# ------------------------------------------------------------- scan


def scan_step(prog, xp, w):
    def step(c, r):
        out = prog.run(xp, c, r, w)
        return xp.tanh(out), out

    return step


def rune_scan(prog, reverse):
    return lambda init, xs, w: rune.scan(scan_step(prog, rnp, w), init, xs, reverse=reverse)


def np_scan_ref(prog, reverse):
    return lambda init, xs, w: np_scan(scan_step(prog, np, w), init, xs, reverse=reverse)


scan_cases = st.tuples(programs(3), st.booleans(), st.integers(1, 4), st.integers(0, 2**16))


@SETTINGS
@given(scan_cases)
def test_scan_interpreter_matches_a_python_loop(case):
    prog, reverse, n, seed = case
    init, xs, w = values(seed, K, (n, K), K)
    assert_trees_close(rune_scan(prog, reverse)(init, xs, w),
                       np_scan_ref(prog, reverse)(init, xs, w), rtol=1e-12, atol=1e-14)


@SETTINGS
@given(scan_cases)
def test_scan_derivatives_match_central_differences(case):
    prog, reverse, n, seed = case
    rune.check_grads(rune_scan(prog, reverse), *values(seed, K, (n, K), K))


@SETTINGS
@given(scan_cases)
@pytest.mark.slow
def test_scan_second_derivatives_match_central_differences(case):
    """The gradient's own jvp and pullback (reverse mode of the reverse loop)."""
    prog, reverse, n, seed = case
    f = rune_scan(prog, reverse)
    g = rune.grad(lambda init, xs, w: rnp.sum(f(init, xs, w)[0]), argnums=(0, 1, 2))
    rune.check_grads(g, *values(seed, K, (n, K), K))


@SETTINGS
@given(scan_cases, st.sampled_from([(0, 0, None), (None, 0, 0), (0, None, 0), (0, 0, 0)]))
def test_scan_vmap_matches_a_loop_over_lanes(case, in_axes):
    prog, reverse, n, seed = case
    args = values(seed, K, (n, K), K)
    batched = [np.stack([a, a * 0.5 + 0.1, -a]) if ax == 0 else a
               for a, ax in zip(args, in_axes)]
    got = rune.vmap(rune_scan(prog, reverse), in_axes=in_axes)(*batched)
    ref = np_scan_ref(prog, reverse)
    want = lanes(lambda i: ref(*[b[i] if ax == 0 else b for b, ax in zip(batched, in_axes)]),
                 np.arange(3))
    assert_trees_close(got, want, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------- iterate


def iterate_step(prog, xp, w):
    """The carry is (value, steps taken); the program only sees the value."""
    def step(state):
        c, k = state
        return xp.tanh(prog.run(xp, c, w)), k + 1

    return step


def rune_iterate(prog):
    def f(c0, w, m):
        return rune.iterate(iterate_step(prog, rnp, w), (c0, np.int32(0)),
                            until=lambda s: s[1] >= m, max_steps=6)

    return f


def np_iterate_ref(prog):
    def f(c0, w, m):
        state, _ = np_iterate(iterate_step(prog, np, w), (c0, np.int32(0)),
                              lambda s: s[1] >= m, 6)
        return state

    return f


iterate_cases = st.tuples(programs(2), st.lists(st.integers(0, 6), min_size=3, max_size=3),
                          st.integers(0, 2**16))


def iterate_args(case) -> list:
    """(c0, w, m) of an iterate case: its first lane's step count."""
    _, steps, seed = case
    return [*values(seed, K, K), np.int32(steps[0])]


@SETTINGS
@given(iterate_cases)
def test_iterate_interpreter_matches_a_python_loop(case):
    args = iterate_args(case)
    assert_trees_close(rune_iterate(case[0])(*args), np_iterate_ref(case[0])(*args),
                       rtol=1e-12, atol=1e-14)


@SETTINGS
@given(iterate_cases)
def test_iterate_derivatives_match_central_differences(case):
    c0, w, m = iterate_args(case)
    rune.check_grads(lambda c0, w: rune_iterate(case[0])(c0, w, m)[0], c0, w)


@SETTINGS
@given(iterate_cases)
def test_iterate_vmap_matches_a_loop_over_lanes(case):
    """Lanes that take different numbers of steps, values and gradients."""
    prog, steps, seed = case
    c0s, w = np.stack(values(seed, K, K, K)), values(seed + 1, K)[0]
    ms = np.array(steps, np.int32)
    f = rune_iterate(prog)
    got = rune.vmap(f, in_axes=(0, None, 0))(c0s, w, ms)
    want = lanes(lambda c0, m: np_iterate_ref(prog)(c0, w, m), c0s, ms)
    assert_trees_close(got, want, rtol=1e-12, atol=1e-14)

    g = rune.grad(lambda c0, w, m: rnp.sum(f(c0, w, m)[0]), argnums=(0, 1))
    got_g = rune.vmap(g, in_axes=(0, None, 0))(c0s, w, ms)
    want_g = lanes(lambda c0, m: g(c0, w, m), c0s, ms)
    assert_trees_close(got_g, want_g, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------- compiled against interpreted


def transformations(f, n_args):
    """f and its transformations, each a function of the same arguments (the first
    one batched for vmap)."""
    loss = lambda *a: rnp.sum(f(*a)[0])  # noqa: E731

    def jvp_of_loss(*a):  # along ones, in the first two arguments
        ones = tuple(np.ones_like(x) for x in a[:2])
        return rune.jvp(lambda x, y: loss(x, y, *a[2:]), a[:2], ones)[1]

    return {
        "value": f,
        "grad": rune.grad(loss, argnums=(0, 1)),
        "jvp": jvp_of_loss,
        "vmap": rune.vmap(f, in_axes=(0,) + (None,) * (n_args - 1)),
        "vmap of grad": rune.vmap(rune.grad(loss), in_axes=(0,) + (None,) * (n_args - 1)),
    }


def check_compiled(f, args, batched_first):
    """Compiled equals interpreted for f and its transformations; vmap maps the first
    argument, `batched_first`."""
    from rune_jit._src import config

    for name, g in transformations(f, len(args)).items():
        call = [batched_first] + list(args[1:]) if name.startswith("vmap") else list(args)
        compiled = rune.jit(g)(*call)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(config, "backend", "interpret")
            interpreted = g(*call)
        assert_trees_close(compiled, interpreted, rtol=1e-12, atol=1e-13)


@SETTINGS
@given(scan_cases)
def test_compiled_scans_match_the_interpreter(case):
    prog, reverse, n, seed = case
    init, xs, w = values(seed, K, (n, K), K)
    check_compiled(rune_scan(prog, reverse), [init, xs, w], np.stack([init, init * 0.5, -init]))


@SETTINGS
@given(iterate_cases)
def test_compiled_iterates_match_the_interpreter(case):
    args = iterate_args(case)
    c0 = args[0]
    check_compiled(rune_iterate(case[0]), args, np.stack([c0, c0 * 0.5, -c0]))
