"""rune_jit.lax's XLA-style gather and scatters with dimension numbers and modes, against
NumPy and, where installed, jax.lax; eager, jitted, differentiated, batched and inside
a scan."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.lax as lax
import rune_jit.numpy as rnp

RNG = np.random.default_rng(39)
X = RNG.normal(size=(5, 6, 4))

GATHERS = {  # name: (indices, dimension numbers, slice sizes)
    "blocks": (np.array([[1, 2], [4, 5], [-1, 3]]),
               dict(offset_dims=(1, 2, 3), collapsed_slice_dims=(), start_index_map=(0, 1)),
               (2, 2, 4)),
    "rows": (np.array([[1], [4], [0]]),
             dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)),
             (1, 6, 4)),
    "batched": (np.array([[2], [0], [5], [1], [3]]),
                dict(offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,),
                     operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
                (1, 1, 4)),
}
ROWS = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
POINTS = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))


def test_gather_matches_numpy_windows():
    idx, dims, sizes = GATHERS["blocks"]
    dn = lax.GatherDimensionNumbers(**dims)
    out = lax.gather(X, idx, dn, sizes, mode="clip")
    for b, (i, j) in enumerate(idx):
        i, j = min(max(i, 0), 3), min(max(j, 0), 4)  # starts clamped so the window fits
        np.testing.assert_array_equal(out[b], X[i:i + 2, j:j + 2])
    filled = lax.gather(X, idx, dn, sizes, mode="fill")
    assert np.isnan(filled[2]).all() and np.isnan(filled[1]).all()  # (4, 5) does not fit
    np.testing.assert_array_equal(filled[0], X[1:3, 2:4])
    rows = lax.gather(X, np.array([[3], [0]]), ROWS, (1, 6, 4))
    np.testing.assert_array_equal(rows, X[[3, 0]])
    idx, dims, sizes = GATHERS["batched"]
    out = lax.gather(X, idx, lax.GatherDimensionNumbers(**dims), sizes)
    np.testing.assert_array_equal(out, X[np.arange(5), idx[:, 0]])


def test_scatters_match_numpy():
    idx = np.array([[1], [3], [1], [7]])  # 7 is past the end: dropped, or clamped to 4
    u = RNG.normal(size=(4, 6, 4))
    added = X.copy()
    np.add.at(added, [1, 3, 1], u[:3])
    np.testing.assert_allclose(lax.scatter_add(X, idx, u, POINTS), added, rtol=1e-12)
    np.add.at(added, [4], u[3:])
    np.testing.assert_allclose(lax.scatter_add(X, idx, u, POINTS, mode="clip"), added,
                               rtol=1e-12)
    most = X.copy()
    np.maximum.at(most, [1, 3, 1], u[:3])
    np.testing.assert_array_equal(lax.scatter_max(X, idx, u, POINTS), most)
    least = X.copy()
    np.minimum.at(least, [1, 3, 1], u[:3])
    np.testing.assert_array_equal(lax.scatter_min(X, idx, u, POINTS), least)
    times = X.copy()
    np.multiply.at(times, [1, 3, 1], u[:3])
    np.testing.assert_allclose(lax.scatter_mul(X, idx, u, POINTS), times, rtol=1e-12)
    written = lax.scatter(X, idx[1:2], u[1:2], POINTS)
    np.testing.assert_array_equal(written[3], u[1])
    np.testing.assert_array_equal(np.delete(written, 3, 0), np.delete(X, 3, 0))


def test_gather_and_scatter_jit_grad_vmap_and_scan():
    idx = np.array([[1], [4], [1]])
    gather = lambda x: lax.gather(x, idx, ROWS, (1, 6, 4))
    np.testing.assert_array_equal(rune.jit(gather)(X), X[[1, 4, 1]])
    rune.check_grads(lambda x: rnp.sum(rnp.sin(gather(x))), X)
    u = RNG.normal(size=(3, 6, 4))
    add = lambda x, u: lax.scatter_add(x, idx, u, POINTS)
    rune.check_grads(lambda x, u: rnp.sum(rnp.sin(add(x, u))), X, u)
    np.testing.assert_allclose(rune.jit(add)(X, u), add(X, u), rtol=1e-12)
    batched = rune.vmap(gather)(np.stack([X, 2 * X]))
    np.testing.assert_array_equal(batched[1], 2 * X[[1, 4, 1]])
    by_index = rune.vmap(lambda i: lax.gather(X, i, ROWS, (1, 6, 4)))(np.array([[[0]], [[2]]]))
    np.testing.assert_array_equal(by_index[:, 0], X[[0, 2]])

    def run(x):
        def step(acc, i):
            row = lax.gather(x, i[None, None], ROWS, (1, 6, 4))
            return lax.scatter_add(acc, i[None, None], row, POINTS), rnp.sum(row)
        return rune.scan(step, np.zeros_like(X), np.array([0, 3, 3]))

    acc, sums = rune.jit(run)(X)
    np.testing.assert_allclose(sums, [X[0].sum(), X[3].sum(), X[3].sum()], rtol=1e-12)
    np.testing.assert_allclose(acc[3], 2 * X[3], rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(run(x)[0] ** 2), X)


def test_gather_scatter_errors():
    with pytest.raises(TypeError, match="offset_dims .* must name each window axis.*shape "
                                        r"\(5, 6, 4\)"):
        lax.gather(X, np.array([[1]]), lax.GatherDimensionNumbers((1,), (0,), (0,)),
                   (1, 6, 4))
    with pytest.raises(TypeError, match="indices must be an integer array"):
        lax.gather(X, np.array([[1.0]]), ROWS, (1, 6, 4))
    with pytest.raises(TypeError, match=r"updates of shape \(2, 6, 4\) do not fit"):
        lax.scatter_add(X, np.array([[1]]), np.ones((2, 6, 4)), POINTS)
    with pytest.raises(NotImplementedError, match="one_hot"):
        lax.gather(X, np.array([[1]]), ROWS, (1, 6, 4), mode="one_hot")
    with pytest.raises(ValueError, match="unknown gather/scatter mode 'nearest'"):
        lax.scatter_add(X, np.array([[1]]), np.ones((1, 6, 4)), POINTS, mode="nearest")


def test_gathers_and_scatters_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jl = jax.lax
    for name, (idx, dims, sizes) in GATHERS.items():
        for mode in (None, "clip", "fill"):
            np.testing.assert_allclose(
                lax.gather(X, idx, lax.GatherDimensionNumbers(**dims), sizes, mode=mode),
                jl.gather(X, idx, jl.GatherDimensionNumbers(**dims), sizes, mode=mode),
                err_msg=f"{name} {mode}")
    idx, u = np.array([[1], [3], [1], [7]]), RNG.normal(size=(4, 6, 4))
    theirs = jl.ScatterDimensionNumbers(*POINTS)
    for name in ("scatter_add", "scatter_mul", "scatter_min", "scatter_max"):
        for mode in (None, "clip"):
            np.testing.assert_allclose(getattr(lax, name)(X, idx, u, POINTS, mode=mode),
                                       getattr(jl, name)(X, idx, u, theirs, mode=mode),
                                       rtol=1e-12, err_msg=f"{name} {mode}")
    ours = rune.grad(lambda x, u: rnp.sum(lax.scatter_add(x, idx, u, POINTS) ** 2),
                     argnums=(0, 1))(X, u)
    ref = jax.grad(lambda x, u: (jl.scatter_add(x, idx, u, theirs) ** 2).sum(),
                   argnums=(0, 1))(X, u)
    for o, t in zip(ours, ref):
        np.testing.assert_allclose(o, t, rtol=1e-12)
