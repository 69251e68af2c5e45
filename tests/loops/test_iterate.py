"""iterate: the test before each step, lanes that stop on their own, the error that
names the first lane still running, and derivatives of the steps actually taken."""

from collections import namedtuple

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import assert_trees_close, lanes, np_iterate


def newton(a, max_steps=50):
    return rune.iterate(lambda x: (x + a / x) / 2, a,
                        until=lambda x: rnp.all(rnp.abs(x * x - a) < 1e-12),
                        max_steps=max_steps)


def np_newton(a, max_steps=50):
    return np_iterate(lambda x: (x + a / x) / 2, a,
                      lambda x: np.all(np.abs(x * x - a) < 1e-12), max_steps)


def test_newton_of_the_seed(backend):
    assert backend(newton)(np.array([4.0, 9.0])).tolist() == [2.0, 3.0]


def test_lanes_apart_bit_for_bit(backend):
    """Each lane's carry is exactly what a run of that lane alone gives: a lane that
    stopped is held, not stepped again."""
    a = np.array([1.0, 16.0, 1e6, 2.0, 1e-6])
    got = backend(rune.vmap(newton))(a)
    assert got[:3].tolist() == [1.0, 4.000000000000051, 1000.0]
    np.testing.assert_array_equal(got, [np_newton(x)[0] for x in a])
    np.testing.assert_array_equal(got, [newton(x) for x in a])


def test_until_is_tested_before_the_first_step(backend):
    """A carry that satisfies until takes no step: the counter stays 0."""
    f = backend(lambda x: rune.iterate(lambda c: (c[0] * 0.5, c[1] + 1), (x, np.int32(0)),
                                       until=lambda c: c[0] < 1.0, max_steps=5))
    x, n = f(np.float64(0.5))
    assert x.tolist() == 0.5 and n.tolist() == 0
    x, n = f(np.float64(3.0))
    assert x.tolist() == 0.75 and n.tolist() == 2


def test_no_step_means_identity_derivatives():
    """At a = 1 Newton takes no step: x = a, so dx/da = 1 (not sqrt's 1/2)."""
    g = rune.grad(newton)
    assert g(np.float64(1.0)).tolist() == 1.0
    _, t = rune.jvp(newton, (np.float64(1.0),), (np.float64(3.0),))
    assert t.tolist() == 3.0
    np.testing.assert_array_equal(rune.vmap(g)(np.array([1.0, 1.0])), [1.0, 1.0])


def count_to_three(max_steps):
    return rune.iterate(lambda n: n + 1, np.int64(0), until=lambda n: n >= 3,
                        max_steps=max_steps)


def test_until_holding_after_exactly_max_steps_is_not_an_error(backend):
    assert backend(lambda: count_to_three(3))().tolist() == 3
    with pytest.raises(rune.IterateError):
        count_to_three(2)


SEED_MESSAGE = "rune_jit.iterate: until is still false after max_steps = 3 steps"


def test_error_outside_vmap_names_no_lane():
    with pytest.raises(rune.IterateError) as err:
        newton(np.float64(16.0), max_steps=3)
    assert str(err.value) == SEED_MESSAGE


@pytest.mark.parametrize("grid, lane", [
    ([[1.0, 4.0], [1.0, 16.0]], "(0, 1)"),
    ([[1.0, 1.0, 1.0], [16.0, 1.0, 1.0]], "(1, 0)"),
    ([[1.0, 1.0, 1.0], [1.0, 1.0, 1e6]], "(1, 2)"),
])
def test_error_under_nested_vmap_names_the_lane_outermost_first(grid, lane):
    with pytest.raises(rune.IterateError) as err:
        rune.vmap(rune.vmap(lambda a: newton(a, 3)))(np.array(grid))
    assert str(err.value) == f"{SEED_MESSAGE}, in lane {lane}"


def test_error_names_the_lane_of_the_mapped_axis():
    """in_axes=1 maps columns: the lane is the column's index."""
    a = np.array([[1.0, 1.0, 16.0], [1.0, 1.0, 1.0]])
    with pytest.raises(rune.IterateError) as err:
        rune.vmap(lambda col: newton(col, 3), in_axes=1)(a)
    assert str(err.value) == f"{SEED_MESSAGE}, in lane 2"


def halve(x):
    return rune.iterate(lambda v: v * 0.5, x, until=lambda v: v < 1.0, max_steps=10)


def test_nan_in_until_keeps_running_and_raises():
    """NaN < 1 is false: the lane never stops, and the loop says so rather than
    returning NaN as if it had converged."""
    with pytest.raises(rune.IterateError) as err:
        halve(np.float64(np.nan))
    assert str(err.value) == "rune_jit.iterate: until is still false after max_steps = 10 steps"
    with pytest.raises(rune.IterateError) as err:
        rune.vmap(halve)(np.array([3.0, 0.5, np.nan, 8.0]))
    assert str(err.value).endswith(", in lane 2")


def test_nan_appearing_mid_loop_raises_in_its_lane():
    def f(x):
        return rune.iterate(lambda v: rnp.sqrt(v - 1.0), x, until=lambda v: v < 0.5,
                            max_steps=8)

    # 2 -> 1 -> 0 stops; 1.5 -> 0.707 -> nan runs on
    with pytest.raises(rune.IterateError) as err:
        rune.vmap(f)(np.array([2.0, 1.5]))
    assert str(err.value).endswith(", in lane 1")


def test_lanes_with_very_different_step_counts_hold_their_pytree_carry(backend):
    """A dict carry with a float64 array, a float32 scalar and an int32 counter: each
    lane's carry, counter included, is that of a run of the lane alone."""
    def f(x):
        init = {"v": x * np.ones(2), "s": np.float32(1.0), "n": np.int32(0)}
        return rune.iterate(
            lambda c: {"v": c["v"] * 0.5 + 0.01, "s": c["s"] * np.float32(1.5),
                       "n": c["n"] + 1},
            init, until=lambda c: rnp.max(c["v"]) < 1.0, max_steps=60)

    def ref(x):
        init = {"v": x * np.ones(2), "s": np.float32(1.0), "n": np.int32(0)}
        return np_iterate(lambda c: {"v": c["v"] * 0.5 + 0.01, "s": c["s"] * np.float32(1.5),
                                     "n": c["n"] + np.int32(1)},
                          init, lambda c: np.max(c["v"]) < 1.0, 60)[0]

    xs = np.array([0.5, 3.0, 1e9, 40.0])
    got = backend(rune.vmap(f))(xs)
    assert got["n"].tolist() == [0, 2, 30, 6]
    want = lanes(ref, xs)
    assert_trees_close(got, want, rtol=0)


Orbit = namedtuple("Orbit", "pos vel")


def test_namedtuple_carry(backend):
    def f(p0):
        return rune.iterate(lambda o: Orbit(o.pos + 0.5 * o.vel, o.vel - 0.5 * o.pos),
                            Orbit(p0, np.float64(0.0)),
                            until=lambda o: o.pos < 0.0, max_steps=20)

    got = backend(f)(np.float64(1.0))
    want, _ = np_iterate(lambda o: Orbit(o.pos + 0.5 * o.vel, o.vel - 0.5 * o.pos),
                         Orbit(1.0, 0.0), lambda o: o.pos < 0.0, 20)
    assert isinstance(got, Orbit)
    np.testing.assert_allclose([got.pos, got.vel], [want.pos, want.vel], rtol=1e-14)


def test_float32_carry(backend):
    f = backend(lambda x: rune.iterate(lambda v: v * np.float32(0.5), x,
                                       until=lambda v: v < 1, max_steps=10))
    got = f(np.float32(12.0))
    assert got.dtype == np.float32 and got.tolist() == 0.75


def decay(x, w):
    """Steps taken depend on x (stable under small changes): the derivative is that
    of the steps taken."""
    return rune.iterate(lambda v: v * 0.5 + rnp.sin(v * w) * 0.01, x,
                        until=lambda v: v < 1.0, max_steps=80)


def np_decay(x, w):
    v, n = np_iterate(lambda v: v * 0.5 + np.sin(v * w) * 0.01, x, lambda v: v < 1.0, 80)
    return v, n


@pytest.mark.parametrize("x", [0.5, 3.0, 37.0, 150.0])
def test_reverse_mode_through_iterate_passes_check_grads(x):
    rune.check_grads(decay, np.float64(x), np.float64(0.7))


def test_gradient_is_the_product_of_the_steps_taken():
    """v -> v/2 taken n times: dv/dx = 2**-n exactly, n depending on x."""
    for x, n in [(0.5, 0), (3.0, 2), (1000.0, 10)]:
        assert rune.grad(halve)(np.float64(x)).tolist() == 2.0 ** -n


def test_vmap_of_grad_equals_grad_per_lane_with_very_different_step_counts():
    xs = np.array([0.5, 3.0, 1e3, 2e9, 1.5])
    w = np.float64(0.7)
    steps = [np_decay(x, 0.7)[1] for x in xs]
    assert steps[0] == 0 and max(steps) > 25 * min(s for s in steps if s)
    g = rune.grad(decay, argnums=(0, 1))
    got = rune.vmap(g, in_axes=(0, None))(xs, w)
    want = [g(x, w) for x in xs]
    np.testing.assert_allclose(got[0], [d[0] for d in want], rtol=1e-13)
    np.testing.assert_allclose(got[1], [d[1] for d in want], rtol=1e-13)


def test_grad_of_vmap_equals_grad_per_lane():
    xs = np.array([0.5, 3.0, 1e3, 2e9])
    w = np.float64(0.7)
    got = rune.grad(lambda xs: rnp.sum(rune.vmap(decay, in_axes=(0, None))(xs, w)))(xs)
    np.testing.assert_allclose(got, [rune.grad(decay)(x, w) for x in xs], rtol=1e-13)


def test_jvp_matches_central_differences_per_lane():
    xs = np.array([0.5, 3.0, 1e3])
    w = np.float64(0.7)
    _, t = rune.jvp(rune.vmap(decay, in_axes=(0, None)), (xs, w), (np.ones(3), np.float64(0)))
    eps = 1e-6
    fd = [(np_decay(x + eps, 0.7)[0] - np_decay(x - eps, 0.7)[0]) / (2 * eps) for x in xs]
    np.testing.assert_allclose(t, fd, rtol=1e-6)


def test_gradient_with_respect_to_a_captured_value_with_lanes():
    """w is shared by the lanes; each lane's steps add to its cotangent."""
    xs = np.array([3.0, 1e3])
    total = lambda w: rnp.sum(rune.vmap(decay, in_axes=(0, None))(xs, w))
    eps = 1e-6
    fd = sum((np_decay(x, 0.7 + eps)[0] - np_decay(x, 0.7 - eps)[0]) / (2 * eps) for x in xs)
    np.testing.assert_allclose(rune.grad(total)(np.float64(0.7)), fd, rtol=1e-6)


def test_until_may_read_a_value_being_differentiated():
    """until compares with a, which is differentiated; the test itself has no
    derivative, the steps do: v = 10 a / 16 after four halvings."""
    f = lambda a: rune.iterate(lambda v: v * 0.5, a * 10, until=lambda v: v < a, max_steps=10)
    assert rune.grad(f)(np.float64(1.0)).tolist() == 0.625
    np.testing.assert_array_equal(rune.vmap(rune.grad(f))(np.array([1.0, 0.3])), 0.625)


def _rotate(theta, max_steps=500):
    """Two small carries (kept in registers when compiled) that read each other's
    current values, element i from element j, until the first one is small."""
    def step(c):
        a, b = c
        return (b[::-1] * 0.5 - a * 0.25, rnp.sin(a[::-1]) * theta)
    init = (np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -0.4]))
    return rune.iterate(step, init, until=lambda c: rnp.sum(c[0] * c[0]) < 1e-6,
                        max_steps=max_steps)


def test_small_carries_that_read_each_other(backend):
    eager, compiled = _rotate(0.9), backend(_rotate)(0.9)
    assert_trees_close(compiled, eager, rtol=1e-13)
    rune.check_grads(lambda t: rnp.sum(_rotate(t)[1]), np.float64(0.9), rtol=1e-3)
    lanes_ = np.array([0.5, 0.9, 1.1])
    assert_trees_close(rune.jit(rune.vmap(_rotate))(lanes_),
                       tuple(np.stack(v) for v in zip(*[_rotate(t) for t in lanes_])),
                       rtol=1e-13)
