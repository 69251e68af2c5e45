"""rune_jit.numpy's composite functions and ndarray methods against NumPy: values,
dtypes and shapes on concrete arrays and under rune.jit (0-d, empty, broadcast shapes,
several dtypes), derivatives (check_grads, forward and reverse), vmap against a loop
over lanes, use in a scan step, the errors of value-dependent sizes, dispatch from
np.NAME(tracer), and the coverage script."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.errors import ConcretizationError
from paths import REPO

F64, F32, F16, I64, I32, U8, BOOL = (np.float64, np.float32, np.float16, np.int64, np.int32,
                                     np.uint8, np.bool_)
ROOT = REPO


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def with_nans(shape, seed=0):
    x = sample(shape, F64, seed)
    x.reshape(-1)[::3] = np.nan
    return x


def quiet(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


def assert_same(out, expected, rtol=None):
    """Same structure, values, dtypes and shapes as NumPy; arrays as writable ndarrays."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(out, (tuple, list)) and len(out) == len(expected), (out, expected)
        for o, e in zip(out, expected):
            assert_same(o, e, rtol)
        return
    expected = np.asarray(expected)
    assert isinstance(out, np.ndarray), type(out)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    if expected.dtype.kind == "f":
        tol = rtol or {2: 2e-2, 4: 2e-5}.get(expected.dtype.itemsize, 1e-11)
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.fixture(params=["concrete", "jit"])
def run(request):
    """`run(f)`: f on concrete NumPy arrays, or compiled (every argument traced)."""
    return (lambda f: f) if request.param == "concrete" else rune.jit


def check(run, f, *args, rtol=None):
    """f(rnp, *args) against f(np, *args)."""
    expected = quiet(f, np, *args)
    assert_same(quiet(run(lambda *a: f(rnp, *a)), *args), expected, rtol)


# ------------------------------------------------------------- values, by family

X = sample((3, 4), F64)
X3 = sample((2, 3, 4), F64, 1)
V = sample((5,), F64, 2)
S = np.float64(1.5)
E = np.zeros((0, 3))

CASES = {
    # statistics
    "var": (lambda L, a: L.var(a), X),
    "var axis ddof": (lambda L, a: L.var(a, axis=1, ddof=1), X),
    "var keepdims": (lambda L, a: L.var(a, (0, 2), keepdims=True), X3),
    "var 0-d": (lambda L, a: L.var(a), S),
    "var empty axis": (lambda L, a: L.var(a, 0), E),
    "var correction": (lambda L, a: L.var(a, 0, correction=1), X),
    "std": (lambda L, a: L.std(a, axis=-1, ddof=1, keepdims=True), X3),
    "std dtype": (lambda L, a: L.std(a, dtype=np.float32), X),
    "ptp": (lambda L, a: L.ptp(a, axis=1), X),
    "ptp keepdims": (lambda L, a: L.ptp(a, 0, keepdims=True), X),
    "count_nonzero": (lambda L, a: L.count_nonzero(a > 0), X),
    "count_nonzero axis": (lambda L, a: L.count_nonzero(a > 0, axis=1, keepdims=True), X3),
    "average": (lambda L, a: L.average(a), X),
    "average axis": (lambda L, a: L.average(a, axis=0, returned=True), X),
    "average weights": (lambda L, a, w: L.average(a, 1, w, returned=True), X, np.arange(1.0, 5)),
    "average weights nd": (lambda L, a, w: L.average(a, (0, 2), w, keepdims=True), X3,
                           np.arange(1.0, 9).reshape(2, 4)),
    "average full weights": (lambda L, a, w: L.average(a, weights=w), X, np.abs(X) + 1),
    "cov": (lambda L, a: L.cov(a), X),
    "cov rowvar bias": (lambda L, a: L.cov(a, rowvar=False, bias=True), X),
    "cov ddof": (lambda L, a: L.cov(a, ddof=0), X),
    "cov y": (lambda L, a, b: L.cov(a, b), V, V ** 2),
    "cov 1 var": (lambda L, a: L.cov(a), V),
    "cov weights": (lambda L, a: L.cov(a, fweights=np.array([1, 2, 1, 3]),
                                       aweights=np.array([0.5, 1.0, 2.0, 1.0])), X),
    "corrcoef": (lambda L, a: L.corrcoef(a), X),
    "corrcoef y": (lambda L, a, b: L.corrcoef(a, b, rowvar=False), X, X[:, ::-1]),
    "nansum": (lambda L, a: L.nansum(a, axis=1), with_nans((3, 4))),
    "nanprod": (lambda L, a: L.nanprod(a, axis=0, keepdims=True), with_nans((3, 4))),
    "nanmax": (lambda L, a: L.nanmax(a), with_nans((3, 4))),
    "nanmin axis": (lambda L, a: L.nanmin(a, axis=1), with_nans((3, 4))),
    "nanmax all-nan row": (lambda L, a: L.nanmax(a, axis=1), np.array([[np.nan, np.nan],
                                                                       [1.0, np.nan]])),
    "nanmean": (lambda L, a: L.nanmean(a, axis=0), with_nans((4, 3))),
    "nanmean all-nan": (lambda L, a: L.nanmean(a), np.full(3, np.nan)),
    "nanvar": (lambda L, a: L.nanvar(a, axis=1, ddof=1), with_nans((3, 5))),
    "nanvar keepdims": (lambda L, a: L.nanvar(a, keepdims=True), with_nans((3, 5))),
    "nanvar too few": (lambda L, a: L.nanvar(a, axis=1, ddof=2), np.array([[1.0, np.nan,
                                                                            2.0]])),
    "nanstd": (lambda L, a: L.nanstd(a, 0), with_nans((4, 3))),
    "nanargmax": (lambda L, a: L.nanargmax(a, axis=1), with_nans((3, 4), 1)),
    "nanargmin": (lambda L, a: L.nanargmin(a, keepdims=True), with_nans((3, 4))),
    "nanargmax ints": (lambda L, a: L.nanargmax(a, 0), np.array([[1, 5], [3, 2]])),
    "nancumsum": (lambda L, a: L.nancumsum(a, axis=0), with_nans((3, 4))),
    "nancumprod": (lambda L, a: L.nancumprod(a), with_nans((3, 4))),
    # creation and diagonals
    # empty's values are whatever memory held (NaN too): only its shape and dtype compare
    "empty": (lambda L: L.zeros_like(L.empty((2, 3))), ),
    "empty_like": (lambda L, a: L.empty_like(a, dtype=np.int32) * 0, X),
    "identity": (lambda L: L.identity(3, dtype=np.int32),),
    "eye k": (lambda L: L.eye(3, 4, k=1),),
    "logspace": (lambda L: L.logspace(0, 3, 4, base=2.0),),
    "geomspace": (lambda L: L.geomspace(1, 256, 9),),
    "meshgrid": (lambda L, a, b: L.meshgrid(a, b), V, X[0]),
    "meshgrid ij sparse": (lambda L, a, b, c: L.meshgrid(a, b, c, indexing="ij", sparse=True),
                           V, X[0], X[1, :2]),
    "meshgrid 3 xy": (lambda L, a, b, c: L.meshgrid(a, b, c), V, X[0], X[1, :2]),
    "tri": (lambda L: L.tri(3, 5, -1, dtype=int),),
    "tril": (lambda L, a: L.tril(a, 1), X),
    "triu batch": (lambda L, a: L.triu(a, -1), X3),
    "tril 1-d": (lambda L, a: L.tril(a), V),
    "copy": (lambda L, a: L.copy(a), X),
    "atleast_1d": (lambda L, a: L.atleast_1d(a), S),
    "atleast_2d many": (lambda L, a, b: L.atleast_2d(a, b), S, V),
    "atleast_3d": (lambda L, a, b, c: L.atleast_3d(a, b, c), V, X, X3),
    "diag of 2-d": (lambda L, a: L.diag(a, -1), X),
    "diag of 1-d": (lambda L, a: L.diag(a, 2), V),
    "diag far": (lambda L, a: L.diag(a, 9), X),
    "diagflat": (lambda L, a: L.diagflat(a, -1), X[:2, :2]),
    "diagonal": (lambda L, a: L.diagonal(a, 1, 2, 0), X3),
    "diagonal negative": (lambda L, a: L.diagonal(a, -2), X),
    "trace": (lambda L, a: L.trace(a, 1), X),
    "trace axes": (lambda L, a: L.trace(a, 0, 1, 2), X3),
    # comparisons
    "isclose": (lambda L, a, b: L.isclose(a, b), np.array([1.0, np.inf, np.nan, 0.0, -np.inf]),
                np.array([1.0 + 1e-9, np.inf, np.nan, 1e-9, np.inf])),
    "isclose equal_nan": (lambda L, a, b: L.isclose(a, b, equal_nan=True, atol=0.1),
                          np.array([1.0, np.nan]), np.array([1.05, np.nan])),
    "isclose ints": (lambda L, a: L.isclose(a, 2), np.arange(4)),
    "allclose": (lambda L, a, b: L.allclose(a, b), X, X + 1e-9),
    "allclose not": (lambda L, a: L.allclose(a, a + 1), X),
    "array_equal": (lambda L, a, b: L.array_equal(a, b), X, X),
    "array_equal shapes": (lambda L, a, b: L.array_equal(a, b), X, X[0]),
    "array_equal nan": (lambda L, a: L.array_equal(a, a, equal_nan=True), with_nans((3,))),
    "array_equiv": (lambda L, a, b: L.array_equiv(a, b), np.tile(X[0], (3, 1)), X[0]),
    "array_equiv no": (lambda L, a, b: L.array_equiv(a, b), X, V),
    "isin": (lambda L, a, b: L.isin(a, b), np.arange(6).reshape(2, 3), np.array([1, 4, 9])),
    "isin invert": (lambda L, a: L.isin(a, [0.5, 2.0], invert=True), np.arange(4.0)),
    # stacking and splitting
    "hstack": (lambda L, a, b: L.hstack([a, b]), X, X[:, :1]),
    "hstack 1-d": (lambda L, a, b: L.hstack((a, b)), V, X[0]),
    "vstack": (lambda L, a, b: L.vstack([a, b]), X, X[0]),
    "dstack": (lambda L, a, b: L.dstack([a, b]), X, X),
    "column_stack": (lambda L, a, b: L.column_stack([a, b]), X[:, 0], X),
    "hstack dtype": (lambda L, a, b: L.hstack([a, b], dtype=np.float32), X, X),
    "split": (lambda L, a: L.split(a, 2, axis=1), X),
    "split indices": (lambda L, a: L.split(a, [1, -1, 10]), V),
    "array_split": (lambda L, a: L.array_split(a, 3), V),
    "hsplit": (lambda L, a: L.hsplit(a, [3]), X),
    "vsplit": (lambda L, a: L.vsplit(a, 3), X),
    "dsplit": (lambda L, a: L.dsplit(a, 2), X3),
    "append": (lambda L, a, b: L.append(a, b), X, V),
    "append axis": (lambda L, a, b: L.append(a, b, axis=0), X, X[:1]),
    # repeating, rolling, flipping
    "tile": (lambda L, a: L.tile(a, 2), V),
    "tile more axes": (lambda L, a: L.tile(a, (2, 1, 3)), X),
    "tile 0-d": (lambda L, a: L.tile(a, (2, 2)), S),
    "repeat": (lambda L, a: L.repeat(a, 2), X),
    "repeat axis": (lambda L, a: L.repeat(a, [1, 0, 2], axis=0), X),
    "repeat 0-d": (lambda L, a: L.repeat(a, 3), S),
    "roll": (lambda L, a: L.roll(a, 5), X),
    "roll axes": (lambda L, a: L.roll(a, (1, -6), axis=(0, 1)), X),
    "flip": (lambda L, a: L.flip(a), X3),
    "flip axis": (lambda L, a: L.flip(a, (0, 2)), X3),
    "fliplr": (lambda L, a: L.fliplr(a), X),
    "flipud": (lambda L, a: L.flipud(a), V),
    "rot90": (lambda L, a: L.rot90(a), X),
    "rot90 k": (lambda L, a: L.rot90(a, -1, axes=(2, 0)), X3),
    "rot90 2": (lambda L, a: L.rot90(a, 2), X),
    "swapaxes": (lambda L, a: L.swapaxes(a, 0, -1), X3),
    "moveaxis": (lambda L, a: L.moveaxis(a, 0, -1), X3),
    # pad
    "pad constant": (lambda L, a: L.pad(a, ((1, 2), (0, 3)), constant_values=((1, 2), (3, 4))),
                     X),
    "pad edge": (lambda L, a: L.pad(a, 2, mode="edge"), X),
    "pad wrap wide": (lambda L, a: L.pad(a, ((7, 9), (5, 1)), mode="wrap"), X),
    "pad reflect wide": (lambda L, a: L.pad(a, ((7, 9), (5, 1)), mode="reflect"), X),
    "pad symmetric wide": (lambda L, a: L.pad(a, ((7, 9), (5, 1)), mode="symmetric"), X),
    "pad reflect length 1": (lambda L, a: L.pad(a, 3, mode="reflect"), X[:1, 0]),
    "pad empty axis": (lambda L, a: L.pad(a, 1), E),
    "pad empty array along its other axis": (lambda L, a: L.pad(a, ((0, 0), (1, 2)), "median"),
                                             E),
    # broadcasting, insert, delete, ix_
    "broadcast_arrays": (lambda L, a, b, c: L.broadcast_arrays(a, b, c), X, V[:4], S),
    "insert": (lambda L, a: L.insert(a, 1, 5.0, axis=1), X),
    "insert many": (lambda L, a, v: L.insert(a, [1, 0, 4, 1], v, axis=1), X, X[:, :1] + 9),
    "insert one in list": (lambda L, a, v: L.insert(a, [2], v, axis=0), X, X[0] + 9),
    "insert slice": (lambda L, a: L.insert(a, slice(0, 4, 2), 7.0), X),
    "insert negative": (lambda L, a, v: L.insert(a, -1, v), V, X[0]),
    "delete": (lambda L, a: L.delete(a, [0, -1], axis=1), X),
    "delete slice": (lambda L, a: L.delete(a, slice(None, None, 2)), X),
    "delete mask": (lambda L, a: L.delete(a, np.array([True, False, True, False, False])), V),
    "ix_": (lambda L, a: a[L.ix_(np.array([0, 2]), np.array([3, 1]))], X),
    "ix_ mask": (lambda L, a: a[L.ix_(np.array([True, False, True]), np.array([1]))], X),
    "apply_along_axis": (lambda L, a: L.apply_along_axis(lambda v: L.stack([v.sum(), v.max()]),
                                                         1, a), X3),
    "apply_along_axis scalar": (lambda L, a: L.apply_along_axis(lambda v: v[0] * v[-1], 0, a),
                                X),
    # products
    "einsum matmul": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), X, X.T),
    "einsum implicit": (lambda L, a, b: L.einsum("ij,kj", a, b), X, X),
    "einsum chain": (lambda L, a, b, c: L.einsum("ij,jk,kl", a, b, c), X, X.T, X),
    "einsum ellipsis": (lambda L, a, b: L.einsum("...j,j->...", a, b), X3, X[0]),
    "einsum ellipsis implicit": (lambda L, a: L.einsum("i...->...i", a), X3),
    "einsum broadcast ellipsis": (lambda L, a, b: L.einsum("...ij,...jk", a, b),
                                  X3, X.T[None]),
    "einsum diagonal": (lambda L, a: L.einsum("ii->i", a), X[:, :3]),
    "einsum trace": (lambda L, a: L.einsum("ii", a), X[:, :3]),
    "einsum repeated 3": (lambda L, a: L.einsum("iji->j", a), np.ones((2, 3, 2))),
    "einsum sum": (lambda L, a: L.einsum("ijk->", a), X3),
    "einsum outer": (lambda L, a, b: L.einsum("i,j", a, b), V, X[0]),
    "einsum batch": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), X3, X3.transpose(0, 2, 1)),
    "einsum sublists": (lambda L, a, b: L.einsum(a, [0, 1], b, [2, 1], [2, 0]), X, X),
    "einsum scalar": (lambda L, a, b: L.einsum("i,->i", a, b), V, S),
    "einsum spaces": (lambda L, a, b: L.einsum("i j , j k -> k i", a, b), X, X.T),
    "einsum sum one": (lambda L, a, b: L.einsum("ij,j->j", a, b), X, X[0]),
    "tensordot": (lambda L, a, b: L.tensordot(a, b), X3, X3[0]),
    "tensordot 0": (lambda L, a, b: L.tensordot(a, b, 0), V, X[0]),
    "tensordot axes": (lambda L, a, b: L.tensordot(a, b, ([0, 2], [0, 1])), X3, X[:2]),
    "inner": (lambda L, a, b: L.inner(a, b), X3, X),
    "inner 0-d": (lambda L, a, b: L.inner(a, b), S, X),
    "vdot": (lambda L, a, b: L.vdot(a, b), X, X * 2),
    "outer": (lambda L, a, b: L.outer(a, b), V, X),
    "kron": (lambda L, a, b: L.kron(a, b), X[:2, :2], X),
    "kron 1-d 2-d": (lambda L, a, b: L.kron(a, b), V, X),
    "cross": (lambda L, a, b: L.cross(a, b), X[:, :3], X[:, 1:]),
    "cross axis": (lambda L, a, b: L.cross(a, b, axis=0), X[:3], X[:3, ::-1]),
    "cross broadcast": (lambda L, a, b: L.cross(a, b), X[0, :3], X3[..., :3]),
    "cross 2 and 3": (lambda L, a, b: L.cross(a, b), X[:, :2], X[:, 1:]),
    "polyval": (lambda L, p, x: L.polyval(p, x), V, X),
    "polyval scalar": (lambda L, p, x: L.polyval(p, x), V, S),
    # order statistics (rune_jit/_src/numpy/sorting.py), reached as compositions use them
    "median": (lambda L, a: L.median(a, axis=1), X),
    "percentile": (lambda L, a: L.percentile(a, [10.0, 90.0], axis=0), X),
    # value-dependent sizes with a static condition
    "compress static": (lambda L, a: L.compress([True, False, True], a, axis=0), X),
    "compress flat": (lambda L, a: L.compress([False, True], a), X),
}


@pytest.mark.parametrize("name", CASES)
def test_values_match_numpy(run, name):
    f, *args = CASES[name]
    check(run, f, *args)


CONCRETE_ONLY = {
    "argwhere": (lambda L, a: L.argwhere(a > 0), X),
    "argwhere 0-d": (lambda L, a: L.argwhere(a), S),
    "where one argument": (lambda L, a: L.where(a > 0), X),
    "extract": (lambda L, a: L.extract(a > 0, a), X),
    "nonzero": (lambda L, a: L.nonzero(a > 0), X),
    "unique": (lambda L, a: L.unique(np.round(a)), X),
    "flatnonzero": (lambda L, a: L.flatnonzero(a > 0), X),
}


@pytest.mark.parametrize("name", CONCRETE_ONLY)
def test_value_dependent_sizes_work_outside_a_trace(name):
    f, *args = CONCRETE_ONLY[name]
    check(lambda g: g, f, *args)


# ------------------------------------------------------------- dtypes, shapes

DTYPES = [F64, F32, I32, U8, BOOL]
SHAPES = [(), (0,), (4,), (2, 3), (2, 0, 3)]

BY_DTYPE = {
    "var": lambda L, a: L.var(a),
    "std axis 0": lambda L, a: L.std(a, axis=0) if a.ndim else L.std(a),
    "ptp": lambda L, a: L.ptp(a) if a.size and a.dtype != bool else L.zeros(()),
    "count_nonzero": lambda L, a: L.count_nonzero(a),
    "average": lambda L, a: L.average(a),
    "nansum": lambda L, a: L.nansum(a),
    "nanmean": lambda L, a: L.nanmean(a),
    "nanmax": lambda L, a: L.nanmax(a) if a.size else L.zeros(()),
    "copy": lambda L, a: L.copy(a),
    "atleast_3d": lambda L, a: L.atleast_3d(a),
    "flip": lambda L, a: L.flip(a),
    "tile": lambda L, a: L.tile(a, (2, 1)),
    "repeat": lambda L, a: L.repeat(a, 2, axis=-1) if a.ndim else L.repeat(a, 2),
    "roll": lambda L, a: L.roll(a, 1),
    "pad": lambda L, a: L.pad(a, 1),
    "pad edge": lambda L, a: L.pad(a, 1, mode="edge") if 0 not in a.shape else L.pad(a, 0),
    "hstack": lambda L, a: L.hstack([a, a]),
    "vstack": lambda L, a: L.vstack([a, a]),
    "append": lambda L, a: L.append(a, a),
    "broadcast_arrays": lambda L, a: L.broadcast_arrays(a, L.ones((2,) + a.shape, a.dtype)),
    "isin": lambda L, a: L.isin(a, np.array([1, 2], a.dtype)),
    "array_equal": lambda L, a: L.array_equal(a, a),
    "allclose": lambda L, a: L.allclose(a, a),
    "isclose": lambda L, a: L.isclose(a, a),
    "kron": lambda L, a: L.kron(a, np.ones(2, a.dtype)),
    "polyval": lambda L, a: L.polyval(np.array([2, 1], a.dtype if a.dtype != bool else int),
                                      a),
    "einsum transpose": lambda L, a: L.einsum("...ij->ji...", a) if a.ndim >= 2 else L.einsum(
        "...", a),
    "einsum with itself": lambda L, a: L.einsum("...,...->...", a, a),
    "tril": lambda L, a: L.tril(a) if a.ndim else L.zeros(()),
    "diagonal": lambda L, a: L.diagonal(a) if a.ndim >= 2 else L.zeros(()),
    "trace": lambda L, a: L.trace(a) if a.ndim >= 2 else L.zeros(()),
    "rot90": lambda L, a: L.rot90(a) if a.ndim >= 2 else L.zeros(()),
    "delete": lambda L, a: L.delete(a, [0]) if a.size else L.zeros(()),
    "insert": lambda L, a: L.insert(a, 0, 1),
    "ravel split": lambda L, a: L.array_split(L.ravel(a), 2),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", BY_DTYPE)
def test_dtypes_and_shapes_match_numpy(name, dtype, shape):
    """Concrete arrays, and traced ones (jit) for float64 and for int32's nonempty shapes."""
    x = sample(shape, dtype)
    f = BY_DTYPE[name]
    check(lambda g: g, f, x)
    if dtype == F64 or (dtype == I32 and shape in ((2, 3), ())):
        check(rune.jit, f, x)


def test_float16_statistics_round_to_half():
    x = sample((3, 5), F16)
    for f in (lambda L, a: L.var(a, 0), lambda L, a: L.std(a), lambda L, a: L.nanmean(a, 1),
              lambda L, a: L.average(a, 1), lambda L, a: L.cov(a)):
        check(lambda g: g, f, x, rtol=2e-2)


def test_nep50_python_scalars_stay_weak():
    x32 = sample((3,), F32)
    assert rnp.isclose(x32, 1.0).dtype == BOOL
    assert rnp.polyval(np.array([1.0, 2.0], F32), x32).dtype == F32
    assert rnp.pad(np.arange(3, dtype=U8), 1, constant_values=7).dtype == U8
    assert rnp.insert(np.arange(3, dtype=U8), 1, 7).dtype == U8
    assert rnp.einsum("i,i", x32, x32).dtype == F32
    assert rnp.var(np.arange(4, dtype=I32)).dtype == F64
    assert rnp.average(x32, weights=np.ones(3, F32)).dtype == F32


# ------------------------------------------------------------- derivatives

A = sample((3, 4), F64, 3)
SQ = sample((3, 3), F64, 4)
GRADS = {
    "var": (lambda a: rnp.var(a, axis=0, ddof=1), A),
    "std": (lambda a: rnp.std(a), A),
    "nanvar": (lambda a: rnp.nanvar(rnp.where(a > 1.0, rnp.nan, a), axis=1), A),
    "nanmean": (lambda a: rnp.nanmean(rnp.where(a > 1.0, rnp.nan, a)), A),
    "nansum": (lambda a: rnp.nansum(rnp.where(a > 1.0, rnp.nan, a), 0), A),
    "nanmax": (lambda a: rnp.nanmax(a, 1), A),
    "nancumsum": (lambda a: rnp.nancumsum(rnp.where(a > 1.0, rnp.nan, a), 1), A),
    "ptp": (lambda a: rnp.ptp(a, 0), A),
    "average": (lambda a, w: rnp.average(a, 1, rnp.abs(w) + 1), A, A[0]),
    "cov": (lambda a: rnp.cov(a), A),
    "corrcoef": (lambda a: rnp.corrcoef(a), A),
    "tril": (lambda a: rnp.tril(a, -1), A),
    "diag": (lambda a: rnp.diag(a[0], 1), A),
    "diagonal": (lambda a: rnp.diagonal(a, 1), A),
    "trace": (lambda a: rnp.trace(a), A),
    "hstack": (lambda a: rnp.hstack([a, a * 2]), A),
    "split": (lambda a: rnp.array_split(a, 3, axis=1)[1], A),
    "tile": (lambda a: rnp.tile(a, (2, 1)), A),
    "repeat": (lambda a: rnp.repeat(a, [2, 0, 1], axis=0), A),
    "roll": (lambda a: rnp.roll(a, (1, 2), (0, 1)), A),
    "roll traced": (lambda a: rnp.roll(a, rnp.argmax(a[0]), 1), A),
    "rot90": (lambda a: rnp.rot90(a, 3), A),
    "pad reflect": (lambda a: rnp.pad(a, 2, mode="reflect"), A),
    "pad constant": (lambda a, c: rnp.pad(a, 1, constant_values=c[0, 0]), A, A),
    "insert": (lambda a, v: rnp.insert(a, [0, 2], v[:, :1], axis=1), A, A),
    "delete": (lambda a: rnp.delete(a, 1, axis=0), A),
    "kron": (lambda a, b: rnp.kron(a, b), A[:2, :2], A),
    "einsum": (lambda a, b: rnp.einsum("ij,kj,ii->k", a, b, a[:, :3]), A, A),
    "einsum ellipsis": (lambda a: rnp.einsum("...i,...i", a, a), A),
    "tensordot": (lambda a, b: rnp.tensordot(a, b, ([1], [1])), A, A),
    "inner": (lambda a, b: rnp.inner(a, b), A, A),
    "vdot": (lambda a, b: rnp.vdot(a, b), A, A),
    "cross": (lambda a, b: rnp.cross(a[:, :3], b[:, 1:]), A, A),
    "polyval": (lambda p, x: rnp.polyval(p, x), A[0], A),
    "apply_along_axis": (lambda a: rnp.apply_along_axis(lambda v: rnp.sum(v * v), 1, a), A),
    "compress": (lambda a: rnp.compress([True, False, True], a, axis=0), A),
    "extract sized": (lambda a: rnp.extract(a > 0, a, size=4), A),
    "broadcast_arrays": (lambda a, b: rnp.broadcast_arrays(a, b[0]), A, A),
    "meshgrid": (lambda a, b: rnp.meshgrid(a[0], b[1]), A, A),
}


@pytest.mark.parametrize("name", GRADS)
def test_derivatives(name):
    f, *args = GRADS[name]
    rune.check_grads(f, *args, modes=("fwd", "rev"))


# ------------------------------------------------------------- vmap, scan

VMAPPED = {
    "var": lambda a: rnp.var(a, ddof=1),
    "nanmean": lambda a: rnp.nanmean(rnp.where(a > 1.0, rnp.nan, a)),
    "cov": lambda a: rnp.cov(a),
    "diag": lambda a: rnp.diag(a[0]),
    "trace": lambda a: rnp.trace(a),
    "einsum": lambda a: rnp.einsum("ij,kj->ik", a, a),
    "pad": lambda a: rnp.pad(a, 1, mode="symmetric"),
    "roll": lambda a: rnp.roll(a, 1, 1),
    "tile": lambda a: rnp.tile(a, 2),
    "repeat": lambda a: rnp.repeat(a, 2, 0),
    "isin": lambda a: rnp.isin(a, a[0]),
    "cross": lambda a: rnp.cross(a[:, :3], a[:, 1:]),
    "polyval": lambda a: rnp.polyval(a[0], a[1]),
    "kron": lambda a: rnp.kron(a[:2, :2], a),
    "insert": lambda a: rnp.insert(a, 1, a[0], axis=0),
    "split": lambda a: rnp.split(a, 2, axis=1)[0],
}


@pytest.mark.parametrize("name", VMAPPED)
def test_vmap_matches_a_loop_over_lanes(name):
    f = VMAPPED[name]
    xs = sample((4, 3, 4), F64, 5)
    out = rune.vmap(f)(xs)
    assert_same(out, np.stack([np.asarray(f(x)) for x in xs]))


def test_roll_by_a_traced_shift_under_vmap():
    xs, shifts = sample((3, 5), F64), np.array([0, 2, -7])
    out = rune.jit(rune.vmap(lambda x, s: rnp.roll(x, s)))(xs, shifts)
    assert_same(out, np.stack([np.roll(x, s) for x, s in zip(xs, shifts)]))


def test_composites_in_a_scan_step():
    def step(carry, row):
        new = rnp.roll(carry, 1) + rnp.einsum("i,i->", row, row) * rnp.std(row)
        return rnp.tril(rnp.outer(new, new)).sum(0), rnp.trace(rnp.diag(new))

    xs = sample((5, 3), F64)

    def reference(xs):
        carry, ys = np.zeros(3), []
        for row in xs:
            new = np.roll(carry, 1) + np.einsum("i,i->", row, row) * np.std(row)
            carry = np.tril(np.outer(new, new)).sum(0)
            ys.append(np.trace(np.diag(new)))
        return carry, np.stack(ys)

    for f in (lambda xs: rune.scan(step, np.zeros(3), xs),
              rune.jit(lambda xs: rune.scan(step, np.zeros(3), xs))):
        assert_same(f(xs), reference(xs))
    rune.check_grads(lambda xs: rune.scan(step, np.zeros(3), xs)[1], xs)


# ------------------------------------------------------------- pad, mode by mode

# id: (mode, its keyword arguments, or a function of the array's ndim giving them)
PAD_MODES = {
    "constant": ("constant", {"constant_values": ((1, 2),)}),
    "edge": ("edge", {}),
    "wrap": ("wrap", {}),
    "linear_ramp": ("linear_ramp", {}),
    "linear_ramp pair": ("linear_ramp", {"end_values": (5, -2)}),
    "linear_ramp float": ("linear_ramp", {"end_values": 3.5}),
    "linear_ramp per axis": ("linear_ramp",
                             lambda nd: {"end_values": [(1.5, -2), (3, 4), (0, 7)][:nd]}),
    "maximum": ("maximum", {}),
    "maximum stat_length": ("maximum", {"stat_length": 2}),
    "minimum pair": ("minimum", {"stat_length": (1, 3)}),
    "mean": ("mean", {}),
    "mean per axis": ("mean", lambda nd: {"stat_length": [(1, 2), (3, 1), (2, 9)][:nd]}),
    "mean rounded length": ("mean", {"stat_length": 2.6}),
    "median": ("median", {}),
    "median stat_length": ("median", {"stat_length": ((2, 1),)}),
    "reflect": ("reflect", {}),
    "reflect odd": ("reflect", {"reflect_type": "odd"}),
    "symmetric": ("symmetric", {}),
    "symmetric odd": ("symmetric", {"reflect_type": "odd"}),
}
# 1-d, 2-d and 3-d, float and int (ints spread enough that means round both ways)
PAD_ARRAYS = [V, X, X3, (sample((5,), I64, 6) * 7 - 9), (sample((3, 4), I32, 7) * 5 - 8),
              (sample((2, 3, 4), I64, 8) * 3 - 5)]
# none, one, one pair for every axis, per axis wider than the axis (a 1-d array reads
# the first pair as the pair of every axis), and NumPy 2.3's {axis: width} (a later key
# naming the same axis wins)
PAD_WIDTHS = [0, 1, (0, 3), [(7, 2), (0, 9), (5, 5)], {-1: (2, 1)}, {0: 3, -1: (0, 2)}]


def pad_call(L, a, case, widths):
    mode, kwargs = PAD_MODES[case]
    kwargs = kwargs(a.ndim) if callable(kwargs) else kwargs
    widths = widths[:a.ndim] if isinstance(widths, list) else widths
    return L.pad(a, widths, mode, **kwargs)


def assert_pad_same(out, expected, case):
    """As NumPy, bit for bit (the medians too: rnp.median averages the two middle values
    as NumPy's does)."""
    assert_same(out, expected)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("case", PAD_MODES)
def test_pad_matches_numpy(case):
    for a in PAD_ARRAYS:
        for widths in PAD_WIDTHS:
            expected = quiet(pad_call, np, a, case, widths)
            assert_pad_same(quiet(pad_call, rnp, a, case, widths), expected, case)


@pytest.mark.parametrize("case", PAD_MODES)
@pytest.mark.slow
def test_pad_under_jit(case):
    widths = PAD_WIDTHS[3:5]  # per axis, and a dict: two, as each compiles its own code
    f = rune.jit(lambda *arrays: [pad_call(rnp, a, case, w) for a in arrays for w in widths])
    expected = [pad_call(np, a, case, w) for a in PAD_ARRAYS for w in widths]
    for out, want in zip(f(*PAD_ARRAYS), expected, strict=True):
        assert_pad_same(out, want, case)


# every mode in every dtype but a ramp to -2 in uint8: a float-to-unsigned conversion
# that C leaves undefined (NumPy's result is the CPU's)
PAD_DTYPE_CASES = [pytest.param(case, dtype, id=f"{case}-{np.dtype(dtype).name}")
                   for case in PAD_MODES for dtype in [F32, F16, U8, I32, BOOL]
                   if not (dtype == U8 and case in ("linear_ramp pair",
                                                    "linear_ramp per axis"))]


@pytest.mark.parametrize(("case", "dtype"), PAD_DTYPE_CASES)
def test_pad_dtypes(case, dtype):
    """Casts as NumPy's: statistics rounded half to even for ints, ramps floored, odd
    reflections in the array's arithmetic (uint8 wraps), bools as nonzero."""
    a = np.arange(1, 13).reshape(3, 4).astype(dtype) if dtype != BOOL else X > 0
    expected = quiet(pad_call, np, a, case, PAD_WIDTHS[-1])
    assert_same(quiet(pad_call, rnp, a, case, PAD_WIDTHS[-1]), expected)
    if dtype == I32:
        assert_same(rune.jit(lambda b: pad_call(rnp, b, case, PAD_WIDTHS[-1]))(a), expected)


def test_pad_width_as_a_dict_names_its_errors():
    a = np.ones((2, 3))
    with pytest.raises(ValueError, match="key 2 is not an axis of an array of 2 dim"):
        rnp.pad(a, {2: 1})
    with pytest.raises(TypeError, match=r"pad_width\[0\] must be an int or a \(before"):
        rnp.pad(a, {0: [1, 2, 3]})
    assert rnp.pad(a, {}).shape == (2, 3)


PAD_PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None)


@PAD_PROPERTY
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       case=st.sampled_from(sorted(PAD_MODES)), data=st.data())
def test_pad_matches_numpy_on_random_widths(shape, case, data):
    widths = [(data.draw(st.integers(0, 9)), data.draw(st.integers(0, 9))) for _ in shape]
    a = sample(tuple(shape), data.draw(st.sampled_from([F64, I64])),
               data.draw(st.integers(0, 99))) * 3
    assert_pad_same(quiet(pad_call, rnp, a, case, widths),
                    quiet(pad_call, np, a, case, widths), case)


def test_pad_ramps_in_the_dtype_numpy_reads_the_end_values_in():
    """One end value, or one pair, is a NumPy scalar: a float32 array ramps in float64.
    Values per axis are Python floats (weak): it ramps in float32, which rounds apart."""
    a = np.array([[0.1, 0.7, 0.3]], F32)
    for ends in (1.3, [[1.3, 1.3], [1.3, 1.3]]):
        expected = np.pad(a, 7, "linear_ramp", end_values=ends)
        np.testing.assert_array_equal(rnp.pad(a, 7, "linear_ramp", end_values=ends), expected)
        np.testing.assert_array_equal(
            rune.jit(lambda b, e=ends: rnp.pad(b, 7, "linear_ramp", end_values=e))(a), expected)
    assert not np.array_equal(np.pad(a, 7, "linear_ramp", end_values=1.3),
                              np.pad(a, 7, "linear_ramp", end_values=[[1.3, 1.3]] * 2))


def test_pad_ramp_takes_numpys_branch_for_a_zero_step():
    """NumPy's linspace computes every lane as position / width * distance once any lane
    steps by 0 (here the second row, whose edge is the end value), which floors 3 values
    of the first row differently from position * step."""
    a = np.array([[175, 0], [1, 0]])
    f = lambda L, b: L.pad(b, ((0, 0), (58, 0)), "linear_ramp", end_values=1)  # noqa: E731
    for b in (a, a[:1]):
        assert_same(f(rnp, b), f(np, b))
        assert_same(rune.jit(lambda c: f(rnp, c))(b), f(np, b))
    assert (f(np, a)[0] != f(np, a[:1])[0]).sum() == 3


def test_pad_with_traced_values():
    a = sample((3, 4), I64, 9) * 9
    f = rune.jit(lambda b, c, e: (rnp.pad(b, 2, constant_values=c),
                                  rnp.pad(b, ((2, 5), (3, 4)), "linear_ramp", end_values=e)))
    for c, e in ((7, 3), (np.array([1, 2]), np.array([[1, 2], [50, 3]]))):
        assert_same(f(a, c, e), (np.pad(a, 2, constant_values=c),
                                 np.pad(a, ((2, 5), (3, 4)), "linear_ramp", end_values=e)))


PAD_GRADS = {
    "linear_ramp": lambda a: rnp.pad(a, ((2, 1), (3, 2)), "linear_ramp",
                                     end_values=((1.0, -1.0), (0.5, 2.0))),
    "linear_ramp traced end": lambda a: rnp.pad(a, 2, "linear_ramp", end_values=a[0, 0] * 2),
    "maximum": lambda a: rnp.pad(a, 2, "maximum", stat_length=2),
    "minimum": lambda a: rnp.pad(a, ((1, 2), (2, 0)), "minimum"),
    "mean": lambda a: rnp.pad(a, 2, "mean", stat_length=((1, 3), (2, 2))),
    "median": lambda a: rnp.pad(a, (1, 2), "median", stat_length=3),
    "reflect odd": lambda a: rnp.pad(a, ((7, 9), (5, 1)), "reflect", reflect_type="odd"),
    "symmetric odd": lambda a: rnp.pad(a, ((7, 9), (5, 1)), "symmetric", reflect_type="odd"),
    "wrap": lambda a: rnp.pad(a, ((4, 5), (9, 0)), "wrap"),
}


@pytest.mark.parametrize("name", PAD_GRADS)
def test_pad_derivatives(name):
    rune.check_grads(PAD_GRADS[name], A, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", PAD_GRADS)
def test_pad_vmap_matches_a_loop_over_lanes(name):
    f = PAD_GRADS[name]
    xs = sample((4, 3, 4), F64, 5)
    expected = np.stack([np.asarray(f(x)) for x in xs])
    assert_same(rune.vmap(f)(xs), expected)
    assert_same(rune.jit(rune.vmap(f))(xs), expected)


def test_pad_in_a_scan_step():
    def step(L, carry, row):
        grown = L.pad(row + carry, (2, 3), "linear_ramp", end_values=(carry[0], 1.0))
        stats = L.pad(grown, 1, "mean", stat_length=3) + L.pad(grown, 1, "median")
        odd = L.pad(stats, (4, 0), "reflect", reflect_type="odd")
        return odd[:3] * 0.5, odd.sum()

    def reference(xs):
        carry, ys = np.zeros(3), []
        for row in xs:
            carry, y = step(np, carry, row)
            ys.append(y)
        return carry, np.stack(ys)

    xs = sample((5, 3), F64)
    for f in (lambda xs: rune.scan(lambda c, r: step(rnp, c, r), np.zeros(3), xs),
              rune.jit(lambda xs: rune.scan(lambda c, r: step(rnp, c, r), np.zeros(3), xs))):
        assert_same(f(xs), reference(xs))
    rune.check_grads(lambda xs: rune.scan(lambda c, r: step(rnp, c, r), np.zeros(3), xs)[1],
                     xs, modes=("fwd", "rev"))


@pytest.mark.parametrize("f, error, message", [
    (lambda: rnp.pad(V, 1, mode="medium"), ValueError,
     r"mode 'medium' is not supported; the modes are constant, empty, edge, wrap, "
     r"linear_ramp, maximum, minimum, mean, median, reflect, symmetric"),
    (lambda: rnp.pad(V, 1, mode=None), ValueError, "mode None is not supported"),
    (lambda: rnp.pad(V, 1, lambda v, w, ax, kw: None), TypeError,
     "function as mode is not supported.*in place.*use one of the modes constant"),
    (lambda: rnp.pad(V, 1, "edge", constant_values=1), ValueError,
     r"unsupported keyword arguments for mode 'edge': \['constant_values'\] \(it takes "
     r"none\)"),
    (lambda: rnp.pad(V, 1, "mean", end_values=1, reflect_type="odd"), ValueError,
     r"mode 'mean': \['end_values', 'reflect_type'\] \(it takes only stat_length=\)"),
    (lambda: rnp.pad(V, 1, "linear_ramp", stat_length=1), ValueError,
     r"mode 'linear_ramp'.*only end_values="),
    (lambda: rnp.pad(V, 1, "reflect", reflect_type="oddly"), ValueError,
     "reflect_type must be 'even' or 'odd', got 'oddly'"),
    (lambda: rnp.pad(V, -1), ValueError, "pad_width can't contain negative values"),
    (lambda: rnp.pad(X, ((1, 2), (0, -3))), ValueError, "pad_width can't contain negative"),
    (lambda: rnp.pad(V, 1.5), TypeError, "pad_width must be of integral type"),
    (lambda: rnp.pad(V, 1, "mean", stat_length=-2), ValueError,
     "stat_length can't contain negative values"),
    (lambda: rnp.pad(X, 1, "maximum", stat_length=((1, 1), (0, 2))), ValueError,
     "stat_length of 0 yields no value for padding with mode 'maximum'"),
    (lambda: rnp.pad(X, ((0, 0), (0, 0)), "minimum", stat_length=0), ValueError,
     "stat_length of 0"),
    (lambda: rnp.pad(E, ((1, 0), (0, 0)), "median"), ValueError,
     "can't extend empty axis 0 using modes other than 'constant' or 'empty'"),
])
def test_pad_errors_say_what_is_wrong(f, error, message):
    with pytest.raises(error, match=message):
        f()


def test_pad_stat_length_must_be_static():
    with pytest.raises(TypeError, match="stat_length must be static"):
        rune.jit(lambda a, k: rnp.pad(a, 1, "mean", stat_length=k))(V, 2)


# ------------------------------------------------------------- value-dependent sizes

NEEDS_SIZE = {
    "nonzero": lambda a: rnp.nonzero(a),
    "flatnonzero": lambda a: rnp.flatnonzero(a),
    "argwhere": lambda a: rnp.argwhere(a),
    "unique": lambda a: rnp.unique(a),
    "where": lambda a: rnp.where(a > 0),
    "extract": lambda a: rnp.extract(a > 0, a),
    "compress": lambda a: rnp.compress(a[:, 0] > 0, a, axis=0),
}


@pytest.mark.parametrize("name", NEEDS_SIZE)
def test_value_dependent_sizes_under_a_trace_name_size(name):
    with pytest.raises(TypeError, match=rf"{name}.*size="):
        rune.jit(NEEDS_SIZE[name])(X)


def test_nanargmax_of_a_slice_of_nans():
    x = np.array([[np.nan, np.nan], [1.0, 2.0]])
    with pytest.raises(ValueError, match="all-NaN"):
        rnp.nanargmax(x, 1)
    assert_same(rune.jit(lambda a: (rnp.nanargmax(a, 1), rnp.nanargmin(a, 1)))(x),
                (np.array([-1, 1]), np.array([-1, 0])))


def test_value_dependent_sizes_with_size():
    x = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]])
    f = rune.jit(lambda a: (rnp.argwhere(a, size=4, fill_value=-1),
                            rnp.where(a > 0, size=2),
                            rnp.extract(a > 0, a, size=4, fill_value=-1.0),
                            rnp.compress(a[0] > 0, a, axis=1, size=2)))
    argw, wh, ex, comp = f(x)
    assert_same(argw, np.array([[0, 1], [1, 0], [1, 2], [-1, -1]]))
    assert_same(wh, (np.array([0, 1]), np.array([1, 0])))
    assert_same(ex, np.array([2.0, 3.0, 4.0, -1.0]))
    assert_same(comp, np.array([[2.0, 0.0], [0.0, 0.0]]))


def test_repeat_with_traced_counts_needs_total_repeat_length():
    with pytest.raises(TypeError, match="total_repeat_length"):
        rune.jit(lambda a, r: rnp.repeat(a, r))(V, np.array([1, 2, 0, 1, 1]))
    out = rune.jit(lambda a, r: rnp.repeat(a, r, total_repeat_length=7))(
        V, np.array([1, 2, 0, 1, 1]))
    assert_same(out, np.repeat(V, [1, 2, 0, 1, 3]))  # filled with the last element
    out = rune.jit(lambda a, r: rnp.repeat(a, r, total_repeat_length=2))(
        V, np.array([1, 2, 0, 1, 1]))
    assert_same(out, V[[0, 1]])


@pytest.mark.parametrize("f", [
    lambda a: rnp.split(a, rnp.argmax(a)),
    lambda a: rnp.tile(a, rnp.argmax(a)),
    lambda a: rnp.pad(a, rnp.argmax(a)),
    lambda a: rnp.delete(a, rnp.argmax(a)),
    lambda a: rnp.insert(a, rnp.argmax(a), 0.0),
])
def test_traced_positions_that_fix_the_shape_are_errors(f):
    with pytest.raises(TypeError, match="static"):
        rune.jit(f)(V)


@pytest.mark.parametrize("f, error", [
    (lambda: rnp.split(V, 2), ValueError),
    (lambda: rnp.array_split(V, 0), ValueError),
    (lambda: rnp.vsplit(V, 1), ValueError),
    (lambda: rnp.pad(E, 1, mode="edge"), ValueError),
    (lambda: rnp.pad(V, 1, mode="maximum", stat_length=0), ValueError),
    (lambda: rnp.pad(V, -1), ValueError),
    (lambda: rnp.delete(V, 7), IndexError),
    (lambda: rnp.insert(V, 9, 1.0), IndexError),
    (lambda: rnp.repeat(V, -1), ValueError),
    (lambda: rnp.einsum("ij,jk", X, X), ValueError),
    (lambda: rnp.einsum("ij->ii", X), ValueError),
    (lambda: rnp.einsum("i", X), ValueError),
    (lambda: rnp.einsum("...i->i", X3), ValueError),
    (lambda: rnp.tensordot(X, X, 1), ValueError),
    (lambda: rnp.cross(X, X), ValueError),
    (lambda: rnp.diagonal(V), ValueError),
    (lambda: rnp.rot90(V), ValueError),
    (lambda: rnp.fliplr(V), ValueError),
    (lambda: rnp.average(X, weights=V), TypeError),
    (lambda: rnp.average(V, weights=np.zeros(5)), ZeroDivisionError),
    (lambda: rnp.cov(X3), ValueError),
    (lambda: rnp.var(X, out=np.zeros(4)), TypeError),
    (lambda: rnp.meshgrid(V, indexing="yx"), ValueError),
    (lambda: rnp.where(X > 0, 1), ValueError),
    (lambda: rnp.ptp(X > 0), TypeError),
])
def test_errors_as_numpy_raises_them(f, error):
    with pytest.raises(error):
        f()


def test_logspace_bounds_must_be_concrete():
    with pytest.raises(ConcretizationError):
        rune.jit(lambda a: rnp.logspace(a, 2.0, 3))(1.0)


# ------------------------------------------------------------- methods

METHOD_CASES = {
    "copy": lambda a: a.copy(), "std": lambda a: a.std(0, ddof=1),
    "var": lambda a: a.var(axis=1, keepdims=True), "cumsum": lambda a: a.cumsum(1),
    "cumprod": lambda a: a.cumprod(), "round": lambda a: a.round(1),
    "__round__": lambda a: np.round(a) if isinstance(a, np.ndarray) else round(a),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "repeat": lambda a: a.repeat(2, axis=0), "take": lambda a: a.take(np.array([0, 2]), 1),
    "diagonal": lambda a: a.diagonal(1), "trace": lambda a: a.trace(-1),
    "real": lambda a: a.real, "imag": lambda a: a.imag, "conj": lambda a: a.conj(),
    "conjugate": lambda a: a.conjugate(), "flatten": lambda a: a.flatten(),
    "ravel": lambda a: a.ravel(), "clip": lambda a: a.clip(-0.5, 0.5),
    "dot": lambda a: a.dot(a.T), "argsort": lambda a: a.argsort(0),
    "sort": lambda a: np.sort(a, 1) if isinstance(a, np.ndarray) else a.sort(1),
    "all": lambda a: a.all(0), "any": lambda a: (a > 1).any(), "min": lambda a: a.min(1),
    "max": lambda a: a.max(), "argmin": lambda a: a.argmin(1), "argmax": lambda a: a.argmax(),
    "mean": lambda a: a.mean(0), "sum": lambda a: a.sum(1, keepdims=True),
    "prod": lambda a: a.prod(0), "reshape": lambda a: a.reshape(4, 3),
    "reshape tuple": lambda a: a.reshape((2, -1)), "transpose": lambda a: a.transpose(1, 0),
    "T": lambda a: a.T, "mT": lambda a: a[None].mT, "squeeze": lambda a: a[None].squeeze(),
    "astype": lambda a: a.astype(np.int32),
    "ptp": lambda a: np.ptp(a, 0) if isinstance(a, np.ndarray) else a.ptp(0),
    "compress": lambda a: a.compress([True, False, True], axis=0),
    "searchsorted": lambda a: a[0].searchsorted(0.0),
    "partition": lambda a: np.sort(a) if isinstance(a, np.ndarray) else a.partition(1),
    "view": lambda a: a.view(np.int64), "divmod": lambda a: divmod(a, 0.7),
    "itemsize nbytes": lambda a: np.asarray([a.itemsize, a.nbytes, a.ndim, a.size]),
    "shape dtype": lambda a: a.reshape(a.shape[::-1]).astype(a.dtype),
    "to_device": lambda a: a if isinstance(a, np.ndarray) else a.to_device("cpu"),
}


@pytest.mark.parametrize("name", METHOD_CASES)
def test_methods_on_traced_values(name):
    f = METHOD_CASES[name]
    assert_same(rune.jit(f)(X), f(X))


def test_at_least_sixty_ndarray_methods_and_attributes_are_listed():
    from rune_jit._src.numpy.methods import METHODS
    from rune_jit._src.trace import Tracer

    names = [n for n in METHODS if not n.startswith("__")] + ["shape", "dtype", "ndim", "size"]
    assert len(names) >= 60, len(names)
    assert all(hasattr(Tracer, n) for n in METHODS)
    documented = (ROOT / "docs" / "numpy.md").read_text()
    missing = [n for n in METHODS if f"`{n}`" not in documented]
    assert not missing, missing


@pytest.mark.parametrize("name, error", [
    ("item", ConcretizationError), ("tolist", ConcretizationError),
    ("tobytes", ConcretizationError), ("fill", TypeError), ("put", TypeError),
    ("resize", TypeError),
])
def test_methods_that_need_values_or_mutate_are_clear_errors(name, error):
    args = {"fill": (0.0,), "put": ([0], [1.0]), "resize": ((2, 6),)}.get(name, ())
    with pytest.raises(error, match="at\\[|full_like|reshape|concrete"):
        rune.jit(lambda a: getattr(a, name)(*args))(X)


def test_setitem_names_at():
    def f(a):
        a[0] = 1.0
        return a

    with pytest.raises(TypeError, match=r"\.at\[key\]\.set"):
        rune.jit(f)(X)


# ------------------------------------------------------------- dispatch

DISPATCHED = [
    lambda a: np.var(a, axis=0, ddof=1), lambda a: np.std(a), lambda a: np.nanmax(a, 1),
    lambda a: np.nansum(a), lambda a: np.nanmean(a), lambda a: np.nanstd(a, 0),
    lambda a: np.nanmin(a), lambda a: np.nanprod(a), lambda a: np.nanvar(a),
    lambda a: np.nanargmax(a), lambda a: np.nanargmin(a, 0), lambda a: np.nancumsum(a),
    lambda a: np.nancumprod(a, 1),
    lambda a: np.count_nonzero(a > 0), lambda a: np.average(a, 0), lambda a: np.ptp(a),
    lambda a: np.cov(a), lambda a: np.corrcoef(a), lambda a: np.copy(a),
    lambda a: np.atleast_1d(a), lambda a: np.atleast_2d(a), lambda a: np.atleast_3d(a),
    lambda a: np.diag(a), lambda a: np.diagflat(a[0]), lambda a: np.diagonal(a),
    lambda a: np.trace(a), lambda a: np.tril(a), lambda a: np.triu(a),
    lambda a: np.meshgrid(a[0], a[1])[1], lambda a: np.empty_like(a) * 0,
    lambda a: np.allclose(a, a), lambda a: np.isclose(a, a), lambda a: np.array_equal(a, a),
    lambda a: np.array_equiv(a, a), lambda a: np.isin(a, a[0]),
    lambda a: np.hstack([a, a]), lambda a: np.vstack([a, a]), lambda a: np.dstack([a, a]),
    lambda a: np.column_stack([a, a]), lambda a: np.split(a, 2, 1)[0],
    lambda a: np.array_split(a, 2)[1], lambda a: np.hsplit(a, 2)[0],
    lambda a: np.vsplit(a, 3)[0], lambda a: np.tile(a, 2), lambda a: np.repeat(a, 2),
    lambda a: np.roll(a, 1), lambda a: np.flip(a), lambda a: np.fliplr(a),
    lambda a: np.flipud(a), lambda a: np.rot90(a), lambda a: np.pad(a, 1),
    lambda a: np.swapaxes(a, 0, 1), lambda a: np.kron(a, a), lambda a: np.append(a, a),
    lambda a: np.insert(a, 1, 0.0), lambda a: np.delete(a, 1),
    lambda a: np.broadcast_arrays(a, a[0])[1], lambda a: np.einsum("ij->j", a),
    lambda a: np.tensordot(a, a, 2), lambda a: np.inner(a, a), lambda a: np.vdot(a, a),
    lambda a: np.cross(a[:, :3], a[:, 1:]), lambda a: np.polyval(a[0], a),
    lambda a: np.apply_along_axis(np.sum, 1, a), lambda a: np.compress([1, 0, 1], a, 0),
    lambda a: np.where(a > 0, a, 0.0),
]


@pytest.mark.parametrize("i", range(len(DISPATCHED)))
def test_numpy_functions_dispatch_on_traced_values(i):
    f = DISPATCHED[i]
    assert_same(quiet(rune.jit(f), X), quiet(f, X))


def test_numpy_arguments_without_a_rule_say_so():
    with pytest.raises(TypeError, match="no rule"):
        rune.jit(lambda a: np.var(a, where=a > 0))(X)


# ------------------------------------------------------------- coverage script


def test_coverage_script_counts_the_rows_it_covers():
    out = subprocess.run([sys.executable, str(ROOT / "docs" / "numpy_coverage.py")],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    last = out.strip().splitlines()[-1]
    covered, total = (int(v) for v in last.split()[1].split("/"))
    assert total == 150
    assert covered >= 120, out
    for name in ("einsum", "cov", "pad", "std", "linalg.solve"):
        assert any(line.split()[:2] == ["yes", name] for line in out.splitlines()), name
