"""JAX's loop spellings and transformation utilities (issue 15): fori_loop, while_loop,
switch, map, associative_scan, scan(unroll=), linearize, linear_transpose, eval_shape,
jit(static_argnames=), vmap(axis_size=), tree functions, checkpoint and its policies."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import checkpoint_policies as cp
from loop_helpers import PATHS, on



@pytest.mark.parametrize("path", PATHS)
def test_fori_loop_static_and_traced_bounds(path, monkeypatch):
    def power(x, n):
        return rune.fori_loop(0, n, lambda i, c: c * x + i * 0.0, 1.0)

    f = on(path, lambda x: power(x, 5), monkeypatch)
    np.testing.assert_allclose(f(np.float64(1.5)), 1.5 ** 5)
    np.testing.assert_allclose(on(path, rune.grad(lambda x: power(x, 5)), monkeypatch)(
        np.float64(1.5)), 5 * 1.5 ** 4)
    traced = on(path, lambda x, n: power(x, n), monkeypatch)
    np.testing.assert_allclose(traced(np.float64(1.5), np.int64(4)), 1.5 ** 4)
    assert float(rune.fori_loop(3, 1, lambda i, c: c + 1.0, 0.0)) == 0.0  # empty range


@pytest.mark.parametrize("path", PATHS)
def test_while_loop_per_lane_and_reverse_mode_with_max_steps(path, monkeypatch):
    def doubling(a):
        return rune.while_loop(lambda n: n < 10.0, lambda n: n * a, 1.0, max_steps=50)

    np.testing.assert_allclose(on(path, doubling, monkeypatch)(np.float64(2.0)), 16.0)
    np.testing.assert_allclose(on(path, rune.grad(doubling), monkeypatch)(np.float64(2.0)),
                               4 * 2.0 ** 3)  # a**4 after four steps
    lanes = on(path, rune.vmap(doubling), monkeypatch)(np.array([2.0, 3.0, 11.0]))
    np.testing.assert_allclose(lanes, [16.0, 27.0, 11.0])


def _growth(max_steps):
    """A loop of data-dependent length over a vector carry, and a loss of its result."""
    def loss(x):
        def body(c):
            v, n = c
            return v * 1.1 + 0.1 * rnp.sin(v), n + 1

        v, _ = rune.while_loop(lambda c: rnp.sum(c[0]) < 50.0, body, (x, 0),
                               max_steps=max_steps)
        return rnp.sum(v * v)

    return loss


@pytest.mark.parametrize("path", PATHS)
def test_while_loop_without_max_steps_is_reverse_differentiable(path, monkeypatch):
    """No step limit: the tapes grow with the steps taken; the derivatives equal those of
    the same loop with a limit, in every composition that keeps a tape whole per loop."""
    x, xs = np.array([0.7, 0.2]), np.array([[0.7, 0.2], [0.3, 0.1], [2.0, 9.0]])
    _as_bounded(_growth, path, monkeypatch, x, [
        (rune.grad, x), (lambda f: rune.vmap(rune.grad(f)), xs),
        (lambda f: rune.grad(rune.grad(lambda a: f(a * x))), np.float64(1.0)),
        (lambda f: rune.jacfwd(rune.grad(f)), x)])


def _as_bounded(make, path, monkeypatch, x, cases):
    """Each transformation of `make(None)` (no step limit) on `path` gives what the same
    of `make(500)` gives jitted; check_grads holds at x."""
    free, bounded = make(None), make(500)
    for t, arg in cases:
        want = rune.jit(t(bounded))(arg)
        np.testing.assert_allclose(on(path, t(free), monkeypatch)(arg), want, rtol=1e-13)
    rune.check_grads(free, x, modes=("rev",))


@pytest.mark.parametrize("path", PATHS)
def test_while_loop_without_max_steps_keeps_a_long_tape(path, monkeypatch):
    steps = 100_000 if path == "jit" else 3_000
    f = on(path, rune.grad(lambda a: rune.while_loop(
        lambda c: c[1] < steps, lambda c: (c[0] + a * a, c[1] + 1), (0.0, 0))[0]), monkeypatch)
    assert float(f(np.float64(3.0))) == 6.0 * steps


def _nested(outer, max_steps):
    """A loop of data-dependent length inside the step of an outer loop."""
    def inner(c):
        return rune.while_loop(lambda v: v < 10.0, lambda v: v * 1.5 + rnp.sin(v) * c, c,
                               max_steps=max_steps)

    def loss(c0):
        c0 = rnp.sum(c0)
        if outer == "scan":
            return rune.scan(lambda c, x: (c + inner(c * x), None), c0, np.array([1.0, 2.0]))[0]
        if outer == "remat scan":
            return rune.scan(rune.remat(lambda c, x: (c + inner(c * x), None)), c0,
                             np.array([1.0, 2.0]))[0]
        if outer == "fori_loop":  # traced bounds: a while_loop of while_loops
            return rune.fori_loop(0, rnp.int64(3), lambda i, c: c + inner(c * 0.2 + 0.1) * 0.01, c0)
        return rune.iterate(lambda s: (s[0] + inner(s[0] * 0.3 + 0.1) * 0.01, s[1] + 1), (c0, 0),
                            until=lambda s: s[1] >= 3, max_steps=10)[0]

    return loss


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("outer", ["scan", "remat scan", "fori_loop", "iterate"])
@pytest.mark.slow
def test_while_loop_without_max_steps_inside_a_loop_step_is_recomputed(outer, path, monkeypatch):
    """Reverse mode runs the inner loop again in each backward step of the outer one
    (its tape is never stacked); derivatives equal the bounded loop's, which stacks."""
    x, xs = np.float64(0.5), np.array([0.3, 0.5, 0.7])
    _as_bounded(lambda m: _nested(outer, m), path, monkeypatch, x, [
        (rune.grad, x), (lambda f: rune.vmap(rune.grad(f)), xs),
        (lambda f: rune.grad(rune.grad(f)), x)])


@pytest.mark.parametrize("path", PATHS)
def test_while_loop_without_max_steps_under_jacrev_and_hessian(path, monkeypatch):
    """The backward loops of jacrev (one per cotangent) share the forward loop's tape."""
    def growth(max_steps):
        def f(x):
            return rune.while_loop(lambda c: rnp.sum(c) < 50.0,
                                   lambda c: c * 1.1 + 0.1 * rnp.sin(c), x, max_steps=max_steps)
        return f

    def nested(max_steps):  # a vector result of a loop inside a scan step
        return lambda v: v * _nested("scan", max_steps)(v)

    x = np.array([0.7, 0.2])
    for t, make in [(rune.jacrev, growth), (rune.jacrev, nested),
                    (lambda f: rune.hessian(lambda a: rnp.sum(f(a) ** 2)), growth)]:
        want = rune.jit(t(make(500)))(x)
        np.testing.assert_allclose(on(path, t(make(None)), monkeypatch)(x), want, rtol=1e-13)
    t = rune.jvp(lambda a: rune.while_loop(lambda n: n < 10.0, lambda n: n * a, 1.0),
                 (np.float64(2.0),), (np.float64(1.0),))[1]
    assert float(t) == 32.0  # forward mode needs no tape


def test_while_loop_without_max_steps_has_no_limit():
    out = rune.jit(lambda x: rune.while_loop(lambda c: c[0] < 100_000, lambda c: (
        c[0] + 1, c[1] + 1.0), (0, x)))(np.float64(0.0))
    assert float(out[1]) == 100_000.0


@pytest.mark.parametrize("path", PATHS)
def test_switch_clamps_and_selects_per_lane(path, monkeypatch):
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    f = on(path, lambda i, x: rune.switch(i, branches, x), monkeypatch)
    assert [float(f(np.int64(i), np.float64(2.0))) for i in (-3, 0, 1, 2, 9)] == [
        3.0, 3.0, 20.0, -2.0, -2.0]
    v = on(path, rune.vmap(lambda i, x: rune.switch(i, branches, x)), monkeypatch)
    np.testing.assert_array_equal(v(np.array([0, 1, 2, 7]), np.ones(4)), [2.0, 10.0, -1.0, -1.0])
    g = on(path, rune.grad(lambda x, i: rune.switch(i, branches, x)), monkeypatch)
    assert float(g(np.float64(2.0), np.int64(1))) == 10.0


@pytest.mark.parametrize("path", PATHS)
def test_map_and_associative_scan(path, monkeypatch):
    xs = np.arange(1.0, 6.0)
    np.testing.assert_array_equal(on(path, lambda v: rune.map(lambda x: x * x, v),
                                     monkeypatch)(xs), xs ** 2)
    cum = on(path, lambda v: rune.associative_scan(lambda a, b: a * b, v), monkeypatch)
    np.testing.assert_allclose(cum(xs), np.cumprod(xs))
    rev = on(path, lambda v: rune.associative_scan(jnp_add, v, reverse=True), monkeypatch)
    np.testing.assert_allclose(rev(xs), np.cumsum(xs[::-1])[::-1])
    m = np.arange(6.0).reshape(2, 3)
    ax1 = on(path, lambda v: rune.associative_scan(jnp_add, v, axis=1), monkeypatch)
    np.testing.assert_allclose(ax1(m), np.cumsum(m, axis=1))
    pairs = rune.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (xs, xs))
    np.testing.assert_allclose(pairs[1], np.cumprod(xs))
    rune.check_grads(lambda v: rune.associative_scan(lambda a, b: a * b, v), xs)


def jnp_add(a, b):
    return a + b


def test_associative_scan_leaves_of_different_sizes_are_named():
    with pytest.raises(ValueError, match=r"one size along axis 0; their shapes are "
                                         r"\[\(3,\), \(4,\)\]"):
        rune.associative_scan(jnp_add, (np.ones(3), np.ones(4)))


@pytest.mark.parametrize("bad, message", [
    (lambda: rune.switch(1.5, [lambda: 1.0]), "switch: the index must be an integer"),
    (lambda: rune.fori_loop(0.0, 3, lambda i, c: c, 0.0), "fori_loop: lower must be an "
                                                          "integer scalar, got float64"),
    (lambda: rune.fori_loop(0, np.float32(3), lambda i, c: c, 0.0), "upper must be"),
    (lambda: rune.scan(lambda c, x: (c, x), 0.0, np.ones(2), unroll=1.5), "unroll must be"),
])
def test_bad_loop_arguments_are_named(bad, message):
    with pytest.raises(TypeError, match=message):
        bad()


def test_scan_accepts_unroll():
    c, _ = rune.scan(lambda c, x: (c + x, None), 0.0, np.arange(4.0), unroll=2)
    assert float(c) == 6.0


# ------------------------------------------------------------- transformation utilities


def test_linearize_and_linear_transpose():
    y, f_jvp = rune.linearize(lambda x: rnp.sin(x) * x, np.array([0.5, 1.0]))
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(y, np.sin(x) * x)
    np.testing.assert_allclose(f_jvp(np.ones(2)), np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(f_jvp(2 * np.ones(2)), 2 * (np.cos(x) * x + np.sin(x)))
    m = np.arange(6.0).reshape(2, 3)
    f_t = rune.linear_transpose(lambda v: m @ v, np.zeros(3))
    np.testing.assert_allclose(f_t(np.array([1.0, 2.0]))[0], m.T @ [1.0, 2.0])


def test_eval_shape_traces_without_running():
    calls = []

    def f(x, y):
        calls.append(1)
        return {"s": (x @ y).sum(axis=0), "n": x.shape[0]}

    out = rune.eval_shape(f, rune.ShapeDtypeStruct((5, 3), np.float32), np.ones((3, 2), np.float32))
    assert out["s"] == rune.ShapeDtypeStruct((2,), np.float32)
    assert out["n"] == rune.ShapeDtypeStruct((), np.int64)
    assert calls == [1]


def test_static_argnames_and_argnums_name_each_other():
    traces = []

    def f(x, n, *, scale=1.0):
        traces.append(n)
        return x ** n * scale

    g = rune.jit(f, static_argnames=("n", "scale"))
    x = np.arange(3.0)
    np.testing.assert_array_equal(g(x, 2), x ** 2)
    np.testing.assert_array_equal(g(x, n=2), x ** 2)
    np.testing.assert_array_equal(g(x, 3, scale=2.0), 2 * x ** 3)
    assert traces == [2, 2, 3]  # by position and by name: two signatures, as in JAX
    with pytest.raises(TypeError, match="hashable"):
        rune.jit(f, static_argnums=1)(x, [2])


def test_vmap_axis_size_maps_a_function_of_no_mapped_input():
    np.testing.assert_array_equal(rune.vmap(lambda x: x * 2.0, in_axes=None, axis_size=3)(
        np.float64(1.0)), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="axis_size has size 2"):
        rune.vmap(lambda x: x, axis_size=2)(np.ones(3))
    with pytest.raises(ValueError, match="give axis_size="):
        rune.vmap(lambda x: x, in_axes=None)(np.ones(3))


def test_tree_functions_in_jax_spellings():
    t = {"a": (1, 2), "b": [3]}
    leaves, td = rune.tree.tree_flatten(t)
    assert leaves == [1, 2, 3] and rune.tree.tree_unflatten(td, leaves) == t
    assert rune.tree.tree_structure(t) == td and rune.tree.tree_leaves(t) == leaves
    assert rune.tree.tree_reduce(lambda a, b: a + b, t) == 6
    paths = rune.tree.tree_map_with_path(lambda p, x: rune.tree_util.keystr(p), t)
    assert paths == {"a": ("['a'][0]", "['a'][1]"), "b": ["['b'][0]"]}
    outer = rune.tree.tree_structure([0, 0])
    inner = rune.tree.tree_structure({"x": 0, "y": 0})
    swapped = rune.tree.tree_transpose(outer, inner, [{"x": 1, "y": 2}, {"x": 3, "y": 4}])
    assert swapped == {"x": [1, 3], "y": [2, 4]}


# ------------------------------------------------------------- checkpoint and its policies

W = np.random.default_rng(0).standard_normal((8, 8)) / 3


def _net(x):
    h = rune.checkpoint_name(rnp.tanh(W @ x), "hidden")
    return rnp.sum(rnp.sin(W @ h))


@pytest.mark.parametrize("policy", [None, cp.nothing_saveable, cp.everything_saveable,
                                    cp.dots_saveable, cp.dots_with_no_batch_dims_saveable,
                                    cp.save_only_these_names("hidden"),
                                    cp.save_any_names_but_these("hidden")])
@pytest.mark.parametrize("path", PATHS)
def test_policies_change_what_is_kept_not_the_gradient(policy, path, monkeypatch):
    x = np.linspace(-1.0, 1.0, 8)
    want = rune.grad(_net)(x)
    g = on(path, rune.grad(rune.checkpoint(_net, policy=policy)), monkeypatch)
    np.testing.assert_allclose(g(x), want, rtol=1e-12)


def _kept(policy) -> int:
    x = np.linspace(-1.0, 1.0, 8)
    return sum(r.type.nbytes for r in rune.saved_residuals(rune.checkpoint(_net, policy=policy),
                                                           x))


def test_what_each_policy_keeps():
    nothing, names, dots, everything = (_kept(p) for p in (
        cp.nothing_saveable, cp.save_only_these_names("hidden"), cp.dots_saveable,
        cp.everything_saveable))
    assert nothing < names < everything and nothing < dots <= everything


def test_print_saved_residuals_names_types_and_lines(capsys):
    rune.print_saved_residuals(lambda x: rnp.sum(rnp.sin(x) * x), np.ones(3))
    lines = capsys.readouterr().out.splitlines()
    assert "float64[3] from an argument" in lines
    assert any(line.startswith("float64[3] from cos at ") and "jax_api/test_loop_spellings.py" in line
               for line in lines)


def test_checkpoint_with_static_argnums():
    f = rune.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert float(rune.grad(f)(np.float64(2.0), 3)) == 12.0
