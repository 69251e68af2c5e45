"""rune_jit.lax's sorting and prefix operations: sort (several operands, num_keys),
sort_key_val, top_k, approx_max_k/approx_min_k, cumsum/cumprod/cummax/cummin/
cumlogsumexp, against NumPy and, where installed, jax.lax; eager, jitted,
differentiated, batched and inside a scan."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.lax as lax
import rune_jit.numpy as rnp

RNG = np.random.default_rng(39)
X = RNG.normal(size=(3, 6))
K1 = RNG.integers(0, 3, size=(3, 6))
K2 = RNG.integers(0, 2, size=(3, 6))


def lexsorted(keys, others, axis):
    """NumPy's oracle: every operand in the order np.lexsort gives (first key major)."""
    moved = [np.moveaxis(k, axis, -1) for k in keys]
    perm = np.stack([np.lexsort(tuple(m[i] for m in reversed(moved)))
                     for i in range(moved[0].shape[0])])
    return [np.moveaxis(np.take_along_axis(np.moveaxis(a, axis, -1), perm, -1), -1, axis)
            for a in list(keys) + list(others)]


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_one_and_several_operands(axis):
    np.testing.assert_array_equal(lax.sort(X, axis), np.sort(X, axis))
    for got, want in zip(lax.sort((K1, K2, X), axis, num_keys=2),
                         lexsorted([K1, K2], [X], axis)):
        np.testing.assert_array_equal(got, want)
    got_k, got_x = lax.sort_key_val(K1, X, axis)
    want_k, want_x = lexsorted([K1], [X], axis)
    np.testing.assert_array_equal(got_k, want_k)
    np.testing.assert_array_equal(got_x, want_x)  # stable: ties keep their order


def test_sort_jit_grad_vmap_and_scan():
    f = rune.jit(lambda k, x: lax.sort((k, x), 0, num_keys=1))
    for got, want in zip(f(K1, X), lexsorted([K1], [X], 0)):
        np.testing.assert_array_equal(got, want)
    weights = np.arange(6.0)
    rune.check_grads(lambda x: rnp.sum(lax.sort((K1, x), 1)[1] * weights), X)
    rune.check_grads(lambda x: rnp.sum(lax.sort(x, 0) * np.arange(18.0).reshape(3, 6)), X)
    np.testing.assert_array_equal(rune.vmap(lambda r: lax.sort(r))(X), np.sort(X, 1))

    def run(x):
        def step(c, row):
            c = lax.sort(c + row)
            return c, c[-1]
        return rune.scan(step, np.zeros(6), x)[1]

    c, last = np.zeros(6), []
    for row in X:
        c = np.sort(c + row)
        last.append(c[-1])
    np.testing.assert_allclose(rune.jit(run)(X), last, rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(run(x)), X)


def test_top_k_and_approx():
    ties = np.array([[1.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, -1.0]])
    values, idx = lax.top_k(ties, 3)
    assert idx.dtype == np.int32
    assert values.tolist() == [[3.0, 3.0, 2.0], [0.0, 0.0, 0.0]]
    assert idx.tolist() == [[1, 3, 2], [0, 1, 2]]  # ties: lower index first
    assert lax.top_k(ties, 1, axis=0)[1].tolist() == [[0, 0, 0, 0]]
    v, i = lax.approx_max_k(X, 2)
    np.testing.assert_array_equal(v, -np.sort(-X, 1)[:, :2])
    v, i = lax.approx_min_k(X, 2, reduction_dimension=0)
    np.testing.assert_array_equal(i, np.argsort(X, 0, kind="stable")[:2])
    jitted = rune.jit(lambda x: lax.top_k(x, 2))(X)
    np.testing.assert_array_equal(jitted[1], np.argsort(-X, 1, kind="stable")[:, :2])
    batched = rune.vmap(lambda r: lax.top_k(r, 2)[0])(X)
    np.testing.assert_array_equal(batched, -np.sort(-X, 1)[:, :2])
    # the gradient flows to the selected values
    g = rune.grad(lambda x: rnp.sum(lax.top_k(x, 2)[0] * np.array([1.0, 10.0])))(X[0])
    top = np.argsort(-X[0], kind="stable")[:2]
    expected = np.zeros(6)
    expected[top] = [1.0, 10.0]
    np.testing.assert_array_equal(g, expected)
    rune.check_grads(lambda x: rnp.sum(lax.approx_min_k(x, 2)[0] ** 2), X)


def test_sorting_errors():
    with pytest.raises(ValueError, match="k=7 must be between 0 and the operand's size 6"):
        lax.top_k(X, 7)
    with pytest.raises(TypeError, match=r"one shape.*\(3,\).*\(3, 6\)"):
        lax.sort((X, X[:, 0]))
    with pytest.raises(ValueError, match="num_keys=3"):
        lax.sort((X, X), num_keys=3)


# ------------------------------------------------------------- prefix operations

def cumlogsumexp_reference(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


PREFIX = {"cumsum": np.cumsum, "cumprod": np.cumprod,
          "cummax": lambda x, axis: np.maximum.accumulate(x, axis),
          "cummin": lambda x, axis: np.minimum.accumulate(x, axis),
          "cumlogsumexp": cumlogsumexp_reference}


@pytest.mark.parametrize("name", PREFIX)
def test_prefix_operations(name):
    ours, ref = getattr(lax, name), PREFIX[name]
    for axis in (0, 1):
        np.testing.assert_allclose(ours(X, axis), ref(X, axis), rtol=1e-12)
        flipped = np.flip(ref(np.flip(X, axis), axis), axis)
        np.testing.assert_allclose(ours(X, axis, reverse=True), flipped, rtol=1e-12)
    np.testing.assert_allclose(rune.jit(lambda x: ours(x, 1, True))(X),
                               np.flip(ref(np.flip(X, 1), 1), 1), rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(ours(x, 1) * np.arange(6.0)), X)
    rune.check_grads(lambda x: rnp.sum(rnp.sin(ours(x, 0, reverse=True))), X)
    np.testing.assert_allclose(rune.vmap(lambda r: ours(r, 0))(X), ref(X, 1), rtol=1e-12)


def test_prefix_operations_keep_the_dtype_and_stay_finite():
    ints = np.arange(1, 5, dtype=np.int32)
    assert lax.cumsum(ints).dtype == np.int32 and lax.cumsum(ints).tolist() == [1, 3, 6, 10]
    assert lax.cummax(ints, reverse=True).tolist() == [4, 4, 4, 4]
    wide = np.array([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(lax.cumlogsumexp(wide), [-1000.0, 0.0, 1000.0])
    with pytest.raises(TypeError, match="must be floating, got int32"):
        lax.cumlogsumexp(ints)


def test_prefix_inside_a_scan_step():
    def run(x):
        def step(c, row):
            c = lax.cumsum(c * row, reverse=True)
            return c, lax.cummax(c)[-1]
        return rune.scan(step, np.ones(6), x)[1]

    c, outs = np.ones(6), []
    for row in X:
        c = np.cumsum((c * row)[::-1])[::-1]
        outs.append(np.maximum.accumulate(c)[-1])
    np.testing.assert_allclose(rune.jit(run)(X), outs, rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(run(x)), X)


# ------------------------------------------------------------- against JAX


@pytest.fixture
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_sorting_matches_jax(jax):
    jl = jax.lax
    for got, want in zip(lax.sort((K1, K2, X), 0, num_keys=2), jl.sort((K1, K2, X), 0,
                                                                      num_keys=2)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(lax.top_k(K1.astype(float), 3), jl.top_k(K1.astype(float), 3)):
        np.testing.assert_array_equal(got, want)
    ours = rune.grad(lambda x: rnp.sum(lax.top_k(x, 3)[0] ** 2))(X)
    theirs = jax.grad(lambda x: (jl.top_k(x, 3)[0] ** 2).sum())(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.slow  # JAX compiles each prefix operation's gradient for seconds
def test_prefix_operations_match_jax(jax):
    jl = jax.lax
    w = np.arange(18.0).reshape(3, 6)
    def weighted(f):
        return lambda x: (f(x, 1) * w).sum()

    for name in PREFIX:
        ours, theirs = getattr(lax, name), getattr(jl, name)
        np.testing.assert_allclose(ours(X, 1, True), theirs(X, 1, True), rtol=1e-12)
        np.testing.assert_allclose(rune.grad(weighted(ours))(X), jax.grad(weighted(theirs))(X),
                                   rtol=1e-10, err_msg=name)
