"""NumPy's type and shape vocabulary in rune_jit.numpy (ndarray, shape, ndim, size,
result_type, promote_types, issubdtype, can_cast, dtype, finfo, iinfo, isscalar, the
abstract types, newaxis), vectorize, block, digitize, unravel_index, diag_indices, save
and linalg's array API names: against NumPy, and JAX where its traced behaviour is the
spec; eager, jitted, under grad and vmap, inside a scan step."""

import io

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

RUNS = {"eager": lambda f: f, "jit": rune.jit}
X = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]])


def traced(f, *args):
    """f's Python result when it runs on the traced args (it returns no array)."""
    out = []
    rune.jit(lambda *a: out.append(f(*a)) or 0.0)(*args)
    return out[0]


# ------------------------------------------------------------- types and shapes


def test_ndarray_is_numpy_arrays_and_traced_values():
    assert isinstance(X, rnp.ndarray) and issubclass(np.ndarray, rnp.ndarray)
    assert traced(lambda x: isinstance(x, rnp.ndarray), X)
    assert rune.grad(lambda x: isinstance(x, rnp.ndarray) * x)(2.0) == 1.0
    assert rune.vmap(lambda x: x * isinstance(x, rnp.ndarray))(X).tolist() == X.tolist()
    for not_array in (1.0, [1.0], "x"):
        assert not isinstance(not_array, rnp.ndarray)
    assert isinstance(rnp.sum(X), rnp.ndarray)  # an eager reduction's NumPy scalar
    with pytest.raises(TypeError, match="rnp.asarray|rune_jit.numpy.asarray"):
        rnp.ndarray((2,))

    def annotated(x: rnp.ndarray) -> rnp.ndarray:
        return x * 2

    np.testing.assert_array_equal(rune.jit(annotated)(X), 2 * X)


@pytest.mark.parametrize("value", [X, 1.5, [[1, 2, 3]], np.float32(2.0), np.zeros((0, 4))])
def test_shape_ndim_size_match_numpy_eager_and_traced(value):
    want = (np.shape(value), np.ndim(value), np.size(value))
    assert (rnp.shape(value), rnp.ndim(value), rnp.size(value)) == want
    a = np.asarray(value)
    if a.dtype != object and a.ndim:
        assert traced(lambda v: (rnp.shape(v), rnp.ndim(v), rnp.size(v), rnp.size(v, -1)),
                      a) == want + (np.size(a, -1),)
        assert traced(lambda v: (np.shape(v), np.ndim(v), np.size(v)), a) == want


def test_result_type_is_nep50():
    cases = [(np.float32, 1.0), (np.ones(2, np.int8), 3), (np.int8, np.uint8),
             (np.uint64, np.int64), (np.float16, np.int64), (1.0,), (1,), (True, 2),
             (np.ones(2, np.float32), np.float64(1.0)), ("int16", np.ones(1, bool))]
    for args in cases:
        assert rnp.result_type(*args) == np.result_type(*args), args


def test_result_type_of_traced_values_follows_their_weakness():
    # a traced Python scalar argument is weak (as in JAX); an array argument is not
    x32 = np.ones(2, np.float32)
    assert traced(lambda w, a: rnp.result_type(w, a), 2.0, x32) == np.float32
    assert traced(lambda w, a: rnp.result_type(w * 2, a), 2, np.ones(2, np.int8)) == np.int8
    assert traced(lambda a, b: rnp.result_type(a, b), np.float64(2.0), x32) == np.float64
    # and it is the dtype the operation gives
    out = rune.jit(lambda w, a: (w + a, rnp.result_type(w, a) == (w + a).dtype))(2.0, x32)
    assert out[0].dtype == np.float32 and out[1]


def test_promote_types_issubdtype_can_cast():
    pairs = [(np.int8, np.uint8), (np.float16, np.int32), ("i4", "f4"), (bool, np.int8)]
    for a, b in pairs:
        assert rnp.promote_types(a, b) == np.promote_types(a, b)
    for a, b in [(np.float32, np.floating), (np.int8, np.signedinteger),
                 (np.uint8, rnp.integer), (np.int8, rnp.unsignedinteger),
                 (np.float64, rnp.inexact), (np.bool_, rnp.number), (np.float16, rnp.generic)]:
        assert rnp.issubdtype(a, b) == np.issubdtype(a, b)
    assert traced(lambda x: rnp.issubdtype(x, rnp.floating), X)
    assert traced(lambda x: rnp.promote_types(x, np.int64), X[0, :2].astype(np.int8)) \
        == np.int64
    for a, b, casting in [(np.int8, np.float32, "safe"), (np.float64, np.float32, "safe"),
                          (np.float64, np.float32, "same_kind"), (np.int64, np.uint8, "no")]:
        assert rnp.can_cast(a, b, casting) == np.can_cast(a, b, casting)
    assert traced(lambda x: rnp.can_cast(x, np.float32), X) is False
    with pytest.raises(TypeError, match="from_ is a Python float"):
        rnp.can_cast(1.0, np.float32)


def test_dtype_finfo_iinfo_take_traced_values():
    assert rnp.dtype("float32") == np.float32 and rnp.dtype(X) == np.float64
    assert isinstance(np.dtype("int8"), rnp.dtype) and not isinstance(np.int8, rnp.dtype)
    assert traced(lambda x: rnp.dtype(x), X.astype(np.float16)) == np.float16
    assert traced(lambda x: rnp.finfo(x).eps, X.astype(np.float32)) == np.finfo(np.float32).eps
    assert traced(lambda x: rnp.iinfo(x).max, np.ones(2, np.uint16)) == 65535
    assert rnp.finfo(float).bits == 64 and rnp.iinfo(np.int8).min == -128
    with pytest.raises(ValueError):
        rnp.iinfo(X)  # a float array has no integer limits, as in NumPy


def test_isscalar_is_jaxs():
    jnp = pytest.importorskip("jax.numpy")
    values = [1.0, 3, np.float32(2.0), np.array(2.0), np.ones(2), [1], "s", None]
    assert [rnp.isscalar(v) for v in values] == [bool(jnp.isscalar(v)) for v in values]
    assert traced(lambda x: (rnp.isscalar(x[0, 0]), rnp.isscalar(x)), X) == (True, False)


def test_names_are_numpys():
    assert rnp.newaxis is None and X[:, rnp.newaxis].shape == (2, 1, 3)
    assert rnp.bool is np.bool and rnp.bool_ is np.bool_ and rnp.float_ is np.float64
    assert rnp.euler_gamma == np.euler_gamma
    assert (rnp.generic, rnp.number, rnp.inexact, rnp.floating, rnp.complexfloating,
            rnp.integer, rnp.signedinteger, rnp.unsignedinteger) == (
        np.generic, np.number, np.inexact, np.floating, np.complexfloating, np.integer,
        np.signedinteger, np.unsignedinteger)
    assert rune.jit(lambda x: x[rnp.newaxis] * 1)(X).shape == (1, 2, 3)


# ------------------------------------------------------------- vectorize

SIGNATURES = [
    (lambda a, b: a @ b, "(n),(n)->()", [(4, 1, 3), (5, 3)]),
    (lambda m, v: m @ v, "(m,n),(n)->(m)", [(2, 3, 4), (4,)]),
    (lambda a: (a.sum(), a * 2), "(n)->(),(n)", [(3, 2)]),
    (lambda a, b: a * b + 1.0, None, [(2, 1), (3,)]),
]


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("case", range(len(SIGNATURES)))
def test_vectorize_matches_jax(run, case):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    f, signature, shapes = SIGNATURES[case]
    rng = np.random.default_rng(case)
    args = [rng.normal(size=s) for s in shapes]
    out = RUNS[run](rnp.vectorize(f, signature=signature))(*args)
    want = jax.numpy.vectorize(f, signature=signature)(*args)
    for o, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (out, want))):
        assert o.shape == w.shape
        np.testing.assert_allclose(o, np.asarray(w), rtol=1e-12)


def test_vectorize_excluded_and_keywords():
    def f(x, table, scale=1.0):
        return rnp.take(table, x) * scale

    v = rnp.vectorize(f, excluded={1, "scale"})
    table = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(v(np.array([[0, 2]]), table, scale=0.5), [[5.0, 15.0]])
    np.testing.assert_array_equal(rune.jit(lambda i: v(i, table))(np.array([1, 1])), [20, 20])
    by_keyword = rnp.vectorize(lambda x, y: x - y)
    np.testing.assert_array_equal(by_keyword(np.arange(3.0), y=np.ones((2, 1))),
                                  np.arange(3.0) - np.ones((2, 1)))


def test_vectorize_under_grad_vmap_and_in_a_scan_step():
    norm = rnp.vectorize(lambda v: rnp.sqrt(rnp.sum(v * v)), signature="(n)->()")
    g = rune.grad(lambda x: rnp.sum(norm(x)))(X)
    np.testing.assert_allclose(g, X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(norm(x) ** 2), X)
    np.testing.assert_allclose(rune.vmap(norm)(X), np.linalg.norm(X, axis=1))
    carry, ys = rune.jit(lambda xs: rune.scan(lambda c, r: (c + norm(r), norm(r[None])),
                                              0.0, xs))(X)
    np.testing.assert_allclose(carry, np.linalg.norm(X, axis=1).sum())
    assert ys.shape == (2, 1)


def test_vectorize_errors_name_the_dimension():
    dot = rnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    with pytest.raises(ValueError, match="core dimension 'n' is 3 .* and 2 in argument 1"):
        dot(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="argument 0 has 0 dimensions"):
        dot(1.0, np.ones(2))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        rnp.vectorize(lambda a: a, signature="(n)")
    with pytest.raises(ValueError, match="output 0 has shape"):
        rnp.vectorize(lambda a: a, signature="(n)->()")(np.ones((2, 3)))


# ------------------------------------------------------------- the other functions


BLOCKS = [lambda a, b, c: [[a, b], [c]], lambda a, b, c: [a, a],
          lambda a, b, c: [[1.0, 2.0], [3.0, 4.0]], lambda a, b, c: [[[a]]],
          lambda a, b, c: a, lambda a, b, c: [[c], [b[0, 0], c[:, :2]]]]


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("case", range(len(BLOCKS)))
def test_block_matches_numpy(run, case):
    inputs = np.eye(2), np.arange(2.0)[:, None], np.ones((1, 3))
    out = RUNS[run](lambda *v: rnp.block(BLOCKS[case](*v)))(*inputs)
    np.testing.assert_array_equal(out, np.block(BLOCKS[case](*inputs)))


def test_block_grad_and_errors():
    g = rune.grad(lambda x: rnp.sum(rnp.block([[x, 2 * x], [x, x]]) ** 2))(np.ones((1, 2)))
    np.testing.assert_allclose(g, 14 * np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"arrays\[1\] .* different depths"):
        rnp.block([[np.ones(2)], [np.ones(2), [np.ones(2)]]])
    with pytest.raises(TypeError, match=r"arrays\[0\] is a tuple"):
        rnp.block([(np.ones(2),)])
    with pytest.raises(ValueError, match="empty list"):
        rnp.block([])


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [np.array([0.0, 1.0, 1.0, 2.5]), np.array([3.0, 1.0, 0.0])])
def test_digitize_matches_numpy(bins, right):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 7.0])
    want = np.digitize(x, bins, right)
    np.testing.assert_array_equal(rnp.digitize(x, bins, right), want)
    np.testing.assert_array_equal(rune.jit(lambda x, b: rnp.digitize(x, b, right))(x, bins),
                                  want)  # traced bins: their order read from their ends
    np.testing.assert_array_equal(rune.vmap(lambda v: rnp.digitize(v, bins, right))(x), want)
    with pytest.raises(ValueError, match="monotonically"):
        rnp.digitize(x, np.array([0.0, 2.0, 1.0]))


def test_unravel_index_numpy_eager_jax_traced():
    idx = np.array([0, 5, 7, 23])
    want = np.unravel_index(idx, (2, 3, 4))
    for out in (rnp.unravel_index(idx, (2, 3, 4)),
                rune.jit(lambda i: rnp.unravel_index(i, (2, 3, 4)))(idx)):
        assert [o.tolist() for o in out] == [w.tolist() for w in want]
    with pytest.raises(ValueError):
        rnp.unravel_index(np.array([24]), (2, 3, 4))
    jnp = pytest.importorskip("jax.numpy")
    oob = np.array([-30, -1, 30])  # traced: JAX's clamping, not NumPy's error
    got = rune.jit(lambda i: rnp.unravel_index(i, (2, 3, 4)))(oob)
    assert [g.tolist() for g in got] == [np.asarray(w).tolist()
                                         for w in jnp.unravel_index(oob, (2, 3, 4))]


def test_diag_indices():
    for n, ndim in [(3, 2), (2, 3)]:
        assert [i.tolist() for i in rnp.diag_indices(n, ndim)] == \
            [i.tolist() for i in np.diag_indices(n, ndim)]
    a = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(rune.jit(lambda x: x[rnp.diag_indices_from(x)])(a),
                                  np.diag(a))
    with pytest.raises(ValueError, match="all dimensions equal, got shape \\(2, 3\\)"):
        rnp.diag_indices_from(np.ones((2, 3)))


def test_save_writes_concrete_and_names_a_traced_value():
    buffer = io.BytesIO()
    rnp.save(buffer, X)
    buffer.seek(0)
    np.testing.assert_array_equal(np.load(buffer), X)
    with pytest.raises(TypeError, match="rune_jit.numpy.save: arr is a traced value"):
        rune.jit(lambda x: rnp.save(io.BytesIO(), x) or x)(X)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_linalg_array_api_names(run):
    m = np.arange(24.0).reshape(2, 3, 4) - 10
    for ord in ("fro", "nuc", 1, -1, 2, np.inf):
        np.testing.assert_allclose(RUNS[run](lambda x: rnp.linalg.matrix_norm(x, ord=ord))(m),
                                   np.linalg.matrix_norm(m, ord=ord), rtol=1e-10)
    for axis, ord, keepdims in [(None, 2, False), (-1, 1, True), ((0, 2), np.inf, True),
                                (1, 3.5, False)]:
        np.testing.assert_allclose(
            RUNS[run](lambda x: rnp.linalg.vector_norm(x, axis=axis, ord=ord,
                                                       keepdims=keepdims))(m),
            np.linalg.vector_norm(m, axis=axis, ord=ord, keepdims=keepdims), rtol=1e-10)
    np.testing.assert_array_equal(RUNS[run](rnp.linalg.matrix_transpose)(m),
                                  np.linalg.matrix_transpose(m))
    rune.check_grads(lambda x: rnp.sum(rnp.linalg.matrix_norm(x)), m)


def test_numpy_dispatch_reaches_the_new_functions():
    f = rune.jit(lambda x: (np.block([[x, x]]), np.digitize(x[0], np.array([0.0, 1.0])),
                            np.shape(x)[1] * x))
    block, bins, scaled = f(X)
    np.testing.assert_array_equal(block, np.block([[X, X]]))
    np.testing.assert_array_equal(bins, np.digitize(X[0], [0.0, 1.0]))
    np.testing.assert_array_equal(scaled, 3 * X)
