"""rune_jit.lax's shape and slicing operations against jax.lax's results, eager and
compiled, under grad, jvp and vmap, and inside a scan step."""

import numpy as np
import pytest

import rune_jit as rune
from rune_jit import lax


@pytest.fixture(scope="module")
def jlax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.lax


X = np.arange(24.0).reshape(2, 3, 4)


def k(x, v):
    """v as a scalar of x's dtype: jax.lax does not promote."""
    return np.asarray(v, x.dtype)


# name: (a function of lax and x: the same program for rune_jit.lax and jax.lax)
CASES = {
    "broadcast": lambda L, x: L.broadcast(x, (2,)),
    "broadcast_in_dim": lambda L, x: L.broadcast_in_dim(x[:, :1], (2, 5, 3, 4), (0, 2, 3))[
        :, :, :1],
    "reshape": lambda L, x: L.reshape(x, (4, 6)),
    "reshape_dimensions": lambda L, x: L.reshape(x, (12, 2), dimensions=(2, 1, 0)),
    "squeeze": lambda L, x: L.squeeze(x[:1, :, 2:3], (0, -1)),
    "expand_dims": lambda L, x: L.expand_dims(x, (0, 4)),
    "concatenate": lambda L, x: L.concatenate([x, x[:, :1] * k(x, 2)], 1),
    "pad": lambda L, x: L.pad(x, k(x, -1), [(1, 0, 0), (2, 1, 1), (0, 3, 2)]),
    "pad_negative": lambda L, x: L.pad(x, k(x, 5), [(0, -1, 0), (-1, 2, 1), (-2, -1, 1)]),
    "slice": lambda L, x: L.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)),
    "slice_in_dim": lambda L, x: L.slice_in_dim(x, -3, None, 2, axis=2),
    "index_in_dim": lambda L, x: L.index_in_dim(x, -1, axis=1, keepdims=False),
    "index_in_dim_kept": lambda L, x: L.index_in_dim(x, 1, axis=2),
    "dynamic_slice": lambda L, x: L.dynamic_slice(x, (1, 2, -1), (1, 2, 3)),
    "dynamic_slice_array": lambda L, x: L.dynamic_slice(x, np.array([0, 5, 1]), (2, 2, 2)),
    "dynamic_slice_in_dim": lambda L, x: L.dynamic_slice_in_dim(x, 3, 2, axis=2),
    "dynamic_index_in_dim": lambda L, x: L.dynamic_index_in_dim(x, -2, 1, keepdims=False),
    "dynamic_update_slice": lambda L, x: L.dynamic_update_slice(x, x[:1, :2, :2] * k(x, 10),
                                                                (1, 2, -7)),
    "dynamic_update_slice_in_dim": lambda L, x: L.dynamic_update_slice_in_dim(
        x, x[:, :, :1] - k(x, 9), 3, 2),
    "dynamic_update_index_in_dim": lambda L, x: L.dynamic_update_index_in_dim(
        x, x[:, 0] + k(x, 1), 1, 1),
    "rev": lambda L, x: L.rev(x, (0, 2)),
    "transpose": lambda L, x: L.transpose(x, (2, 0, 1)),
    "collapse": lambda L, x: L.collapse(x, 0, 2),
    "full_like": lambda L, x: L.full_like(x, 2.5, np.int32, (3,)),
}


def _check(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.slow
def test_shape_operations_against_jax(jlax, compiled, dtype):
    x = X.astype(dtype)
    run = lambda x: {n: f(lax, x) for n, f in CASES.items()}  # noqa: E731
    got = (rune.jit(run) if compiled else run)(x)
    for name, f in CASES.items():
        _check(got[name], f(jlax, x))


def test_bool_operands_and_creation(jlax, backend):
    b = np.array([[True, False, True], [False, False, True]])
    f = backend(lambda b: (lax.pad(b, True, [(1, 1, 1), (0, 0, 0)]), lax.rev(b, (1,)),
                           lax.transpose(b, (1, 0)), lax.iota(np.int32, 5),
                           lax.iota(np.float32, 3), lax.full((2, 2), 3), lax.full((2,), 2.7, np.int32)))
    got = f(b)
    want = (jlax.pad(b, True, [(1, 1, 1), (0, 0, 0)]), jlax.rev(b, (1,)),
            jlax.transpose(b, (1, 0)), jlax.iota(np.int32, 5), jlax.iota(np.float32, 3),
            jlax.full((2, 2), 3), jlax.full((2,), 2.7, np.int32))
    for g, w in zip(got, want):
        _check(g, w)
    assert lax.broadcast_shapes((3, 1), (4,), ()) == jlax.broadcast_shapes((3, 1), (4,), ())
    assert lax.dtype(1.0) == jlax.dtype(1.0) and lax.dtype(np.ones(2, np.int32)) == np.int32


def test_dynamic_slices_with_traced_starts_clamp(jlax):
    """Traced starts (of a jit argument) are clamped as JAX clamps them, negative ones
    counted from the end first."""
    x = np.arange(10.0)
    f = rune.jit(lambda x, i: (lax.dynamic_slice(x, (i,), (3,)),
                               lax.dynamic_update_slice(x, np.full(3, -1.0), (i,)),
                               lax.dynamic_index_in_dim(x, i, keepdims=False)))
    for i in [-12, -3, -1, 0, 4, 8, 9, 25]:
        got = f(x, np.int32(i))
        want = (jlax.dynamic_slice(x, (i,), (3,)),
                jlax.dynamic_update_slice(x, np.full(3, -1.0), (i,)),
                jlax.dynamic_index_in_dim(x, i, keepdims=False))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, np.asarray(w), err_msg=str(i))


def _pad_sum(L, x, v):
    return (L.pad(x, v, [(1, -1, 2), (-1, 2, 1)]) * np.arange(1.0, 5.0)[:, None]).sum()


def test_gradients_against_jax(jlax):
    import jax

    x = np.arange(1.0, 7.0).reshape(2, 3)

    def program(L, x, v, i):
        y = L.dynamic_update_slice(L.transpose(x, (1, 0)), L.broadcast(v, (1, 2)), (i, 0))
        z = L.concatenate([L.rev(y, (0,)), L.reshape(x, (3, 2))], 1)
        return (L.dynamic_slice(z, (i, 1), (2, 2)) ** 2).sum() + _pad_sum(L, x, v)

    for i in [0, 2, 5]:
        got = rune.jit(rune.grad(lambda x, v: program(lax, x, v, np.int32(i)),
                                 argnums=(0, 1)))(x, 1.5)
        want = jax.grad(lambda x, v: program(jlax, x, v, i), argnums=(0, 1))(x, 1.5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-14)
    rune.check_grads(lambda x, v: _pad_sum(lax, x, v), x, 1.5)


def test_jvp_vmap_and_inside_a_scan_step(jlax):
    import jax

    xs = np.arange(24.0).reshape(4, 6)
    f = lambda L, row, i: L.pad(L.dynamic_slice_in_dim(row, i, 3), 0.5, [(1, 1, 1)])  # noqa: E731
    idx = np.array([0, 4, -1, 2], np.int32)
    got = rune.jit(rune.vmap(lambda r, i: f(lax, r, i)))(xs, idx)
    np.testing.assert_array_equal(got, jax.vmap(lambda r, i: f(jlax, r, i))(xs, idx))
    out, tan = rune.jvp(lambda r: f(lax, r, np.int32(2)), (xs[0],), (np.ones(6),))
    wout, wtan = jax.jvp(lambda r: f(jlax, r, 2), (xs[0],), (np.ones(6),))
    np.testing.assert_array_equal(out, wout)
    np.testing.assert_array_equal(tan, wtan)

    def step(c, row):
        c = lax.dynamic_update_index_in_dim(c, lax.rev(row[:2], (0,)), row[0].astype(np.int32) % 3,
                                            0)
        return c, lax.collapse(c, 0)

    def jstep(c, row):
        c = jlax.dynamic_update_index_in_dim(c, jlax.rev(row[:2], (0,)),
                                             row[0].astype(np.int32) % 3, 0)
        return c, jlax.collapse(c, 0)

    got = rune.jit(lambda xs: rune.scan(step, np.zeros((3, 2)), xs))(xs)
    want = jlax.scan(jstep, np.zeros((3, 2)), xs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.asarray(w))


def test_bad_shapes_name_what_is_wrong():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match=r"slice_sizes \(3, 3\) must fit .* shape \(2, 3\)"):
        lax.dynamic_slice(x, (0, 0), (3, 3))
    with pytest.raises(TypeError, match="1 start indices for an operand of shape"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match="same dtypes, got float64, float32"):
        lax.concatenate([x, x.astype(np.float32)], 0)
    with pytest.raises(TypeError, match="same dtypes, got float64, int32"):
        lax.dynamic_update_slice(x, np.ones((1, 1), np.int32), (0, 0))
    with pytest.raises(TypeError, match="total size must be unchanged"):
        lax.reshape(x, (4,))
    with pytest.raises(ValueError, match="size is not one"):
        lax.squeeze(x, (0,))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        lax.index_in_dim(x, 3, axis=1)
    with pytest.raises(ValueError, match="do not fit shape"):
        lax.slice(x, (0, 0), (3, 3))
    with pytest.raises(ValueError, match="one \\(low, high, interior\\) per axis"):
        lax.pad(x, 0.0, [(1, 1, 0)])
    with pytest.raises(TypeError, match="a start index must be an integer scalar"):
        lax.dynamic_slice(x, (0.5, 0), (1, 1))
    with pytest.raises(ValueError, match="incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
