"""pure_callback: Python's values in staged and compiled code (now, in jit, in each loop
step, under vmap by each vmap_method), checked against the declared types; removed when
unused, not differentiable but for custom_jvp."""

import traceback

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import PATHS, lanes, on

S = rune.ShapeDtypeStruct
XS = np.array([1.0, 2.0, 3.0])


def recorder():
    """A host function that records each call's arguments and returns x * y + 1."""
    calls = []

    def host(x, y):
        calls.append((x.copy(), y.copy()))
        return x * y + 1.0
    return host, calls


def test_outside_a_trace_it_calls_now_and_converts_the_result():
    out = rune.pure_callback(lambda x, k: [x.sum(), k], S((2,), np.float64), XS, k=1.5)
    assert type(out) is np.ndarray and out.tolist() == [6.0, 1.5]
    assert rune.pure_callback(lambda: 2, S((), np.int64)) == 2


@pytest.mark.parametrize("path", PATHS)
def test_a_scan_step_calls_once_per_step_in_order(path, monkeypatch):
    host, calls = recorder()

    def f(xs):
        def step(c, x):
            y = rune.pure_callback(host, S((), np.float64), c, x)
            return y, y * 2
        return rune.scan(step, np.float64(1.0), xs)

    c, ys = on(path, f, monkeypatch)(XS)
    assert [(float(a), float(b)) for a, b in calls] == [(1.0, 1.0), (2.0, 2.0), (5.0, 3.0)]
    assert c == 16.0 and ys.tolist() == [4.0, 10.0, 32.0]


@pytest.mark.parametrize("path", PATHS)
def test_an_iterate_step_calls_once_per_step_in_order(path, monkeypatch):
    seen = []

    def half(x, a):
        seen.append(float(x))
        return (x + a / x) / 2

    def newton(a):
        return rune.iterate(lambda x: rune.pure_callback(half, S((), np.float64), x, a), a,
                            until=lambda x: rnp.abs(x * x - a) < 1e-12, max_steps=50)

    assert on(path, newton, monkeypatch)(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert seen[:3] == [2.0, 1.5, 1.5 + (2 / 1.5 - 1.5) / 2]
    assert np.isclose(seen[-1], np.sqrt(2.0))


def test_a_step_that_reads_no_carry_calls_once_per_row():
    """Scan fission maps such work over the rows before the loop: sequentially, as it maps
    a loop's steps, not a user's lanes (so vmap_method need not be given)."""
    host, calls = recorder()

    def f(xs):
        def step(c, x):
            y = rune.pure_callback(host, S((), np.float64), x, x)
            return c * 0.5 + rnp.sin(x) + y, None
        return rune.scan(step, np.float64(0.0), xs)[0]

    want = 0.0
    for x in XS:
        want = want * 0.5 + np.sin(x) + x * x + 1
    assert rune.jit(f)(XS) == pytest.approx(want, rel=1e-15)
    assert [float(x) for x, _ in calls] == XS.tolist()


# ------------------------------------------------------------- vmap

# the shapes each method calls the host function with, for x batched [4, 3], y unbatched [3]
CALLED_WITH = {"sequential": [((3,), (3,))] * 4, "expand_dims": [((4, 3), (1, 3))],
               "broadcast_all": [((4, 3), (4, 3))]}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", sorted(CALLED_WITH))
def test_vmap_by_each_method_matches_a_loop_over_lanes(method, path, monkeypatch):
    host, calls = recorder()
    xs, y = np.arange(12.0).reshape(4, 3), np.array([1.0, -1.0, 2.0])

    def f(x):
        return rune.pure_callback(host, S(x.shape, x.dtype), x, y, vmap_method=method)

    got = on(path, rune.vmap(f), monkeypatch)(xs)
    np.testing.assert_array_equal(got, lanes(lambda x: x * y + 1.0, xs))
    assert [(a.shape, b.shape) for a, b in calls] == CALLED_WITH[method]


@pytest.mark.parametrize("method", sorted(CALLED_WITH))
def test_nested_vmap(method):
    host, calls = recorder()

    def f(x, y):
        return rune.pure_callback(host, S((), np.float64), x, y, vmap_method=method)

    xs, ys = np.arange(3.0), np.array([10.0, 20.0])
    got = rune.jit(rune.vmap(rune.vmap(f, in_axes=(0, None)), in_axes=(None, 0)))(xs, ys)
    np.testing.assert_array_equal(got, ys[:, None] * xs[None, :] + 1)
    shapes = {"sequential": [((), ())] * 6, "expand_dims": [((1, 3), (2, 1))],
              "broadcast_all": [((2, 3), (2, 3))]}
    assert [(a.shape, b.shape) for a, b in calls] == shapes[method]


def test_vmap_inside_a_scan_step():
    host, calls = recorder()

    def f(xs):
        def step(c, x):
            return rune.pure_callback(host, S((), np.float64), c, x, vmap_method="sequential"), None
        return rune.scan(step, np.float64(1.0), xs)[0]

    def loop(xs):
        c = np.float64(1.0)
        for x in xs:
            c = c * x + 1.0
        return c

    batch = np.stack([XS, 2 * XS])
    np.testing.assert_array_equal(rune.jit(rune.vmap(f))(batch), lanes(loop, batch))
    assert len(calls) == 6  # the lanes step together: each step calls once per lane


def test_vmap_without_a_method_names_the_methods():
    f = rune.vmap(lambda x: rune.pure_callback(np.sin, x, x))
    with pytest.raises(NotImplementedError, match="vmap_method") as err:
        rune.jit(f)(np.ones((2, 3)))
    for method in ("'sequential'", "'expand_dims'", "'broadcast_all'", "pure_callback(sin)"):
        assert method in str(err.value)
    with pytest.raises(ValueError, match="vmap_method='parallel'"):
        rune.pure_callback(np.sin, XS, XS, vmap_method="parallel")


def test_a_vectorized_method_checks_the_batch_axis_comes_back():
    f = rune.vmap(lambda x: rune.pure_callback(lambda v: v[0], x, x, vmap_method="expand_dims"))
    with pytest.raises(TypeError, match=r"result is float64\[3\], declared float64\[4,3\] "
                                        r"\(under vmap with vmap_method='expand_dims'"):
        rune.jit(f)(np.ones((4, 3)))


# ------------------------------------------------------------- results and their checks

def test_results_are_a_pytree_of_the_declared_structure():
    declared = (S((3,), np.float64), {"n": S((), np.int64), "big": S((3,), np.bool_)})

    def host(x):
        return x * 2, {"n": x.size, "big": x > 1.5}

    f = rune.jit(lambda x: rune.pure_callback(host, declared, x))
    doubled, info = f(XS)
    assert doubled.tolist() == [2.0, 4.0, 6.0]
    assert info["n"] == 3 and info["n"].dtype == np.int64
    assert info["big"].tolist() == [False, True, True]
    both = rune.jit(rune.vmap(lambda x: rune.pure_callback(host, (S((), np.float64), {
        "n": S((), np.int64), "big": S((), np.bool_)}), x, vmap_method="sequential")))(XS)
    assert both[0].tolist() == [2.0, 4.0, 6.0] and both[1]["n"].tolist() == [1, 1, 1]


@pytest.mark.parametrize("jitted", [False, True])
def test_a_result_of_another_shape_or_dtype_raises_naming_both(jitted):
    declared = (S((3,), np.float64), S((3,), np.float64))

    def call(host):
        f = lambda x: rune.pure_callback(host, declared, x)
        return (rune.jit(f) if jitted else f)(XS)

    with pytest.raises(TypeError, match=r"pure_callback\(wrong_dtype\): result \[1\] is "
                                        r"float32\[3\], declared float64\[3\]"):
        def wrong_dtype(x):
            return x, x.astype(np.float32)
        call(wrong_dtype)
    with pytest.raises(TypeError, match=r"pure_callback\(wrong_shape\): result \[0\] is "
                                        r"float64\[2\], declared float64\[3\]"):
        def wrong_shape(x):
            return x[:2], x
        call(wrong_shape)
    with pytest.raises(TypeError, match=r"result has structure PyTreeDef\(\[\*, \*\]\), "
                                        r"declared PyTreeDef\(\(\*, \*\)\)"):
        call(lambda x: [x, x])
    with pytest.raises(TypeError, match=r"result is float64\[\], declared float32\[\]"):
        rune.pure_callback(lambda: 1.0, S((), np.float32))  # no cast, as in JAX


def test_declared_results_must_have_shape_and_dtype():
    with pytest.raises(TypeError, match=r"result_shape_dtypes\[0\] is 3: declare each"):
        rune.pure_callback(lambda: 1.0, (3,))


def test_an_exception_leaves_the_compiled_call_as_itself():
    class Refused(Exception):
        pass

    def refuse(v):
        raise Refused(f"no to {v.sum()}")

    f = rune.jit(lambda x: rune.pure_callback(refuse, x, x) * 2)
    with pytest.raises(Refused, match="no to 6.0") as err:
        f(XS)
    assert "refuse" in [frame.name for frame in traceback.extract_tb(err.value.__traceback__)]
    np.testing.assert_array_equal(rune.jit(lambda x: x + 1)(XS), XS + 1)  # the next call


def test_a_call_whose_results_nothing_reads_is_removed():
    host, calls = recorder()
    f = rune.jit(lambda x: (rune.pure_callback(host, x, x, x), x + 1)[1])
    np.testing.assert_array_equal(f(XS), XS + 1)
    assert calls == []
    assert "pure_callback" in str(rune.make_ir(f)(XS))  # traced, then dropped


# ------------------------------------------------------------- derivatives

def test_grad_through_a_callback_says_to_use_custom_jvp():
    f = lambda x: rnp.sum(rune.pure_callback(np.sin, x, x))
    for run in (rune.grad(f), rune.jit(rune.grad(f)), rune.jacfwd(f)):
        with pytest.raises(NotImplementedError, match="pure_callback") as err:
            run(XS)
        assert "not differentiable" in str(err.value) and "rune.custom_jvp" in str(err.value)


def test_a_callback_of_arguments_not_differentiated_is_fine():
    f = lambda x, y: x * rune.pure_callback(np.cos, y, y)
    assert rune.jit(rune.grad(f))(2.0, 0.5) == pytest.approx(np.cos(0.5), rel=1e-15)


@rune.custom_jvp
def host_sin(x):
    return rune.pure_callback(np.sin, S(x.shape, x.dtype), x, vmap_method="expand_dims")


@host_sin.defjvp
def _host_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return host_sin(x), rnp.cos(x) * t


def test_custom_jvp_gives_a_callback_derivatives():
    x = np.array([0.1, 0.7, 2.0])
    g = rune.jit(rune.grad(lambda x: rnp.sum(host_sin(x) ** 2)))(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-15)
    per_lane = rune.jit(rune.vmap(rune.grad(lambda v: host_sin(v) * v)))(x)
    np.testing.assert_allclose(per_lane, np.cos(x) * x + np.sin(x), rtol=1e-15)
