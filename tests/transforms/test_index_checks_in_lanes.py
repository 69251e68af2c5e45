"""Regression: an index's bounds check under vmap fails only in the lanes that evaluate
it for real. The interpreter's check of a batched index was not masked by the lanes
running (a vmapped iterate's stopped lanes) or taking a branch (a vmapped cond runs both
branches on every lane): an index valid only while a lane runs, or only in the branch
it takes, raised a spurious IndexError, eager and jitted. A real out-of-bounds index in
a lane that does evaluate it still raises."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

TABLE = np.linspace(0.0, 1.0, 8)


def read(i):
    """TABLE[i] through an array of indices (a gather whose index is checked; a scalar
    index is a dynamic slice, which clamps)."""
    return rnp.asarray(TABLE)[rnp.reshape(i, (1,))][0]


def walk(a, x=1.0):
    """k from a down by 1 until k < 1, adding x * TABLE[k - 1] each step: in bounds at
    every point a running lane is at (1 <= k <= 8), TABLE[-9] at a stopped lane's k = 0."""
    def step(c):
        k, acc = c
        return k - 1, acc + x * read(rnp.where(k >= 1, k - 1, -9))
    return rune.iterate(step, (a, 0.0 * x), until=lambda c: c[0] < 1, max_steps=16)[1]


def pick(i):
    """TABLE[i] where i < 8, else -1: the index is out of bounds in the branch not taken."""
    return rune.lax.cond(i < 8, lambda j: read(j), lambda j: -1.0, i)


STARTS = np.array([3, 0, 8, 1, 5, 2, 7, 4, 6] * 5)
WANT_WALK = np.array([TABLE[:k].sum() for k in STARTS])
I = np.array([0, 9, 3, 8, 7, 100, 1, 12, 5] * 5)
WANT_PICK = np.where(I < 8, TABLE[np.minimum(I, 7)], -1.0)


@pytest.mark.parametrize("how", ["vmap", "vmap_in_scan", "grad"])
def test_a_stopped_lanes_index_raises_no_index_error(mode, how):
    if how == "vmap":
        got = mode(rune.vmap(walk))(STARTS)
        np.testing.assert_allclose(got, WANT_WALK, rtol=1e-15)
    elif how == "vmap_in_scan":  # the same lanes, the loop a scan's step
        got = mode(lambda s: rune.scan(lambda c, a: (c, rune.vmap(walk)(a)), 0.0, s)[1])(
            np.stack([STARTS, STARTS[::-1]]))
        np.testing.assert_allclose(got, np.stack([WANT_WALK, WANT_WALK[::-1]]), rtol=1e-15)
    else:  # reverse mode: the counted scans run past each lane's count too
        f = rune.grad(lambda x: rnp.sum(rune.vmap(lambda a: walk(a, x))(STARTS)))
        np.testing.assert_allclose(mode(f)(2.0), WANT_WALK.sum(), rtol=1e-14)


@pytest.mark.parametrize("how", ["vmap", "vmap_of_vmap", "grad"])
def test_an_index_valid_only_in_the_branch_taken_raises_no_index_error(mode, how):
    if how == "vmap":
        np.testing.assert_array_equal(mode(rune.vmap(pick))(I), WANT_PICK)
    elif how == "vmap_of_vmap":
        grid = np.reshape(I, (5, 9))
        np.testing.assert_array_equal(mode(rune.vmap(rune.vmap(pick)))(grid),
                                      np.reshape(WANT_PICK, (5, 9)))
    else:
        f = rune.vmap(rune.grad(lambda x, i: x * pick(i)), in_axes=(None, 0))
        np.testing.assert_array_equal(mode(f)(3.0, I), WANT_PICK)


def test_an_index_out_of_bounds_where_it_is_evaluated_still_raises(mode):
    """In the branch a lane takes (lane 3: 9 < 10 takes it, TABLE has 8 rows), and at a
    point a running lane is at (its first step, k = 9)."""
    def near(i):
        return rune.lax.cond(i < 10, lambda j: read(j), lambda j: -1.0, i)

    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 8"):
        mode(rune.vmap(near))(np.array([1, 12, 2, 9, 3]))
    with pytest.raises(IndexError, match="index 8 is out of bounds for axis 0 with size 8"):
        mode(rune.vmap(walk))(np.array([2, 9, 1]))
