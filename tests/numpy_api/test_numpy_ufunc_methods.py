"""NumPy's ufunc methods and attributes on rune_jit.numpy's ufuncs (rnp.add.reduce,
rnp.maximum.accumulate, rnp.multiply.outer, rnp.add.at, .nin, .identity): against
NumPy, eager and jitted, under grad and vmap, inside a scan step, and through NumPy's
dispatch (np.add.reduce of a traced value)."""

import pickle

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

X = np.array([[3.0, -1.0, 4.0, 1.5], [0.5, 9.0, -2.0, 6.0], [2.0, 2.5, -3.5, 1.0]])
I8 = np.array([[3, -1, 4], [1, 5, -9]], np.int8)
RUNS = {"eager": lambda f: f, "jit": rune.jit}

REDUCE_CASES = [
    ("add", X, {}), ("add", X, {"axis": 1, "keepdims": True}), ("add", X, {"axis": None}),
    ("add", I8, {}), ("multiply", X, {"axis": (0, 1)}), ("maximum", X, {"axis": 1}),
    ("minimum", X, {"initial": -5.0}), ("maximum", X, {"where": X > 0, "initial": 0.0}),
    ("logical_and", X, {"axis": 1}), ("logical_or", X > 3, {}),
    ("subtract", X, {"axis": 1}), ("divide", X, {}),
    ("add", X, {"dtype": np.float32}), ("subtract", X, {"axis": 1, "keepdims": True}),
    ("maximum", np.zeros((0, 2)), {"initial": 1.0}), ("add", np.zeros((0, 2)), {}),
    ("bitwise_xor", I8, {"axis": 1}), ("subtract", X, {"axis": 1, "initial": 10.0}),
    ("subtract", X, {"where": X > 0, "initial": 1.0}), ("add", X, {"where": X > 0,
                                                                  "initial": 10.0}),
    ("logaddexp", X, {"where": X > 0}), ("logaddexp", np.zeros((2, 0)), {"axis": 1}),
    ("subtract", np.zeros((0, 3)), {"initial": 2.0}), ("maximum", X, {"initial": 5.0}),
]


def close(out, want):
    want = np.asarray(want)
    assert np.shape(out) == want.shape and np.asarray(out).dtype == want.dtype, (out, want)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("name, a, kwargs", REDUCE_CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REDUCE_CASES)])
def test_reduce_matches_numpy(run, name, a, kwargs):
    want = getattr(np, name).reduce(a, **kwargs)
    close(RUNS[run](lambda a: getattr(rnp, name).reduce(a, **kwargs))(a), want)


@pytest.mark.parametrize("name", ["power", "arctan2"])
def test_reduce_is_the_left_fold(name):
    """u.reduce(a) is u(...u(u(a[0], a[1]), a[2])..., a[-1]), the last of NumPy's
    accumulate. (NumPy 2.4's own reduce of power and arctan2 gives other values:
    np.power.reduce([2.0, 3.0, 0.5]) is 1.414, where (2**3)**0.5 is 2.828.)"""
    a = np.array([[2.0, 3.0, 0.5], [1.5, -2.0, 4.0]])
    for run in RUNS.values():
        close(run(lambda a: getattr(rnp, name).reduce(a, axis=1))(a),
              getattr(np, name).accumulate(a, axis=1)[:, -1])


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "subtract",
                                  "divide", "logaddexp", "fmax"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_accumulate_matches_numpy(run, name, axis):
    close(RUNS[run](lambda a: getattr(rnp, name).accumulate(a, axis))(X),
          getattr(np, name).accumulate(X, axis))


def test_accumulate_of_integers_widens_as_numpy():
    for name in ("add", "multiply", "maximum", "subtract"):
        close(getattr(rnp, name).accumulate(I8, 1), getattr(np, name).accumulate(I8, 1))
    close(rnp.divide.accumulate(np.array([8, 2, 2])), np.divide.accumulate([8, 2, 2]))


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "subtract", "less",
                                  "arctan2"])
def test_outer_matches_numpy(run, name):
    a, b = X[0], X[1:, :3]
    close(RUNS[run](getattr(rnp, name).outer)(a, b), getattr(np, name).outer(a, b))


def test_attributes_are_numpys():
    for name in ("add", "multiply", "maximum", "logical_and", "bitwise_and", "subtract",
                 "sin", "sqrt", "isnan", "arctan2"):
        u, n = getattr(rnp, name), getattr(np, name)
        assert (u.nin, u.nout, u.nargs, u.identity, u.__name__) == \
            (n.nin, n.nout, n.nargs, n.identity, n.__name__), name
        assert isinstance(u, rnp.ufunc) and pickle.loads(pickle.dumps(u)) is u
    assert rnp.mod is rnp.remainder and rnp.abs is rnp.absolute
    assert rnp.add.__doc__ and "reduce" in repr(type(rnp.add).reduce)
    assert not isinstance(rnp.matmul, rnp.ufunc)  # a gufunc in NumPy: no reduce there


def test_unary_ufuncs_have_no_binary_methods():
    with pytest.raises(ValueError, match="sin.reduce is only supported for binary"):
        rnp.sin.reduce(X)


def test_at_in_place_on_numpy_arrays():
    a, want = np.zeros(4), np.zeros(4)
    assert rnp.add.at(a, [0, 0, 2], 1.5) is None
    np.add.at(want, [0, 0, 2], 1.5)
    np.testing.assert_array_equal(a, want)
    b = np.arange(4.0)
    rnp.negative.at(b, [1, 1])  # a unary ufunc: applied at each occurrence
    np.testing.assert_array_equal(b, [0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
def test_at_not_in_place_is_jaxs(run, name):
    idx, b = np.array([0, 2, 0, 3]), np.array([2.0, -1.0, 3.0, 0.5])
    want = X[0].copy()
    getattr(np, name).at(want, idx, b)
    out = RUNS[run](lambda a, b: getattr(rnp, name).at(a, idx, b, inplace=False))(X[0], b)
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_at_on_a_traced_value_needs_inplace_false():
    with pytest.raises(TypeError, match="inplace=False"):
        rune.jit(lambda a: rnp.add.at(a, [0], 1.0))(X[0])
    with pytest.raises(TypeError, match="b is traced"):
        rune.jit(lambda b: rnp.add.at(np.zeros(2), [0], b))(1.0)
    with pytest.raises(TypeError, match="logaddexp.at"):
        rnp.logaddexp.at(X[0], [0], 1.0, inplace=False)


def test_numpy_dispatch_reaches_the_methods():
    f = rune.jit(lambda x: (np.add.reduce(x, axis=1), np.maximum.accumulate(x, axis=1),
                            np.multiply.outer(x[0], x[1]), np.subtract.reduce(x)))
    for out, want in zip(f(X), (np.add.reduce(X, axis=1), np.maximum.accumulate(X, axis=1),
                                np.multiply.outer(X[0], X[1]), np.subtract.reduce(X))):
        close(out, want)


def test_grads_of_the_methods():
    for f in (lambda x: rnp.sum(rnp.maximum.accumulate(x, 1) ** 2),
              lambda x: rnp.sum(rnp.multiply.accumulate(x, 0)),
              lambda x: rnp.sum(rnp.subtract.accumulate(x * x, 1)),
              lambda x: rnp.sum(rnp.multiply.reduce(x, axis=1)),
              lambda x: rnp.sum(rnp.logaddexp.reduce(x, axis=0)),
              lambda x: rnp.sum(rnp.subtract.reduce(x, 1, where=x > 0, initial=1.0)),
              lambda x: rnp.sum(rnp.multiply.outer(x[0], x[1]) ** 2),
              lambda x: rnp.sum(rnp.add.at(x[0], np.array([1, 1]), x[1, :2], inplace=False))):
        rune.check_grads(f, X)
    g = rune.grad(lambda x: rnp.subtract.reduce(x[0]))(X)
    np.testing.assert_allclose(g[0], [1.0, -1.0, -1.0, -1.0])


def test_vmap_of_the_methods_is_the_loop():
    for f in (lambda r: rnp.maximum.accumulate(r), lambda r: rnp.subtract.reduce(r),
              lambda r: rnp.add.outer(r, r[:2]), lambda r: rnp.divide.accumulate(r)):
        np.testing.assert_allclose(rune.vmap(f)(X), np.stack([f(r) for r in X]), rtol=1e-12)


def test_methods_inside_a_scan_step():
    def step(c, row):
        return c + rnp.maximum.accumulate(row), rnp.subtract.reduce(row)

    carry, ys = rune.jit(lambda xs: rune.scan(step, np.zeros(4), xs))(X)
    np.testing.assert_allclose(carry, np.maximum.accumulate(X, axis=1).sum(0))
    np.testing.assert_allclose(ys, np.subtract.reduce(X, axis=1))


def test_bad_reduce_arguments_say_what():
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        rnp.maximum.reduce(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="where= needs initial="):
        rnp.subtract.reduce(X, where=X > 0)
    with pytest.raises(TypeError, match="out= is not supported"):
        rnp.add.reduce(X, out=np.zeros(4))


def test_a_ufunc_of_ones_own_is_jaxs():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    mine = rnp.ufunc(lambda a, b: a * b + 1.0, 2, 1, name="muladd", identity=None)
    theirs = jax.numpy.ufunc(lambda a, b: a * b + 1.0, 2, 1, name="muladd")
    assert (mine.nin, mine.nout, mine.nargs, mine.__name__) == (2, 1, 3, "muladd")
    for call in (lambda u, x: u.reduce(x), lambda u, x: u.accumulate(x, 1),
                 lambda u, x: u.outer(x[0], x[1])):
        want = np.asarray(call(theirs, X))
        for run in RUNS.values():
            np.testing.assert_allclose(run(lambda x: call(mine, x))(X), want, rtol=1e-12)
    np.testing.assert_allclose(rune.vmap(mine.reduce)(X), [mine.reduce(r) for r in X])
