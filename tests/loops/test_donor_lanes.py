"""Donor lanes: under vmap, the step of an iterate is never evaluated at a lane's carry
once that lane has stopped (a stopped lane computes a running lane's step and discards
it), in the interpreter and in compiled code (lanes one at a time, and blocks of lanes
in SIMD registers), forward and in reverse mode.

The loops count x down by 1 from a (a fractional part of 0.1: a lane stops at x = 0.1),
until x < 0.5, so a point where x < 0.5 is one only a stopped lane sits at. Checks,
RUNE_JIT_DEBUG_NANS and out-of-bounds gathers are also masked by the running lanes;
`unmasked` takes that mask away, so that what they see is every point evaluated."""

import itertools

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

STEPS = np.array([3, 1, 0, 7, 2, 40, 5, 1] * 5 + [9, 0, 3])  # 43 lanes: full blocks and not
A = STEPS + 0.1
_unique = itertools.count()


@pytest.fixture
def unmasked(monkeypatch):
    """Checks that fail in lanes that stopped too, interpreted and compiled (not from the
    caches: the programs other tests compiled are masked)."""
    from rune_jit._src.backend.cpu.codegen.lower import Lowerer
    from rune_jit._src.ops import check

    monkeypatch.setattr(check, "taking", lambda: None)
    monkeypatch.setattr(Lowerer, "running", property(lambda self: None, lambda self, v: None),
                        raising=False)
    monkeypatch.setenv("RUNE_JIT_CACHE", "0")


@pytest.fixture
def nan_checks(monkeypatch):
    """The checks RUNE_JIT_DEBUG_NANS=1 turns on at import, in this process."""
    from rune_jit._src import trace
    from rune_jit._src.ops import nan_checks as nc

    monkeypatch.setattr(trace, "after_staging", nc.after_staging)
    monkeypatch.setattr(trace, "after_eager", nc.after_eager)


def count_down(probe):
    """x from a down by 1 until x < 0.5; `probe(x)` (0 where x >= 0.5) is added to the
    step. The stop differs by a hair per call: no program another test compiled is
    reused."""
    stop = 0.5 + 1e-9 * next(_unique)

    def f(a):
        return rune.iterate(lambda x: x - 1.0 + probe(x), a, until=lambda x: x < stop,
                            max_steps=64)
    return f


def checked(x):
    rune.check(x >= 0.5, "the step ran at x = {}", x)
    return 0.0 * x


def logged(x):  # NaN (and, with RUNE_JIT_DEBUG_NANS, an error) where x < 0.25
    return 0.0 * rnp.log(x - 0.25)


TABLE = np.linspace(0.0, 1.0, 64)


def gathered(x):  # in bounds where x >= 0.5: int(64.6 - x) < 64 (an array of indices: a
    # scalar one is a dynamic slice, which clamps)
    return 0.0 * rnp.asarray(TABLE)[rnp.reshape((64.6 - x).astype(np.int32), (1,))][0]


def transformed(f, how):
    if how == "vmap":
        return rune.vmap(f)
    if how == "vmap_of_grad":
        return rune.vmap(rune.grad(f))
    return rune.grad(lambda a: rnp.sum(rune.vmap(f)(a)))  # grad of vmap


@pytest.mark.parametrize("how", ["vmap", "vmap_of_grad", "grad_of_vmap"])
@pytest.mark.parametrize("probe", [checked, logged, gathered])
@pytest.mark.filterwarnings("ignore:invalid value")
def test_no_step_is_evaluated_where_only_a_stopped_lane_is(mode, unmasked, nan_checks,
                                                           probe, how):
    got = mode(transformed(count_down(probe), how))(A)
    want = np.full(A.shape, 0.1) if how == "vmap" else np.ones(A.shape)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_the_checks_still_name_the_first_running_lane_that_fails(mode):
    """A lane that stopped computes its donor's step, whose check fails in the donor: the
    error names the donor (lane 5, the first lane still running at step 10), not a lane
    that stopped before it."""
    def f(a):
        def step(x):
            rune.check(x != 30.1, "x = {}", x)  # lane 5 (and its copies) at step 10
            return x - 1.0
        return rune.iterate(step, a, until=lambda x: x < 0.5, max_steps=64)

    with pytest.raises(rune.CheckError, match=r"x = 30.1, in lane 5, at step 10 of the iterate"):
        mode(rune.vmap(f))(A)


@pytest.mark.parametrize("sequential", [True, False])
def test_callbacks_see_only_running_points(mode, sequential):
    """A callback that records its arguments: every point recorded is one where x >= 0.5,
    and each lane's points are its own (its a, and x = a - k), eager and jitted. A pure
    callback vmapped sequentially is called once per lane, stopped ones too: those see
    their donor's point."""
    seen = []

    def record(a, x):
        seen.append(np.stack(np.broadcast_arrays(a, x), -1).reshape(-1, 2))
        return np.zeros_like(x)

    def f(a):
        def step(x):
            if sequential:
                x = x + rune.pure_callback(record, x, a, x, vmap_method="sequential")
            else:
                rune.debug.callback(record, a, x)
            return x - 1.0
        return rune.iterate(step, a, until=lambda x: x < 0.5, max_steps=64)

    np.testing.assert_allclose(mode(rune.vmap(f))(A), 0.1, atol=1e-12)
    points = np.concatenate(seen)
    assert points[:, 1].min() >= 0.5
    np.testing.assert_allclose((points[:, 0] - points[:, 1]) % 1.0, 0.0, atol=1e-9)
    assert {tuple(p) for p in np.round(points, 6)} == {
        (round(a, 6), round(a - k, 6)) for a, n in zip(A, STEPS) for k in range(n)}


def count_only(x, cap=3):
    """An iterate whose until reads a counter the map does not change."""
    return rune.iterate(lambda c: (c[0] * 0.5, c[1] + 1), (x, 0),
                        until=lambda c: c[1] >= 10, max_steps=cap)


TOGETHER = "rune_jit.iterate: until is still false after max_steps = 3 steps"


@pytest.mark.parametrize("how, shape", [
    (lambda f: rune.vmap(f), (3,)),
    (lambda f: rune.vmap(rune.vmap(f)), (2, 3)),
    (lambda f: rune.vmap(rune.grad(lambda x: f(x)[0])), (3,)),
])
def test_lanes_that_stop_together_name_no_lane(mode, how, shape):
    """Rune's rule: when until does not depend on the mapped axis, the lanes stop
    together and running out of steps is the loop's error, not a lane's."""
    with pytest.raises(rune.IterateError) as err:
        mode(how(count_only))(np.ones(shape))
    assert str(err.value) == TOGETHER
    x = np.full((2, 3), 1024.0)
    np.testing.assert_array_equal(mode(rune.vmap(lambda x: count_only(x, 10)[0]))(x), 1.0)


def test_only_the_axes_until_reads_are_named(mode):
    """Nested maps: the inner one changes until (lanes stop apart along it), the outer
    one does not; the error names the lane along the inner axis alone."""
    def f(row, cap):
        return rune.iterate(lambda c: (c[0] + row, c[1] + 1), (0.0, 0),
                            until=lambda c: c[1] >= cap, max_steps=3)

    caps = np.array([2, 3, 4, 2])
    rows = np.ones((2, 4))
    with pytest.raises(rune.IterateError) as err:
        mode(rune.vmap(lambda r: rune.vmap(f)(r, caps)))(rows)
    assert str(err.value) == TOGETHER + ", in lane 2"


def _inner_loop(x):
    return 0.0 * rune.iterate(lambda y: y / 2, x, until=lambda y: y < 1.0, max_steps=99)


@pytest.mark.parametrize("probe, seen", [
    (logged, False), (lambda x: 0.0 * x * x, False), (checked, True), (gathered, True),
    (_inner_loop, True),
    (lambda x: 0.0 * rune.pure_callback(np.sin, x, x), True),
    (lambda x: rune.debug.callback(print, x) or 0.0 * x, True),
])
def test_stopped_lanes_take_donors_only_where_a_stopped_point_could_be_seen(probe, seen):
    """Stopped lanes get donors (compiled blocks of lanes, the interpreter) only for a
    step that can be seen doing something at a point (raise, call Python): pure
    arithmetic there, its result dropped, cannot be told apart (RUNE_JIT_DEBUG_NANS makes
    every step seen)."""
    from rune_jit._src.ops.loops import observable

    program = rune.make_jaxpr(count_down(probe))(1.1)
    loop = next(e for e in program.eqns if e.prim.name == "iterate")
    assert observable(loop.regions) is seen
