"""Gather, scatter, sort and prefix operations (issue 13): NumPy's advanced indexing,
JAX's `.at[]` updates, sorting and searching, order statistics, prefix operations and
segment reductions, eager and jitted, under transformations and inside loops."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import PATHS, on

X = np.arange(60.0).reshape(3, 4, 5) / 7.0


# ------------------------------------------------------------- generated index expressions


@st.composite
def keys(draw, shape=X.shape, outside=False):
    """A NumPy key for an array of `shape`: ints, slices, None, Ellipsis, integer index
    arrays (broadcasting, of int64, int32, int8 or uint8) and boolean masks, mixed. With
    `outside`, index arrays reach past both ends (for the modes of `.at[]`) and masks,
    whose positions are never outside, are left out."""
    entries, axis = [], 0
    index_dtype = draw(st.sampled_from([np.int64, np.int32, np.int8, np.uint8]))
    n_arrays_shape = draw(st.sampled_from([(), (2,), (3, 1), (1, 2)]))
    used_ellipsis = False
    while axis < len(shape):
        n = shape[axis]
        kind = draw(st.sampled_from(["int", "slice", "array", "array", "none",
                                     "array" if outside else "mask", "ellipsis", "stop"]))
        if kind == "stop" and entries:
            break
        if kind == "int":
            entries.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            a, b = draw(st.integers(-n, n)), draw(st.integers(-n, n))
            entries.append(slice(a, b, draw(st.sampled_from([1, 2, -1, -2, None]))))
        elif kind == "array":
            lo, hi = (-2 * n - 1, 2 * n) if outside else (-n, n - 1)
            if index_dtype == np.uint8:
                lo = 0
            entries.append(np.asarray(draw(st.lists(st.integers(lo, hi), min_size=int(
                np.prod(n_arrays_shape)), max_size=int(np.prod(n_arrays_shape)))),
                index_dtype).reshape(n_arrays_shape))
        elif kind == "mask":
            entries.append(np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        elif kind == "none":
            entries.append(None)
            continue
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            entries.append(Ellipsis)
            axis = len(shape) - draw(st.integers(0, len(shape) - axis))
            continue
        else:
            continue
        axis += 1
    return tuple(entries)


def _numpy_or_error(f):
    try:
        return "ok", f()
    except (IndexError, ValueError) as err:
        return type(err), err


INDEXING = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@INDEXING
@given(key=keys())
def test_generated_keys_read_as_numpy_reads_them(key):
    kind, want = _numpy_or_error(lambda: X[key])
    if kind != "ok":
        with pytest.raises(kind):
            rune.jit(lambda v: v[key])(X)
        return
    got = rune.jit(lambda v: v[key])(X)
    assert got.shape == want.shape, key
    np.testing.assert_array_equal(got, want, err_msg=str(key))


@INDEXING
@given(key=keys(outside=True), part=st.sampled_from([None, 1, 0]),
       through=st.sampled_from(["none", "product", "row sums"]))
def test_generated_keys_out_of_bounds_raise_as_numpy_whatever_is_read(key, part, through):
    """Index arrays past both ends, the result read whole or only in part (its first
    element, or none of it), directly or through a lazy product or a reduction: an error
    exactly where NumPy gives one (a compiled check once ran only where an element was
    read, and then was fused into a product read in part)."""
    def f(v):
        flat = v[key].reshape(-1, 1)
        flat = {"none": flat, "product": flat @ np.ones((1, 2)),
                "row sums": flat.sum(axis=1)}[through]
        return flat if part is None else flat.reshape(-1)[:part]

    kind, want = _numpy_or_error(lambda: f(X))
    if kind != "ok":
        with pytest.raises(kind):
            rune.jit(f)(X)
        return
    np.testing.assert_array_equal(rune.jit(f)(X), want, err_msg=str(key))


@INDEXING
@given(key=keys(), op=st.sampled_from(["set", "add", "multiply", "min", "max"]))
def test_generated_updates_write_as_numpy_writes(key, op):
    kind, view = _numpy_or_error(lambda: X[key])
    if kind != "ok":
        return
    values = np.linspace(-1.0, 2.0, view.size).reshape(view.shape) if view.size else view
    want = X.copy()
    if op == "set":
        want[key] = values  # NumPy's assignment: the last of repeated positions wins
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
        ufunc[op].at(want, key, values)
    got = rune.jit(lambda v, u: getattr(v.at[key], op)(u))(X, values)
    np.testing.assert_array_equal(got, want, err_msg=f"{op} at {key}")
    eager = getattr(rnp.at(X)[key], op)(values)
    np.testing.assert_array_equal(eager, want)


def _jax_key(key, shape, mode, pad):
    """An `.at[key]` of JAX's modes as a NumPy key: every index counts from the end when
    negative; "clip" clamps it into X, the other modes shift it by `pad` into an array
    with `pad` extra elements at both ends of each axis, where the outside lands."""
    real = sum(k is not None and k is not Ellipsis for k in key)
    fixed, axis = [], 0
    for k in key:
        if k is Ellipsis:
            fixed.append(k if mode == "clip" else [slice(pad, pad + n) for n in shape[
                axis:axis + len(shape) - real]])
            axis += len(shape) - real
            continue
        if k is None:
            fixed.append(k)
            continue
        n = shape[axis]
        if isinstance(k, slice):
            r = range(*k.indices(n))
            k = k if mode == "clip" else slice(0, 0) if not r else slice(
                r[0] + pad, r[-1] + pad + (1 if r.step > 0 else -1), r.step)
        else:
            i = np.asarray(k).astype(np.int64)
            i = np.where(i < 0, i + n, i)
            k = np.clip(i, 0, n - 1) if mode == "clip" else i + pad
        fixed.append(k)
        axis += 1
    flat = []
    for k in fixed:
        flat += k if isinstance(k, list) else [k]
    flat += [slice(pad, pad + n) for n in shape[axis:]] if mode != "clip" else []
    return tuple(flat)


@INDEXING
@given(key=keys(outside=True), mode=st.sampled_from(["clip", "fill", "drop"]),
       op=st.sampled_from(["get", "add", "max", "min"]))
def test_generated_at_modes_read_and_write_as_jax(key, mode, op):
    """`.at[key]` with index arrays past both ends (negative ones included) in the modes
    JAX offers, as JAX defines them: built here from NumPy on a padded array."""
    if op == "get" and mode == "drop":
        mode = "fill"
    pad = 2 * max(X.shape) + 1
    big = np.pad(X, pad, constant_values=np.nan) if mode != "clip" else X
    fixed = _jax_key(key, X.shape, mode, pad)
    view = big[fixed]
    if op == "get":
        got = rune.jit(lambda v: rnp.at(v)[key].get(mode=mode))(X)
        np.testing.assert_array_equal(got, view, err_msg=f"{mode} {key}")
        return
    values = np.linspace(-1.0, 2.0, view.size).reshape(view.shape) if view.size else view
    want = big.copy()
    {"add": np.add, "max": np.maximum, "min": np.minimum}[op].at(want, fixed, values)
    if mode != "clip":  # what landed outside X is dropped
        want = want[(slice(pad, -pad),) * X.ndim]
    got = rune.jit(lambda v, u: getattr(rnp.at(v)[key], op)(u, mode=mode))(X, values)
    np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=f"{op} {mode} {key}")


SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5, 3.0])
ROWS = st.lists(st.one_of(SPECIAL, st.floats(-4, 4, width=16)), min_size=6, max_size=6)
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@rune.jit
def _order_statistics(x, v, q):
    return (rnp.sort(x), rnp.argsort(x), rnp.searchsorted(rnp.sort(x), v, "left"),
            rnp.searchsorted(rnp.sort(x), v, "right"), rnp.unique(x, size=6, fill_value=7.0),
            rnp.median(x), rnp.nanmedian(x),
            *[rnp.quantile(x, q, method=m) for m in METHODS],
            *[rnp.nanquantile(x, q, method=m) for m in METHODS])



@INDEXING
@given(x=ROWS, v=ROWS, q=st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]),
                                  min_size=2, max_size=2))
def test_generated_order_statistics_of_nans_and_infinities_as_numpy(x, v, q):
    """Sorting, searching, unique and the quantiles of rows with NaN, ±inf and ±0,
    as NumPy computes them, bit for bit and dtype for dtype."""
    x, v, q = np.array(x), np.array(v), np.array(q)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        uniq = np.unique(x)
        want = (np.sort(x), np.argsort(x, kind="stable"), np.searchsorted(np.sort(x), v),
                np.searchsorted(np.sort(x), v, "right"),
                np.concatenate([uniq, np.full(6 - uniq.size, 7.0)]), np.median(x),
                np.nanmedian(x), *[np.quantile(x, q, method=m) for m in METHODS],
                *[np.nanquantile(x, q, method=m) for m in METHODS])
    for g, w in zip(_order_statistics(x, v, q), want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w, err_msg=str((x, v, q)))


@INDEXING
@given(ids=st.lists(st.integers(-4, 5), min_size=6, max_size=6),
       dtype=st.sampled_from([np.int64, np.int32, np.int8]))
def test_generated_segment_ids_outside_are_dropped(ids, dtype):
    """Segment reductions and bincount(length=) with ids past both ends, as JAX's: a
    segment id outside [0, 4) is dropped; bincount counts a negative value in bin 0."""
    ids = np.array(ids, dtype)
    data = np.linspace(1.0, 6.0, 6)
    got = rune.jit(lambda d, i: (rune.ops.segment_sum(d, i, 4), rune.ops.segment_max(d, i, 4),
                                 rnp.bincount(i, length=4)))(data, ids)
    inside = (ids >= 0) & (ids < 4)
    np.testing.assert_array_equal(got[0], np.bincount(ids[inside], data[inside], 4))
    top = np.full(4, -np.inf)
    np.maximum.at(top, ids[inside], data[inside])
    np.testing.assert_array_equal(got[1], top)
    np.testing.assert_array_equal(got[2], np.bincount(np.clip(ids, 0, None)[ids < 4], None,
                                                      4)[:4])


# ------------------------------------------------------------- every path, transformations

CASES = {
    "gather_rows": (lambda x, i: x[i], lambda x, i: x[i]),
    "gather_columns": (lambda x, i: x[:, i], lambda x, i: x[:, i]),
    "gather_pairs": (lambda x, i: x[i, i[::-1]], lambda x, i: x[i, i[::-1]]),
    "take_axis": (lambda x, i: rnp.take(x, i, axis=1), lambda x, i: np.take(x, i, axis=1)),
    "take_along": (lambda x, i: rnp.take_along_axis(x, rnp.argsort(x, axis=1), axis=1),
                   lambda x, i: np.take_along_axis(x, np.argsort(x, axis=1), axis=1)),
    "scatter_add": (lambda x, i: rnp.at(x)[i].add(x[i] * 2.0), None),
    "sort": (lambda x, i: rnp.sort(x, axis=0), lambda x, i: np.sort(x, axis=0)),
    "quantile": (lambda x, i: rnp.quantile(x, 0.3, axis=1), lambda x, i: np.quantile(x, 0.3,
                                                                                     axis=1)),
    "cumsum": (lambda x, i: rnp.cumsum(x, axis=1), lambda x, i: np.cumsum(x, axis=1)),
    "cumprod": (lambda x, i: rnp.cumprod(x, axis=0), lambda x, i: np.cumprod(x, axis=0)),
    "cummax": (lambda x, i: np.maximum.accumulate(x, axis=1),
               lambda x, i: np.maximum.accumulate(x, axis=1)),
}
M = np.array([[0.3, -1.2, 2.0, 0.7], [1.1, 0.4, -0.6, 1.9], [-0.2, 0.8, 1.3, -1.7]])
IDX = np.array([2, 0, 2])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("path", PATHS)
def test_values_on_every_path(name, path, monkeypatch):
    f, ref = CASES[name]
    got = on(path, f, monkeypatch)(M, IDX)
    if ref is not None:
        np.testing.assert_allclose(got, ref(M, IDX), rtol=1e-14)
    else:
        want = M.copy()
        np.add.at(want, IDX, M[IDX] * 2.0)
        np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_derivatives_agree_with_finite_differences(name):
    f = CASES[name][0]
    rune.check_grads(lambda x: f(x, IDX), M)
    rune.check_grads(lambda x: rnp.sum(rnp.tanh(f(x, IDX))), M, modes=("rev",))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("path", ["eager", "jit"])
def test_vmap_matches_a_loop_over_lanes(name, path, monkeypatch):
    f = CASES[name][0]
    xs = np.stack([M, M * -0.5, M + 1.0])
    got = on(path, rune.vmap(lambda x: f(x, IDX)), monkeypatch)(xs)
    np.testing.assert_allclose(got, np.stack([f(x, IDX) for x in xs]), rtol=1e-14)
    gi = on(path, rune.vmap(f, in_axes=(None, 0)), monkeypatch)(M, np.stack([IDX, IDX[::-1]]))
    np.testing.assert_allclose(gi, np.stack([f(M, IDX), f(M, IDX[::-1])]), rtol=1e-14)


@pytest.mark.parametrize("path", PATHS)
def test_an_index_in_a_loop_carry(path, monkeypatch):
    """Gauss-Seidel-like sweep: x.at[i].set(...) with i the carry, and a constant table
    read at a traced index inside a scan step (an HMM step)."""
    table = np.log(np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]]))

    def sweep(x):
        def step(c, _):
            i, v = c
            v = v.at[i].set(0.5 * (v[(i + 1) % 4] + v[(i + 3) % 4]))
            return ((i + 1) % 4, v), None
        return rune.scan(step, (np.int64(0), x), length=9)[0][1]

    def hmm(obs):
        def step(alpha, o):
            emit = rnp.take(table, o, axis=1)  # log B[:, o]
            return alpha * 0.5 + emit, None
        return rune.scan(step, np.zeros(3), obs)[0]

    x = np.array([1.0, 4.0, -2.0, 0.5])
    want = x.copy()
    i = 0
    for _ in range(9):
        want[i] = 0.5 * (want[(i + 1) % 4] + want[(i + 3) % 4])
        i = (i + 1) % 4
    np.testing.assert_allclose(on(path, sweep, monkeypatch)(x), want)
    rune.check_grads(sweep, x)
    obs = np.array([0, 1, 1, 0])
    a = np.zeros(3)
    for o in obs:
        a = a * 0.5 + table[:, o]
    np.testing.assert_allclose(on(path, hmm, monkeypatch)(obs), a)


@pytest.mark.parametrize("path", PATHS)
def test_an_ellipsis_of_no_axes_still_separates_index_arrays(path, monkeypatch):
    """Regression: in X[None, 0, idx, ..., 0] the Ellipsis stands for no axis, and was
    dropped, so the index arrays counted as adjacent and their axes stayed in place
    (shape (1, 2)); NumPy counts them as separated by the Ellipsis and moves them first
    (shape (2, 1)). Found by the generated update test once its keys were widened."""
    for key in [(None, 0, np.array([0, 2]), Ellipsis, 1),
                (None, np.array([1]), np.array([2]), ..., np.array([1, 3]))]:
        got = on(path, lambda v, key=key: v[key], monkeypatch)(X)
        assert got.shape == X[key].shape, key
        np.testing.assert_array_equal(got, X[key])
        u = np.arange(X[key].size, dtype=float).reshape(X[key].shape)
        want = X.copy()
        want[key] = u
        np.testing.assert_array_equal(on(path, lambda v, u, key=key: rnp.at(v)[key].set(u),
                                         monkeypatch)(X, u), want)
    g = rune.grad(lambda v: rnp.sum(v[None, 0, np.array([0, 2]), ..., 1] *
                                    np.array([[1.0], [2.0]])))(X)
    want = np.zeros_like(X)
    want[0, [0, 2], 1] = [1.0, 2.0]
    np.testing.assert_array_equal(g, want)


def test_the_gradient_of_a_gather_is_a_scatter_add_not_a_one_hot():
    region = rune.make_ir(rune.grad(lambda x, i: rnp.sum(x[i] ** 2)))(np.ones(1000),
                                                                     np.arange(10) * 7)
    names = [e.prim.name for e in region.eqns]
    assert "gather" in names and "scatter" in names
    assert all(v.type.size <= 1000 for e in region.eqns for v in e.outputs)  # nothing n*m


def test_set_with_repeated_indices_takes_the_last_and_its_gradient():
    x, i, u = np.zeros(3), np.array([1, 1, 2]), np.array([5.0, 6.0, 7.0])
    np.testing.assert_array_equal(rune.jit(lambda x, u: x.at[i].set(u))(x, u), [0, 6, 7])
    g = rune.grad(lambda u: rnp.sum(rnp.at(x)[i].set(u) * np.array([1.0, 2.0, 3.0])))(u)
    np.testing.assert_array_equal(g, [0.0, 2.0, 3.0])  # the overwritten update reaches nothing


def test_min_max_updates_split_ties_like_max():
    g = rune.grad(lambda u: rnp.sum(rnp.at(np.array([1.0, 0.0]))[np.array([0, 0])].max(u)))(
        np.array([1.0, 0.5]))
    np.testing.assert_allclose(g, [0.5, 0.0])  # x[0] and u[0] tie at the maximum


# ------------------------------------------------------------- sorting and searching


@pytest.mark.parametrize("path", PATHS)
def test_sort_is_stable_nans_last_and_descending(path, monkeypatch):
    x = np.array([3.0, np.nan, 1.0, 3.0, -0.0, 0.0, np.nan, 2.0])
    s = on(path, lambda v: (rnp.sort(v), rnp.argsort(v), rnp.sort(v, descending=True),
                            rnp.argsort(v, descending=True)), monkeypatch)(x)
    np.testing.assert_array_equal(s[0], np.sort(x))
    np.testing.assert_array_equal(s[1], np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(s[2], np.concatenate([[np.nan, np.nan], np.sort(x)[:6][::-1]]))
    assert s[3].tolist() == [1, 6, 0, 3, 7, 2, 4, 5]  # ties (3, 3; -0.0, 0.0) in order
    ints = np.array([[5, -3, 5, 0], [2, 2, -7, 9]], np.int32)
    np.testing.assert_array_equal(on(path, lambda v: rnp.argsort(v, axis=1), monkeypatch)(
        ints), np.argsort(ints, axis=1, kind="stable"))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("path", PATHS)
def test_searchsorted(side, path, monkeypatch):
    a = np.array([0.0, 1.0, 1.0, 2.5, 7.0])
    v = np.array([[-1.0, 1.0], [1.5, 7.0], [8.0, 2.5]])
    got = on(path, lambda a, v: rnp.searchsorted(a, v, side), monkeypatch)(a, v)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_methods_and_nan_forms(method):
    x = np.array([[4.0, 1.0, 3.0, 2.0, 8.0], [0.5, np.nan, 2.0, 1.0, 3.0]])
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    f = rune.jit(lambda v: rnp.quantile(v, q, axis=1, method=method))
    np.testing.assert_allclose(f(x), np.quantile(x, q, axis=1, method=method))
    g = rune.jit(lambda v: rnp.nanquantile(v, q, axis=1, method=method, keepdims=True))
    np.testing.assert_allclose(g(x), np.nanquantile(x, q, axis=1, method=method, keepdims=True))
    np.testing.assert_allclose(rune.jit(rnp.median)(x[0]), np.median(x[0]))
    np.testing.assert_allclose(rune.jit(lambda v: rnp.percentile(v, 40.0))(x[0]),
                               np.percentile(x[0], 40.0))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("path", PATHS)
def test_searchsorted_puts_a_nan_after_every_number(side, path, monkeypatch):
    """Regression: a NaN value was placed before everything (index 0: every comparison
    with NaN is False), where NumPy, whose sort puts NaNs last, places it after the
    numbers (and after the NaNs of `a` too for side="right")."""
    a = np.array([-np.inf, 1.0, 2.0, np.inf, np.nan, np.nan])
    v = np.array([np.nan, 2.0, np.inf, -np.inf, 0.5])
    for dtype in (np.float64, np.float32, np.float16):
        got = on(path, lambda a, v: rnp.searchsorted(a, v, side), monkeypatch)(
            a.astype(dtype), v.astype(dtype))
        np.testing.assert_array_equal(got, np.searchsorted(a.astype(dtype), v.astype(dtype),
                                                           side))
    ints = np.array([1, 2, 3])
    got = on(path, lambda a, v: rnp.searchsorted(a, v, side), monkeypatch)(ints, v)
    np.testing.assert_array_equal(got, np.searchsorted(ints, v, side))
    lanes = rune.vmap(lambda v: rnp.searchsorted(a, v, side))(v)
    np.testing.assert_array_equal(lanes, [np.searchsorted(a, x, side) for x in v])


@pytest.mark.parametrize("path", PATHS)
def test_unique_counts_nans_as_one_value(path, monkeypatch):
    """Regression: unique(size=) kept every NaN (NaN != NaN), where NumPy's and JAX's
    unique (equal_nan=True) keep one."""
    x = np.array([3.0, np.nan, 1.0, np.nan, -0.0, 0.0, 3.0, np.nan])
    got = on(path, lambda v: rnp.unique(v, size=6, fill_value=9.0), monkeypatch)(x)
    np.testing.assert_array_equal(got, [-0.0, 1.0, 3.0, np.nan, 9.0, 9.0])
    np.testing.assert_array_equal(got[:4], np.unique(x))
    np.testing.assert_array_equal(on(path, lambda v: rnp.unique(v, size=2), monkeypatch)(
        np.array([np.nan, np.nan], np.float32)), [np.nan, np.nan])  # one NaN, then its fill


QUANTILE_ROWS = np.array([[-np.inf, 1.0, 2.0, 5.0], [1.0, 3.0, np.inf, np.inf],
                          [-np.inf, -np.inf, 2.0, np.inf], [-0.0, 0.0, -0.0, 7.0]])


@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "midpoint", "linear"])
@pytest.mark.parametrize("path", PATHS)
def test_quantiles_of_infinities_and_their_dtypes_as_numpy(method, path, monkeypatch):
    """Regression: the quantile read by "lower", "higher" and "nearest" was made as
    `lo + 0 * (hi - lo)`, NaN when an infinity is near (quantile([-inf, 1, 2], 0,
    "lower") was NaN, NumPy's -inf), and in float64 for integer input (NumPy's: the
    element, in its dtype); "linear" and "midpoint" interpolated as `lo + t (hi - lo)`,
    NaN for [-inf, 1] at t = 0.5 where NumPy's formula gives -inf."""
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.6, 1.0])
    f = on(path, lambda v, q: rnp.quantile(v, q, axis=1, method=method), monkeypatch)
    got, want = f(QUANTILE_ROWS, q), np.quantile(QUANTILE_ROWS, q, axis=1, method=method)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    nan_rows = np.concatenate([QUANTILE_ROWS, np.full((4, 1), np.nan)], axis=1)
    np.testing.assert_array_equal(
        on(path, lambda v: rnp.nanquantile(v, q, axis=1, method=method), monkeypatch)(
            nan_rows), np.nanquantile(nan_rows, q, axis=1, method=method))
    ints = np.array([7, -3, 120, 5], np.int8)
    for arr, qq in ((ints, 0.5), (ints, q), (ints.astype(np.uint16), 0.3),
                    (QUANTILE_ROWS.astype(np.float32), q), (QUANTILE_ROWS.astype(np.float32),
                                                            0.3)):
        want = np.quantile(arr, qq, method=method)
        got = on(path, lambda v, qq=qq: rnp.quantile(v, qq, method=method), monkeypatch)(arr)
        assert got.dtype == want.dtype, (arr.dtype, qq)
        np.testing.assert_array_equal(got, want)
    want = np.percentile(ints, 50, method=method)
    got = on(path, lambda v: rnp.percentile(v, 50, method=method), monkeypatch)(ints)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("path", PATHS)
def test_median_averages_the_middle_values_as_numpy(path, monkeypatch):
    """Regression: median was the linear quantile at 0.5, NaN for a middle pair of -inf
    and a number (-inf + 0.5 * inf); NumPy averages the two middle values (-inf)."""
    rows = np.concatenate([QUANTILE_ROWS, [[1e308, 1e308, 1.7e308, 0.0]]])
    got = on(path, lambda v: rnp.median(v, axis=1), monkeypatch)(rows)
    np.testing.assert_array_equal(got, np.median(rows, axis=1))
    with_nan = np.concatenate([rows, np.full((5, 1), np.nan)], axis=1)
    np.testing.assert_array_equal(on(path, lambda v: rnp.nanmedian(v, axis=1), monkeypatch)(
        with_nan), np.nanmedian(with_nan, axis=1))
    for arr in (np.array([120, 7, 126, -3], np.int8), np.array([1.0, 2.0], np.float16)):
        got, want = on(path, rnp.median, monkeypatch)(arr), np.median(arr)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    g = rune.grad(lambda v: rnp.median(v))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.5])


def test_unique_nonzero_and_bincount_with_static_sizes():
    x = np.array([3, 1, 3, 0, 1, 7])
    np.testing.assert_array_equal(rune.jit(lambda v: rnp.unique(v, size=6, fill_value=-1))(x),
                                  [0, 1, 3, 7, -1, -1])
    np.testing.assert_array_equal(rnp.unique(x), np.unique(x))  # outside a trace: NumPy's
    nz = rune.jit(lambda v: rnp.nonzero(v > 1, size=4))(x)
    np.testing.assert_array_equal(nz[0], [0, 2, 5, 0])
    m = np.array([[0, 2], [3, 0]])
    np.testing.assert_array_equal(rune.jit(lambda v: rnp.nonzero(v, size=2))(m),
                                  np.nonzero(m))
    np.testing.assert_array_equal(rune.jit(lambda v: rnp.flatnonzero(v, size=3))(m), [1, 2, 0])
    w = np.linspace(0.0, 1.0, 6)
    np.testing.assert_allclose(rune.jit(lambda v, w: rnp.bincount(v, w, length=8))(x, w),
                               np.bincount(x, w, minlength=8))


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_segment_reductions(op):
    data = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0], [2.0, 2.0]])
    ids = np.array([2, 0, 2, 5])  # 5 is out of range: dropped
    f = getattr(rune.ops, f"segment_{op}")
    got = rune.jit(lambda d, i: f(d, i, 4))(data, ids)
    ident = {"sum": 0.0, "max": -np.inf, "min": np.inf}[op]
    want = np.full((4, 2), ident)
    for d, i in zip(data, ids):
        if i < 4:
            want[i] = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op](want[i], d)
    np.testing.assert_array_equal(got, want)
    if op == "sum":
        rune.check_grads(lambda d: f(d, ids, 4), data)


def _segments_by_hand(op, data, ids, n):
    """JAX's segment reductions, one row at a time: ids outside [0, n) are dropped."""
    ident = {"sum": 0.0, "max": -np.inf, "min": np.inf}[op]
    want = np.full((n,) + data.shape[1:], ident)
    for d, i in zip(data, ids):
        if 0 <= i < n:
            want[i] = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op](want[i], d)
    return want


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_negative_segment_ids_are_dropped_not_wrapped(op, path, monkeypatch):
    """Regression: a negative segment id was wrapped as an index (-1 summed into the last
    segment), where JAX's segment reductions drop it, as the docs say rune_jit does."""
    data = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    ids = np.array([-1, 0, 2, 5, -3])
    f = getattr(rune.ops, f"segment_{op}")
    for dtype in (np.int64, np.int32):
        got = on(path, lambda d, i: f(d, i, 3), monkeypatch)(data, ids.astype(dtype))
        np.testing.assert_array_equal(got, _segments_by_hand(op, data, ids, 3))
    batch = np.stack([ids, ids[::-1]])
    np.testing.assert_array_equal(
        rune.jit(rune.vmap(lambda i: f(data, i, 3)))(batch),
        [_segments_by_hand(op, data, i, 3) for i in batch])
    in_scan = rune.jit(lambda d: rune.scan(lambda c, i: (c + f(d, i, 3), None),
                                           np.zeros(3), batch)[0])
    np.testing.assert_array_equal(in_scan(data), sum(_segments_by_hand(op, data, i, 3)
                                                       for i in batch))
    if op == "sum":
        grad = rune.grad(lambda d: rnp.sum(f(d, ids, 3) ** 2))(data)
        np.testing.assert_array_equal(grad, [0.0, 4.0, 8.0, 0.0, 0.0])
        rune.check_grads(lambda d: f(d, ids, 3), data)


@pytest.mark.parametrize("path", PATHS)
def test_bincount_with_a_length_counts_negatives_in_bin_zero_as_jax(path, monkeypatch):
    """Regression: a negative value was wrapped to the last bin; with `length=` (JAX's
    keyword; NumPy raises for negatives) JAX counts it in bin 0, and drops values past
    the length."""
    x, w = np.array([-1, 0, 2, 5, -3]), np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    got = on(path, lambda x, w: rnp.bincount(x, w, length=3), monkeypatch)(x, w)
    np.testing.assert_array_equal(got, [19.0, 0.0, 4.0])
    got = on(path, lambda x: rnp.bincount(x, length=3), monkeypatch)(x)
    np.testing.assert_array_equal(got, [3, 0, 1])


@pytest.mark.parametrize("path", PATHS)
def test_prefix_operations(path, monkeypatch):
    x = np.array([[1.0, 0.0, -2.0, 3.0], [0.5, 2.0, 0.0, 1.5]])
    fs = {
        "cumulative_sum": (lambda v: rnp.cumulative_sum(v, axis=1, include_initial=True),
                           lambda v: np.cumulative_sum(v, axis=1, include_initial=True)),
        "cumulative_prod": (lambda v: rnp.cumulative_prod(v, axis=0),
                            lambda v: np.cumulative_prod(v, axis=0)),
        "cumsum_flat": (rnp.cumsum, np.cumsum),
        "minimum.accumulate": (lambda v: np.minimum.accumulate(v, axis=1),
                               lambda v: np.minimum.accumulate(v, axis=1)),
        "diff": (lambda v: rnp.diff(v, n=2, axis=1, prepend=0.0),
                 lambda v: np.diff(v, n=2, axis=1, prepend=0.0)),
        "int_cumsum": (lambda v: rnp.cumsum(v.astype(np.int32), axis=1),
                       lambda v: np.cumsum(v.astype(np.int32), axis=1)),
    }
    for name, (f, ref) in fs.items():
        got = on(path, f, monkeypatch)(x)
        np.testing.assert_array_equal(got, ref(x), err_msg=name)
        assert got.dtype == ref(x).dtype, name
    rune.check_grads(lambda v: rnp.cumprod(v, axis=1), x)  # exact at the zeros


@pytest.mark.parametrize("path", PATHS)
def test_running_sums_of_small_ints_and_bools_widen_as_numpy(path, monkeypatch):
    """Regression: np.add.accumulate and np.multiply.accumulate of a traced int8 (or
    int32, uint16, ...) stayed in that dtype and wrapped (int8 100 + 100 gave -56), where
    NumPy 2 accumulates in the platform integer (200); of bools they raised, and so did
    cumsum(..., dtype=bool), which NumPy computes as a running logical or."""
    x = np.array([[100, 100, 27], [-100, 50, 3]], np.int8)
    for ufunc in (np.add, np.multiply, np.maximum):
        for arr in (x, x.astype(np.uint16), x > 0, x.astype(np.float32)):
            want = ufunc.accumulate(arr, axis=1)
            got = on(path, lambda v, u=ufunc: u.accumulate(v, axis=1), monkeypatch)(arr)
            assert got.dtype == want.dtype, (ufunc, arr.dtype)
            np.testing.assert_array_equal(got, want)
    flags = np.array([0.0, 0.0, 2.0, 0.0])
    for f, ref in ((lambda v: rnp.cumsum(v, dtype=bool), np.cumsum(flags, dtype=bool)),
                   (lambda v: rnp.cumprod(v + 1.0, dtype=bool),
                    np.cumprod(flags + 1.0, dtype=bool))):
        got = on(path, f, monkeypatch)(flags)
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("path", PATHS)
def test_empty_inputs_of_diff_and_nonzero(path, monkeypatch):
    """Regression: diff of an empty axis failed to trace (a slice starting past the end)
    and nonzero(size=) of an empty array divided by zero; NumPy gives an empty diff, JAX
    a result of fill values."""
    for x in (np.zeros(0), np.zeros((2, 0), np.int32)):
        for n in (1, 2):
            got = on(path, lambda v, n=n: rnp.diff(v, n=n), monkeypatch)(x)
            want = np.diff(x, n=n)
            assert got.shape == want.shape and got.dtype == want.dtype
    got = on(path, lambda v: rnp.nonzero(v, size=3, fill_value=-1), monkeypatch)(
        np.zeros((2, 0)))
    np.testing.assert_array_equal(got, [[-1, -1, -1], [-1, -1, -1]])
    np.testing.assert_array_equal(on(path, lambda v: rnp.flatnonzero(v, size=2),
                                     monkeypatch)(np.zeros(0)), [0, 0])


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad, error, message", [
    (lambda x: x[np.array([0.5, 1.0])], IndexError, "must be of integer .* type, got float64"),
    (lambda x: x[np.array([0, 1]), np.array([0, 1, 2])], IndexError,
     r"shape mismatch: indexing arrays could not be broadcast together with shapes \(2,\) "
     r"\(3,\)"),
    (lambda x: x[x > 0], TypeError, r"rnp.where\(mask, x, fill\).*nonzero\(mask, size=n\)"),
    (lambda x: x.at[np.array([0, 1])].set(np.ones(3)), ValueError,
     r"values of shape \(3,\) do not broadcast to the indexed shape \(2, 4\)"),
    (lambda x: rune.ops.segment_sum(x, np.array([0, 1, 0])), TypeError, "num_segments"),
    (lambda x: rnp.unique(x), TypeError, "size="),
    (lambda x: rnp.nonzero(x), TypeError, "size="),
    (lambda x: rnp.bincount(np.array([0, 1])), TypeError, "length="),
])
def test_bad_indexing_is_named(bad, error, message):
    with pytest.raises(error, match=message):
        rune.jit(bad)(M)


@pytest.mark.parametrize("path", PATHS)
def test_out_of_bounds_indices_raise_like_numpy(path, monkeypatch):
    f = on(path, lambda x, i: x[i], monkeypatch)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        f(M, np.array([0, 7]))
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        f(M, np.array([-4]))
    np.testing.assert_array_equal(f(M, np.array([-1, -3])), M[[-1, -3]])  # from the end
    g = on(path, lambda x, i: rnp.take(x, i, axis=1, mode="clip"), monkeypatch)
    np.testing.assert_array_equal(g(M, np.array([9, -9])), np.take(M, [9, -9], 1, mode="clip"))
    h = on(path, lambda x, i: rnp.take(x, i, axis=1, mode="wrap"), monkeypatch)
    np.testing.assert_array_equal(h(M, np.array([9, -9])), np.take(M, [9, -9], 1, mode="wrap"))
    d = on(path, lambda x, i: rnp.at(x)[i].add(1.0, mode="drop"), monkeypatch)
    np.testing.assert_array_equal(d(M, np.array([7, 1])), M + np.array([[0], [1], [0]]))
    with pytest.raises(IndexError, match="out of bounds"):
        on(path, lambda x, i: rnp.at(x)[i].add(1.0), monkeypatch)(M, np.array([7]))


@pytest.mark.parametrize("path", PATHS)
def test_an_index_out_of_bounds_raises_even_where_nothing_reads_what_it_selects(
        path, monkeypatch):
    """Regression: compiled code checked an index where its element was read, so
    `x[i][:1]` with a bad index in i[1:] returned a result where NumPy raises. Now every
    index array is checked whole (index_check), in a loop step too, before it broadcasts
    to the result's shape, and unsigned ones never count from the end."""
    x = np.arange(5.0)
    bad = np.array([0, 9])
    for g in (lambda x, i: x[i][:1], lambda x, i: rnp.take(x, i)[0],
              lambda x, i: (x[i][:, None] @ np.ones((1, 2)))[:1],  # a lazy product, in part
              lambda x, i: rune.scan(lambda c, _: (c + x[i][0], None), 0.0, length=3)[0]):
        with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
            on(path, g, monkeypatch)(x, bad)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        on(path, lambda x, i: x[i][:1], monkeypatch)(x, np.array([1, 5], np.uint64))
    empty = np.zeros((5, 0))  # x[i] is empty, and so was the index broadcast to its shape
    for g in (lambda x, i: x[i], lambda x, i: rnp.at(x)[i].add(1.0)):
        with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
            on(path, g, monkeypatch)(empty, bad)
    np.testing.assert_array_equal(on(path, lambda x, i: x[i], monkeypatch)(
        x, np.array([4, 0], np.uint8)), x[[4, 0]])


def test_an_index_out_of_bounds_in_one_lane_of_a_vmap_raises_as_numpy():
    """Under vmap an index array is one lane's: a bad index in any lane raises NumPy's
    IndexError, read or not, eager and jitted, through take and under grad; a negative
    one in bounds counts from the end."""
    x = np.arange(5.0)
    bad = np.array([[0, 1], [2, 9]])
    part = lambda i: rnp.asarray(x)[i][:1]  # noqa: E731
    grad = rune.vmap(rune.grad(lambda t, i: rnp.sum(t[i])), in_axes=(None, 0))
    for f, args in ((rune.vmap(part), (bad,)), (rune.jit(rune.vmap(part)), (bad,)),
                    (rune.jit(rune.vmap(lambda i: rnp.take(rnp.asarray(x), i))), (bad,)),
                    (rune.jit(grad), (x, bad))):
        with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
            f(*args)
    good = np.array([[0, 1], [2, -5]])
    np.testing.assert_array_equal(rune.jit(rune.vmap(lambda i: rnp.asarray(x)[i]))(good),
                                  x[good])


def test_a_loop_checks_a_loop_invariant_index_array_once_before_it_runs():
    """The check of an index array the step captures leaves the loop (so the step's read
    has no branch and vectorizes); in reverse mode the backward loop reads the indices
    themselves, not a tape of checked copies."""
    def loop(x0, cols):
        return rnp.sum(rune.scan(lambda x, _: (rnp.tanh(x[cols][:8] * 0.5), None), x0,
                                 length=4)[0])

    cols = np.arange(16) % 8
    for fn in (loop, rune.grad(loop)):
        region = rune.jit(fn).lower(np.ones(8), cols).region
        assert "index_check" in [e.prim.name for e in region.eqns]
        for e in region.eqns:
            if e.prim.name == "scan":
                inner = [q.prim.name for q in e.params["step"].eqns]
                assert {"gather", "scatter"} & set(inner) and "index_check" not in inner, inner
                assert all(v.type.dtype.kind == "f" for v in e.outputs)  # no tape of indices
    rune.check_grads(loop, np.linspace(0.1, 0.8, 8), cols)


def test_maps_that_read_gathers_run_in_vectors_and_are_numpys():
    """A map that reads a gather is a loop LLVM vectorizes only when told its steps are
    independent (emit.Fn.while_loop: no runtime check can compare a gather's addresses
    with the store's). Each case here is one such loop: a step's carry gathered from
    the carry it replaces, the reversal of a gather stored over what it reads from
    (reuse.py's softmax), and a map read whole after a short gather; sizes that leave a
    vector loop's remainder, in float32 and float64."""
    rng = np.random.default_rng(7)
    for n, dtype, tol in ((1003, np.float64, 1e-12), (517, np.float32, 1e-5)):
        close = dict(rtol=tol, atol=tol)
        x0 = rng.standard_normal(n).astype(dtype)
        perm = rng.permutation(n)

        def loop(x0, perm):
            return rune.scan(lambda x, _: (rnp.tanh(x[perm] * 1.5 + x[::-1]), None), x0,
                             length=3)[0]

        want = x0
        for _ in range(3):
            want = np.tanh(want[perm] * dtype(1.5) + want[::-1])
        np.testing.assert_allclose(rune.jit(loop)(x0, perm), want, **close)

        def softmax(x, perm):
            e = rnp.exp(x[perm][::-1] - rnp.max(x))
            return e / rnp.sum(e)

        e = np.exp(x0[perm][::-1] - x0.max())
        np.testing.assert_allclose(rune.jit(softmax)(x0, perm), e / e.sum(), **close)
        ends = rune.jit(lambda x, i: rnp.sin(x[i]) + x[1:4].sum())(x0, perm[:40])
        np.testing.assert_allclose(ends, np.sin(x0[perm[:40]]) + x0[1:4].sum(), **close)


@pytest.mark.parametrize("path", PATHS)
def test_a_constant_table_read_at_a_traced_index(path, monkeypatch):
    """log_B[:, o] of a constant table with o a scan row: through rnp.asarray, and a clear
    error naming that spelling when the table is indexed as a NumPy array."""
    log_b = np.log(np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]]))

    def hmm(obs):
        return rune.scan(lambda a, o: (a * 0.5 + rnp.asarray(log_b)[:, o], None),
                         np.zeros(3), obs)[0]

    want = np.zeros(3)
    for o in [1, 0, 1]:
        want = want * 0.5 + log_b[:, o]
    np.testing.assert_allclose(on(path, hmm, monkeypatch)(np.array([1, 0, 1])), want)
    with pytest.raises(rune.ConcretizationError, match=r"rnp.asarray\(table\)\[i\]"):
        rune.jit(lambda o: log_b[:, o])(np.int64(1))


@pytest.mark.parametrize("path", PATHS)
def test_take_fills_with_fill_value(path, monkeypatch):
    f = on(path, lambda x, i: rnp.take(x, i, mode="fill", fill_value=-1.0), monkeypatch)
    np.testing.assert_array_equal(f(np.arange(5.0), np.array([0, 7, -1])), [0.0, -1.0, 4.0])
    g = on(path, lambda x, i: rnp.at(x)[i].get(mode="fill"), monkeypatch)
    np.testing.assert_array_equal(g(np.arange(5.0), np.array([9, 2])), [np.nan, 2.0])


def test_reverse_mode_saves_a_gathers_operand_not_its_larger_result():
    """A scan step reading x[cols] (nnz wide) keeps x (n wide) per step for the backward
    loop and gathers again there: the tape is steps × n, not steps × nnz."""
    cols = np.arange(40) % 8

    def loop(w, x0):
        return rnp.sum(rune.scan(lambda x, _: (rnp.tanh(rune.ops.segment_sum(
            w * x[cols], cols[::-1], 8)), None), x0, length=5)[0])

    region = rune.make_ir(rune.grad(loop))(np.linspace(0.1, 0.5, 40), np.ones(8))
    tapes = [v.type.shape for e in region.eqns if e.prim.name == "scan" for v in e.outputs]
    assert (5, 8) in tapes and (5, 40) not in tapes, tapes
    rune.check_grads(loop, np.linspace(0.1, 0.5, 40), np.ones(8))


@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds"])
@pytest.mark.parametrize("path", PATHS)
def test_at_clip_counts_a_negative_index_from_the_end_as_jax(mode, path, monkeypatch):
    """Regression: `x.at[-1].get(mode="clip")` (and "promise_in_bounds", and the updates)
    clamped -1 to 0, reading or writing the first element, where JAX counts a negative
    index from the end before clamping (the last element). rnp.take's "clip" is NumPy's
    and JAX's take's, and still clamps -1 to 0."""
    x = np.arange(5.0)
    i = np.array([-1, -7, 9, 2]) if mode == "clip" else np.array([-1, -5, 2])
    j = np.where(i < 0, i + 5, i).clip(0, 4)  # JAX's positions
    get = on(path, lambda x, i: rnp.at(x)[i].get(mode=mode), monkeypatch)
    np.testing.assert_array_equal(get(x, i), x[j])
    for op, ufunc in (("set", None), ("add", np.add), ("max", np.maximum)):
        want = x.copy()
        if ufunc is None:
            want[j] = 10.0 * np.arange(1, len(i) + 1)
        else:
            ufunc.at(want, j, 10.0 * np.arange(1, len(i) + 1))
        got = on(path, lambda x, i, op=op: getattr(rnp.at(x)[i], op)(
            10.0 * np.arange(1, len(i) + 1), mode=mode), monkeypatch)(x, i)
        np.testing.assert_array_equal(got, want, err_msg=op)
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        on(path, lambda m: rnp.at(m)[-1, np.array([-1, 0])].get(mode=mode), monkeypatch)(m),
        m[2, [3, 0]])
    np.testing.assert_array_equal(on(path, lambda x, i: rnp.take(x, i, mode="clip"),
                                     monkeypatch)(x, np.array([-1])), [0.0])  # NumPy's
    lanes = rune.vmap(lambda i: rnp.at(x)[i].get(mode=mode))(np.array([-1, -2, 3]))
    np.testing.assert_array_equal(lanes, [4.0, 3.0, 3.0])
    carry = rune.jit(lambda x: rune.scan(lambda c, _: ((c[0] - 1, c[1] + rnp.at(x)[c[0]].get(
        mode=mode)), None), (np.int64(-1), 0.0), length=3)[0][1])
    np.testing.assert_array_equal(carry(x), 4.0 + 3.0 + 2.0)
    g = rune.grad(lambda x: rnp.sum(rnp.at(x)[np.array([-1, 1])].get(mode=mode) ** 2))(x)
    np.testing.assert_array_equal(g, [0.0, 2.0, 0.0, 0.0, 8.0])


@pytest.mark.parametrize("path", PATHS)
def test_clip_and_wrap_on_an_empty_axis_raise_rather_than_read_outside(path, monkeypatch):
    """Regression: take(mode="clip" or "wrap") from an empty axis read position 0 of an
    array with no elements (compiled: whatever the memory held, 4.7e-310) and a clipped
    update wrote there; NumPy raises. take_along_axis now broadcasts `arr` as NumPy's."""
    for mode in ("clip", "wrap"):
        with pytest.raises(IndexError, match="non-empty take from an empty axes"):
            on(path, lambda x, i, mode=mode: rnp.take(x, i, axis=1, mode=mode), monkeypatch)(
                np.zeros((2, 0)), np.array([0, 3]))
        with pytest.raises(IndexError, match="empty array"):
            on(path, lambda x, i, mode=mode: rnp.at(x)[i].add(1.0, mode=mode), monkeypatch)(
                np.zeros(0), np.array([0]))
        got = on(path, lambda x, i, mode=mode: rnp.take(x, i, axis=1, mode=mode), monkeypatch)(
            np.zeros((2, 0)), np.zeros(0, np.int64))
        assert got.shape == (2, 0)
    np.testing.assert_array_equal(on(path, lambda x, i: rnp.take(x, i, mode="fill"),
                                     monkeypatch)(np.zeros(0), np.array([0, 3])),
                                  [np.nan, np.nan])
    a, idx = np.arange(4.0)[None], np.array([[0, 1], [2, 3], [3, 3]])
    np.testing.assert_array_equal(on(path, lambda a, i: rnp.take_along_axis(a, i, 1),
                                     monkeypatch)(a, idx), np.take_along_axis(a, idx, 1))


@pytest.mark.parametrize("dtype, want", [(np.float32, np.nan), (np.int16, -32768),
                                         (np.uint8, 255), (np.bool_, True)])
def test_fill_mode_defaults_follow_jax(dtype, want):
    x = np.zeros(3, dtype)
    for f in (lambda x: rnp.take(x, np.array([1, 5]), mode="fill"),
              lambda x: rnp.at(x)[np.array([1, 5])].get(mode="fill")):
        for run in (f, rune.jit(f)):
            got = run(x)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, np.array([0, want], dtype))
