"""scan: values against a Python loop over NumPy, derivatives against central
differences, vmap against a loop over lanes, for a table of steps and carries."""

from collections import namedtuple
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import assert_trees_close, lanes, np_scan

Particle = namedtuple("Particle", "x v")


# Each step is written once against `xp`: NumPy for the reference, rune_jit.numpy traced.

def affine_sin(xp, c, x):
    n = xp.sin(c) * x + 0.5 * x
    return n, c * x


def vector_carry(xp, c, x):
    n = xp.tanh(c * x + xp.cos(c))
    return n, xp.sum(n * x)


def pytree_rows(xp, c, x):
    a, b = x["a"], x["b"]
    return c * xp.cos(a) + xp.sum(b), (a * c, b * c)


def no_ys(xp, c, x):
    return xp.sin(c + x), None


def counting(xp, c, x):
    return c * 0.9 + 0.25, c


def mixed_dtypes(xp, c, x):
    a = c["a"] * 0.5 + xp.sin(x)
    b = c["b"] * np.float32(0.5) + xp.astype(xp.mean(x), np.float32)
    return {"a": a, "b": b, "n": c["n"] + 1}, {"s": xp.sum(a * b), "n": c["n"]}


def oscillator(xp, p, x):
    return Particle(p.x + 0.1 * p.v, p.v - 0.1 * xp.sin(p.x) + x), p.x


def crossed_carries(xp, c, x):
    """Small carries (kept in registers) whose new values read each other's current
    ones, element i from element j: all must be read before any is replaced."""
    a, b = c
    return (b[::-1] * x + a, xp.sin(a[::-1]) - b * 0.5), a[0] * b[1]


def lorenz(xp, s, x):
    d = xp.stack([10.0 * (s[1] - s[0]), s[0] * (28.0 - s[2]) - s[1],
                  s[0] * s[1] - (8.0 / 3.0) * s[2]])
    n = s + (0.01 + 0.001 * x) * d
    return n, n[0]


def float32_step(xp, c, x):
    n = xp.sin(c) * x + np.float32(0.25) * c
    return n, xp.sum(n * n)


@dataclass
class Case:
    name: str
    step: Callable
    init: Any
    xs: Any
    length: int | None = None
    reverse: bool = False
    rtol: float = 1e-12
    grad_check: dict = field(default_factory=dict)

    def rune_fn(self):
        return lambda init, xs: rune.scan(partial(self.step, rnp), init, xs, self.length,
                                          self.reverse)

    def reference(self, init, xs):
        return np_scan(partial(self.step, np), init, xs, self.length, self.reverse)


rows = np.linspace(-0.8, 1.1, 6)
mat = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
CASES = [
    Case("scalar", affine_sin, np.float64(0.3), rows),
    Case("reverse", affine_sin, np.float64(0.3), rows, reverse=True),
    Case("vector carry", vector_carry, np.array([0.1, -0.4, 0.7]), mat),
    Case("vector carry reverse", vector_carry, np.array([0.1, -0.4, 0.7]), mat, reverse=True),
    Case("pytree xs and ys", pytree_rows, np.float64(0.5), {"a": rows[:4], "b": mat[:4]}),
    Case("ys is None", no_ys, np.float64(0.2), rows),
    Case("xs is None, length", counting, np.float64(1.0), None, length=4),
    Case("xs is None, reverse", counting, np.float64(1.0), None, length=4, reverse=True),
    Case("mixed dtypes dict carry", mixed_dtypes,
         {"a": np.array([0.1, 0.2, 0.3]), "b": np.float32(1.5), "n": np.int32(0)}, mat,
         rtol=1e-6, grad_check=dict(eps=1e-2, rtol=2e-2)),
    Case("namedtuple carry", oscillator, Particle(np.float64(1.0), np.float64(0.0)), rows),
    Case("crossed small carries", crossed_carries,
         (np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, -0.6])), rows),
    Case("lorenz", lorenz, np.array([1.0, 1.0, 1.0]), rows),
    Case("float32", float32_step, np.array([0.5, -0.25], np.float32),
         np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2), rtol=1e-5,
         grad_check=dict(eps=1e-2, rtol=5e-2)),
]
ids = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_values_match_a_python_loop(backend, case):
    got = backend(case.rune_fn())(case.init, case.xs)
    assert_trees_close(got, case.reference(case.init, case.xs), rtol=case.rtol)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_derivatives_match_central_differences(case):
    rune.check_grads(case.rune_fn(), case.init, case.xs, **case.grad_check)


def batch(x):
    """Three lanes of a pytree of inputs, each lane different."""
    return rune.tree.tree_map(
        lambda v: np.stack([v, v * 0.75 + 0.125, v * -1.25]).astype(np.asarray(v).dtype), x)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_vmap_matches_a_loop_over_lanes(backend, case):
    init, xs = batch(case.init), batch(case.xs)
    got = backend(rune.vmap(case.rune_fn()))(init, xs)
    assert_trees_close(got, lanes(case.reference, init, xs), rtol=case.rtol)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_vmap_of_shared_xs(backend, case):
    """Lanes that differ only in init: xs is not mapped (in_axes None)."""
    init = batch(case.init)
    got = backend(rune.vmap(case.rune_fn(), in_axes=(0, None)))(init, case.xs)
    want = lanes(lambda i: case.reference(i, case.xs), init)
    assert_trees_close(got, want, rtol=case.rtol)


def running_product(xs):
    def step(acc, row):
        nxt = acc * row
        return nxt, nxt

    return rune.scan(step, np.float64(1.0), xs)


def test_running_product_of_the_spec(backend):
    xs = np.array([1.0, 2.0, 3.0, 4.0])
    total, prefixes = backend(running_product)(xs)
    assert total.tolist() == 24.0 and prefixes.tolist() == [1.0, 2.0, 6.0, 24.0]
    g = backend(rune.grad(lambda xs: running_product(xs)[0]))(xs)
    assert g.tolist() == [24.0, 12.0, 8.0, 6.0]


def test_reverse_scan_visits_rows_last_first(backend):
    """ys[i] is the carry before row i, and row i comes after rows i+1.. in reverse."""
    f = backend(lambda xs: rune.scan(lambda c, x: (c * 10 + x, c), np.float64(0.0), xs,
                                     reverse=True))
    carry, ys = f(np.array([1.0, 2.0, 3.0]))
    assert carry.tolist() == 321.0 and ys.tolist() == [32.0, 3.0, 0.0]


@pytest.mark.parametrize("xs, length", [(np.zeros((0, 3)), None), (None, 0)],
                         ids=["empty xs", "length 0"])
def test_length_zero_returns_init_and_empty_ys(backend, xs, length):
    init = np.array([1.0, 2.0])
    carry, (ys, zs) = backend(lambda init, xs: rune.scan(
        lambda c, x: (c * 2, (c, np.int32(1))), init, xs, length))(init, xs)
    np.testing.assert_array_equal(carry, init)
    assert ys.shape == (0, 2) and ys.dtype == np.float64
    assert zs.shape == (0,) and zs.dtype == np.int32


def test_length_zero_gradients_are_identity_and_zero():
    def f(init, xs):
        c, ys = rune.scan(lambda c, x: (c * x, c), init, xs)
        return c + rnp.sum(ys)

    g_init, g_xs = rune.grad(f, argnums=(0, 1))(np.float64(2.0), np.zeros(0))
    assert g_init.tolist() == 1.0 and g_xs.shape == (0,)


@pytest.mark.parametrize("init, dtype", [(1.0, np.float32), (0, np.float64)],
                         ids=["float into float32", "int into float64"])
def test_python_number_init_takes_the_loops_dtype(backend, init, dtype):
    """A Python number is weak (NEP 50): the carry gets the dtype the rows give it,
    as the same loop written in NumPy does."""
    xs = np.array([0.5, 2.0, 4.0], dtype)
    carry, ys = backend(lambda xs: rune.scan(lambda c, x: (c * x + x, c), init, xs))(xs)
    ref_carry, ref_ys = np_scan(lambda c, x: (c * x + x, c), init, xs)
    assert carry.dtype == dtype and ys.dtype == dtype
    np.testing.assert_allclose(carry, ref_carry, rtol=1e-6)
    np.testing.assert_allclose(ys, ref_ys, rtol=1e-6)


def test_float32_gradients_stay_float32():
    xs = np.array([0.5, 1.5, -0.3], np.float32)
    g = rune.grad(lambda xs: rune.scan(lambda c, x: (rnp.sin(c) * x, None),
                                       np.float32(0.2), xs)[0])(xs)
    assert g.dtype == np.float32


def test_gradient_with_respect_to_a_captured_value():
    """w is read by every step: its cotangent sums the contributions of all steps."""
    xs = np.array([0.3, -0.5, 0.9, 0.2])

    def f(w):
        return rune.scan(lambda c, x: (rnp.sin(c * w) + x, c * w), np.float64(0.4), xs)[0]

    def ref(w):
        c = 0.4
        for x in xs:
            c = np.sin(c * w) + x
        return c

    eps = 1e-6
    fd = (ref(1.3 + eps) - ref(1.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(rune.grad(f)(np.float64(1.3)), fd, rtol=1e-7)


def test_integer_carry_beside_a_float_one_under_grad():
    """The int counter is not differentiated, and does not stop the float carry's
    derivative from flowing."""
    def f(xs):
        (c, n), _ = rune.scan(lambda cn, x: ((cn[0] * x, cn[1] + 1), None),
                              (np.float64(1.0), np.int32(0)), xs)
        return c * rnp.astype(n, np.float64)

    xs = np.array([2.0, 3.0, 5.0])
    np.testing.assert_allclose(rune.grad(f)(xs), 3 * 30.0 / xs, rtol=1e-14)
