"""The transformations: grad, value_and_grad, vjp, jvp, vmap, jacobians, stop_gradient,
cond, make_ir, check_grads, and values captured from enclosing traces."""

from collections import namedtuple

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import central_difference
from rune_jit import tree

X3 = np.array([0.5, -1.25, 2.0])
M23 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def assert_tree_close(out, expected, rtol=1e-10, atol=1e-12):
    """Same structure; every leaf a writable ndarray of the expected dtype and values."""
    out_leaves, out_def = tree.flatten(out)
    exp_leaves, exp_def = tree.flatten(expected)
    assert out_def == exp_def, (out_def, exp_def)
    for o, e in zip(out_leaves, exp_leaves):
        e = np.asarray(e)
        assert isinstance(o, np.ndarray) and o.flags.writeable, type(o)
        assert o.dtype == e.dtype and o.shape == e.shape, (o.dtype, o.shape, e.dtype, e.shape)
        np.testing.assert_allclose(o, e, rtol=rtol, atol=atol)


# ------------------------------------------------------------- grad

GRADS = {
    # name: (f, x, analytic gradient)
    "sin*x": (lambda x: rnp.sum(rnp.sin(x) * x), X3, np.cos(X3) * X3 + np.sin(X3)),
    "exp/log": (lambda x: rnp.sum(rnp.exp(x) + rnp.log(x * x)), X3, np.exp(X3) + 2 / X3),
    "tanh": (lambda x: rnp.sum(rnp.tanh(x)), X3, 1 - np.tanh(X3) ** 2),
    "sqrt": (lambda x: rnp.sum(rnp.sqrt(x * x + 1)), X3, X3 / np.sqrt(X3 ** 2 + 1)),
    "divide": (lambda x: rnp.sum(1.0 / x), X3, -1 / X3 ** 2),
    "power": (lambda x: rnp.sum(x ** 3), X3, 3 * X3 ** 2),
    "abs": (lambda x: rnp.sum(rnp.abs(x)), X3, np.sign(X3)),
    "maximum": (lambda x: rnp.sum(rnp.maximum(x, 0.0)), X3, (X3 > 0).astype(float)),
    "where": (lambda x: rnp.sum(rnp.where(x > 0, x * x, -x)), X3,
              np.where(X3 > 0, 2 * X3, -1.0)),
    "prod": (lambda x: rnp.prod(x), X3, np.prod(X3) / X3),
    "mean": (lambda x: rnp.mean(x ** 2), X3, 2 * X3 / 3),
    "max": (lambda x: rnp.max(x), X3, np.array([0.0, 0.0, 1.0])),
    "matmul": (lambda m: rnp.sum(m @ m.T), M23, 2 * np.ones((2, 2)) @ M23),
    "index": (lambda x: x[1] * x[-1], X3, np.array([0.0, X3[2], X3[1]])),
    "slice": (lambda x: rnp.sum(x[::-2] * 2.0), X3, np.array([2.0, 0.0, 2.0])),
    "concatenate": (lambda x: rnp.sum(rnp.concatenate([x, x[:1]]) ** 2), X3,
                    2 * X3 + np.array([2 * X3[0], 0, 0])),
    "broadcast": (lambda m: rnp.sum(m * X3), M23, np.broadcast_to(X3, (2, 3))),
    "reduce axis": (lambda m: rnp.sum(rnp.sum(m, axis=0) ** 2), M23,
                    np.broadcast_to(2 * M23.sum(0), (2, 3))),
    "arctan2": (lambda x: rnp.sum(rnp.arctan2(x, 2.0)), X3, 2 / (X3 ** 2 + 4)),
    "float32": (lambda x: rnp.sum(x * x), X3.astype(np.float32), 2 * X3.astype(np.float32)),
    "unused input": (lambda x: 3.0 + 0 * rnp.sum(rnp.zeros(2)), X3, np.zeros(3)),
}


@pytest.mark.parametrize("name", GRADS)
def test_grad_against_analytic(backend, name):
    f, x, expected = GRADS[name]
    assert_tree_close(backend(rune.grad(f))(x), np.asarray(expected, x.dtype), rtol=1e-6)


def test_value_and_grad(backend):
    f = lambda x: rnp.sum(rnp.sin(x) * x)  # noqa: E731
    value, g = backend(rune.value_and_grad(f))(X3)
    assert_tree_close(value, np.sum(np.sin(X3) * X3))
    assert_tree_close(g, np.cos(X3) * X3 + np.sin(X3))


@pytest.mark.parametrize("argnums, expected", [
    (0, 2.0 * 3.0), (1, 1.0 * 3.0), (-1, 1.0 * 2.0), ((0, 2), (6.0, 2.0)),
    ((2, 0), (2.0, 6.0)), ((1,), (3.0,))])
def test_grad_argnums(backend, argnums, expected):
    f = lambda a, b, c: a * b * c  # noqa: E731
    g = backend(rune.grad(f, argnums=argnums))(1.0, 2.0, 3.0)
    assert_tree_close(g, tree.tree_map(np.float64, expected))


def test_grad_has_aux(backend):
    def f(x, k):
        y = rnp.sum(x * x) * k
        return y, {"y": y, "k": k, "n": rnp.argmax(x)}

    g, aux = backend(rune.grad(f, has_aux=True))(X3, 2.0)
    assert_tree_close(g, 4 * X3)
    assert_tree_close(aux, {"y": 2 * np.sum(X3 ** 2), "k": np.float64(2.0), "n": np.int64(2)})
    (value, aux2), g2 = backend(rune.value_and_grad(f, argnums=(0, 1), has_aux=True))(X3, 2.0)
    assert_tree_close(value, 2 * np.sum(X3 ** 2))
    assert_tree_close(g2, (4 * X3, np.sum(X3 ** 2)))
    assert_tree_close(aux2, aux)


def test_grad_of_pytree_argument_and_integer_side_argument(backend):
    def loss(params, n):
        return rnp.sum((params["w"] * params["b"][0]) ** n) + params["b"][1]

    params = {"w": X3, "b": (2.0, np.float32(1.5))}
    g = backend(rune.grad(loss))(params, 2)
    assert_tree_close(g, {"w": 8 * X3, "b": (np.float64(2 * 2.0 * np.sum(X3 ** 2)),
                                            np.float32(1.0))})


def test_grad_passes_keyword_arguments(backend):
    g = backend(rune.grad(lambda x, scale=1.0: x * scale))(3.0, scale=4.0)
    assert_tree_close(g, np.float64(4.0))


def test_grad_of_grad(backend):
    f = lambda x: x ** 4 + rnp.sin(x)  # noqa: E731
    for x in (0.5, -2.0):
        assert_tree_close(backend(rune.grad(rune.grad(f)))(x), np.float64(12 * x ** 2 - np.sin(x)))
        assert_tree_close(backend(rune.grad(rune.grad(rune.grad(f))))(x),
                          np.float64(24 * x - np.cos(x)))


# ------------------------------------------------------------- vjp and jvp


CTS = [np.ones(3), np.array([1.0, 0.0, -2.0]), np.zeros(3), np.ones(3)]
SIN_JAC = np.diag(np.cos(X3) * X3 + np.sin(X3))


def test_vjp_pullback_called_many_times(backend):
    out, pullback = rune.vjp(lambda x: rnp.sin(x) * x, X3)
    assert_tree_close(out, np.sin(X3) * X3)
    for ct in CTS:
        assert_tree_close(backend(pullback)(ct), (ct @ SIN_JAC,))


def test_vjp_pullback_called_many_times_inside_a_function(backend):
    def f(x, cts):
        out, pullback = rune.vjp(lambda x: rnp.sin(x) * x, x)
        return out, [pullback(ct)[0] for ct in cts]

    out, grads = backend(f)(X3, CTS)
    assert_tree_close((out, grads), (np.sin(X3) * X3, [ct @ SIN_JAC for ct in CTS]))


def test_vjp_of_pytrees(backend):
    Pair = namedtuple("Pair", "a b")

    def f(d, pair):
        return {"u": d["x"] * pair.a, "v": [rnp.sum(d["x"]) * pair.b, pair.a * 2.0]}

    def out_and_grads(d, pair, ct):
        out, pullback = rune.vjp(f, d, pair)
        return out, pullback(ct)

    d, pair = {"x": X3}, Pair(np.float64(3.0), np.float32(2.0))
    ct = {"u": np.array([1.0, 2.0, 3.0]), "v": [np.float64(1.0), np.float64(0.5)]}
    out, (gd, gpair) = backend(out_and_grads)(d, pair, ct)
    assert_tree_close(out, f(d, pair))
    assert_tree_close(gd, {"x": ct["u"] * 3.0 + 2.0})
    assert_tree_close(gpair, Pair(np.float64(ct["u"] @ X3 + 1.0), np.float32(np.sum(X3))))


def test_vjp_has_aux_and_integer_input(backend):
    def f(x, n):
        return x * n, rnp.sum(x)

    def run(x, n):
        out, pullback, aux = rune.vjp(f, x, n, has_aux=True)
        return out, aux, pullback(np.ones(3))

    out, aux, (gx, gn) = backend(run)(X3, np.int64(3))
    assert_tree_close(out, 3 * X3)
    assert_tree_close(aux, np.sum(X3))
    assert_tree_close(gx, np.full(3, 3.0))
    assert_tree_close(gn, np.int64(0))  # integer inputs get a zero of their own dtype


@pytest.mark.parametrize("name", ["sin*x", "exp/log", "prod", "matmul", "where", "slice"])
def test_jvp_against_grad(backend, name):
    f, x, _ = GRADS[name]
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    out, tangent = backend(lambda x, v: rune.jvp(f, (x,), (v,)))(x, v)
    assert_tree_close(out, np.asarray(f(x)))
    assert_tree_close(tangent, np.sum(rune.grad(f)(x) * v), rtol=1e-10)


def test_jvp_of_pytrees_and_python_numbers(backend):
    def f(p, s):
        return {"y": p["w"] * s, "z": (rnp.sum(p["w"]), s * s)}

    primals = ({"w": X3}, 2.0)
    tangents = ({"w": np.ones(3)}, 0.5)
    out, t = backend(lambda p, t: rune.jvp(f, p, t))(primals, tangents)
    assert_tree_close(out, {"y": 2 * X3, "z": (np.sum(X3), np.float64(4.0))})
    assert_tree_close(t, {"y": 2.0 + 0.5 * X3, "z": (np.float64(3.0), np.float64(2.0))})


def test_jvp_with_integer_input_has_zero_tangent(backend):
    out, t = backend(lambda: rune.jvp(lambda x, n: x * n, (X3, np.int32(2)),
                                      (np.ones(3), np.int32(5))))()
    assert_tree_close(out, 2 * X3)
    assert_tree_close(t, np.full(3, 2.0))


# ------------------------------------------------------------- vmap


def test_vmap_in_axes_int_negative_and_none(backend):
    m = np.arange(12.0).reshape(3, 4)
    f = lambda a, b: a * b  # noqa: E731
    assert_tree_close(backend(rune.vmap(f))(m, m), m * m)
    assert_tree_close(backend(rune.vmap(f, in_axes=1))(m, m), (m * m).T)
    assert_tree_close(backend(rune.vmap(f, in_axes=-1))(m, m), (m * m).T)
    assert_tree_close(backend(rune.vmap(f, in_axes=(0, None)))(m[:, 0], m), m[:, 0, None, None]
                      * m)
    assert_tree_close(backend(rune.vmap(f, in_axes=[None, 1]))(m[:, 0], m),
                      (m[:, 0] * m.T))


def per_example(d, m, i, axes):
    """Example i of (d, m) where axes says which leaves are mapped along which axis."""
    leaves, treedef = tree.flatten((d, m))
    flat_axes, _ = tree.flatten(axes, is_leaf=lambda a: a is None)
    picked = [x if a is None else np.take(x, i, axis=a) for x, a in zip(leaves, flat_axes)]
    return tree.unflatten(treedef, picked)


PREFIXES = {
    "tuple prefix on dict argument": (
        ({"a": 0, "b": None, "c": None}, 1),
        ({"a": 0, "b": None, "c": (None, None)}, 1)),
    "leaf covers a subtree": ((0, None), ({"a": 0, "b": 0, "c": (0, 0)}, None)),
    "nested prefix": (({"a": 0, "b": None, "c": (None, 1)}, None),
                      ({"a": 0, "b": None, "c": (None, 1)}, None)),
    "list prefix": ([None, 1], ({"a": None, "b": None, "c": (None, None)}, 1)),
}


@pytest.mark.parametrize("name", PREFIXES)
def test_vmap_pytree_prefixes(backend, name):
    in_axes, full_axes = PREFIXES[name]
    rng = np.random.default_rng(0)
    d = {"a": rng.standard_normal(4), "b": rng.standard_normal(4),
         "c": (rng.standard_normal(4), rng.standard_normal((4, 4)))}
    m = rng.standard_normal((3, 4))

    def f(d, m):
        return {"y": d["a"] * rnp.sum(d["b"]) + d["c"][0], "z": rnp.sum(d["c"][1]) * m}

    expected = [f(*per_example(d, m, i, full_axes)) for i in range(4)]
    expected = tree.tree_map(lambda *xs: np.stack(xs), *expected)
    assert_tree_close(backend(rune.vmap(f, in_axes=in_axes))(d, m), expected)


def test_vmap_dict_prefix_for_dict_argument(backend):
    d = {"x": np.arange(6.0).reshape(2, 3), "y": np.arange(2.0)}
    f = lambda d: d["x"] * d["y"]  # noqa: E731
    out = backend(rune.vmap(f, in_axes=({"x": 1, "y": None},)))(d)
    assert_tree_close(out, np.stack([d["x"][:, i] * d["y"] for i in range(3)]))


def test_vmap_out_axes(backend):
    m = np.arange(6.0).reshape(2, 3)
    f = lambda x, s: (x * 2.0, {"s": s * 1.0, "t": rnp.sum(x)})  # noqa: E731
    out = backend(rune.vmap(f, in_axes=(0, None), out_axes=(1, {"s": None, "t": 0})))(m, 3.0)
    assert_tree_close(out, ((2 * m).T, {"s": np.float64(3.0), "t": m.sum(1)}))
    out = backend(rune.vmap(lambda x: x[:, None] * x, out_axes=-1))(m)
    assert_tree_close(out, np.stack([r[:, None] * r for r in m], axis=-1))


def test_vmap_unmapped_output_is_broadcast(backend):
    out = backend(rune.vmap(lambda x, y: (y, x * 0.0 + 1.0), in_axes=(0, None)))(X3, M23)
    assert_tree_close(out, (np.broadcast_to(M23, (3, 2, 3)), np.ones(3)))


def test_vmap_of_vmap_and_nested_axes(backend):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3, 2)), rng.standard_normal((2, 3))
    f = rune.vmap(rune.vmap(lambda u, v: rnp.dot(u, v), in_axes=(0, 1)), in_axes=(0, None))
    expected = np.array([[a[i, j] @ b[:, j] for j in range(3)] for i in range(4)])
    assert_tree_close(backend(f)(a, b), expected)


def test_vmap_with_python_scalar_and_integer_arguments(backend):
    out = backend(rune.vmap(lambda x, n, s: x[n] * s, in_axes=(0, 0, None)))(
        M23, np.array([2, -3]), 2.0)
    assert_tree_close(out, np.array([M23[0, 2], M23[1, 0]]) * 2.0)


# ------------------------------------------------------------- jacobians

JACOBIANS = {
    "elementwise": (lambda x: rnp.sin(x) * x, X3),
    "to scalar": (lambda x: rnp.sum(x ** 3), X3),
    "matrix in": (lambda m: m @ X3, M23),
    "matrix out": (lambda x: rnp.outer(x, x[:2]), X3),
    "solve": (lambda x: rnp.linalg.solve(np.eye(3) * 3.0 + np.outer(x, x), x), X3),
}


@pytest.mark.parametrize("name", JACOBIANS)
def test_jacfwd_jacrev_against_finite_differences(backend, name):
    f, x = JACOBIANS[name]
    expected = central_difference(f, x)
    assert_tree_close(backend(rune.jacfwd(f))(x), expected, rtol=1e-6, atol=1e-8)
    assert_tree_close(backend(rune.jacrev(f))(x), expected, rtol=1e-6, atol=1e-8)


def test_jacobians_of_pytrees_and_argnums(backend):
    def f(d, s, n):
        return {"a": d["x"] * s, "b": (rnp.sum(d["x"] ** 2) * n,)}

    d, s = {"x": X3}, 2.0
    expected = {
        "a": ({"x": np.eye(3) * 2.0}, X3),
        "b": (({"x": 2 * X3 * 3}, np.float64(0.0)),),
    }
    for jac in (rune.jacfwd, rune.jacrev):
        assert_tree_close(backend(jac(f, argnums=(0, 1)))(d, s, 3), expected)
        assert_tree_close(backend(jac(f, argnums=1))(d, s, 3), {"a": X3, "b": (np.float64(0),)})


def test_hessian(backend):
    f = lambda x, y: rnp.sum(x ** 3) * y + y ** 2  # noqa: E731
    h = backend(rune.hessian(f))(X3, 2.0)
    assert_tree_close(h, np.diag(6 * X3 * 2.0))
    hxy = backend(rune.hessian(f, argnums=(0, 1)))(X3, 2.0)
    assert_tree_close(hxy, ((np.diag(12 * X3), 3 * X3 ** 2),
                            (3 * X3 ** 2, np.float64(2.0))))


def test_jacobian_keeps_float32(backend):
    x = X3.astype(np.float32)
    for jac in (rune.jacfwd, rune.jacrev):
        assert_tree_close(backend(jac(lambda x: x * x))(x), np.diag(2 * x), rtol=1e-6)


# ------------------------------------------------------------- stop_gradient


def test_stop_gradient(backend):
    f = lambda x: rnp.sum(x * rune.stop_gradient(x))  # noqa: E731
    assert_tree_close(backend(rune.grad(f))(X3), X3)
    assert_tree_close(backend(lambda x: rune.jvp(f, (x,), (np.ones(3),)))(X3),
                      (np.sum(X3 * X3), np.sum(X3)))
    sg_tree = lambda d: d["a"] * rune.stop_gradient(d)["b"]  # noqa: E731
    g = backend(rune.grad(sg_tree))({"a": 2.0, "b": 3.0})
    assert_tree_close(g, {"a": np.float64(3.0), "b": np.float64(0.0)})
    assert_tree_close(backend(rune.vmap(rune.stop_gradient))(M23), M23)
    assert_tree_close(backend(rune.stop_gradient)(M23), M23)


# ------------------------------------------------------------- cond


def branchy(p, x):
    return rune.cond(p > 0, lambda x: rnp.sin(x) * p, lambda x: x * x, x)


def branchy_np(p, x):
    return np.sin(x) * p if p > 0 else x * x


@pytest.mark.parametrize("p", [1.5, -1.0])
def test_cond_under_grad_and_jvp(backend, p):
    x = 0.75
    assert_tree_close(backend(branchy)(p, x), np.float64(branchy_np(p, x)))
    gx = np.cos(x) * p if p > 0 else 2 * x
    gp = np.sin(x) if p > 0 else 0.0
    assert_tree_close(backend(rune.grad(branchy, argnums=(0, 1)))(p, x),
                      (np.float64(gp), np.float64(gx)))
    out, t = backend(lambda p, x: rune.jvp(branchy, (p, x), (0.0, 1.0)))(p, x)
    assert_tree_close(t, np.float64(gx))
    assert_tree_close(backend(rune.grad(rune.grad(branchy, argnums=1), argnums=1))(p, x),
                      np.float64(-np.sin(x) * p if p > 0 else 2.0))


def test_cond_under_vmap_with_batched_predicate(backend):
    ps, xs = np.array([1.5, -1.0, 2.0, -3.0]), np.array([0.1, 0.2, 0.3, 0.4])
    expected = np.array([branchy_np(p, x) for p, x in zip(ps, xs)])
    assert_tree_close(backend(rune.vmap(branchy))(ps, xs), expected)
    grads = backend(rune.vmap(rune.grad(branchy, argnums=1)))(ps, xs)
    assert_tree_close(grads, np.array([rune.grad(branchy, argnums=1)(p, x)
                                       for p, x in zip(ps, xs)]))


@pytest.mark.parametrize("p", [1.5, -1.0])
def test_cond_under_vmap_with_unbatched_predicate(backend, p):
    xs = np.array([0.1, 0.2, 0.3])
    out = backend(rune.vmap(branchy, in_axes=(None, 0)))(p, xs)
    assert_tree_close(out, np.array([branchy_np(p, x) for x in xs]))
    assert "cond" in str(rune.make_ir(rune.vmap(branchy, in_axes=(None, 0)))(p, xs))


def test_cond_with_pytrees_and_captures(backend):
    w = np.array([2.0, 3.0])

    def f(p, d):
        return rune.cond(p, lambda d: {"y": d["a"] * w, "n": d["n"] + 1},
                         lambda d: {"y": d["a"] - w, "n": d["n"]}, d)

    d = {"a": np.float64(1.5), "n": np.int32(4)}
    assert_tree_close(backend(f)(True, d), {"y": 1.5 * w, "n": np.int32(5)})
    assert_tree_close(backend(f)(False, d), {"y": 1.5 - w, "n": np.int32(4)})
    g = backend(rune.grad(lambda a, p: rnp.sum(f(p, {"a": a, "n": np.int32(0)})["y"])))
    assert_tree_close(g(1.5, True), np.float64(5.0))
    assert_tree_close(g(1.5, False), np.float64(2.0))


def test_cond_with_integer_predicate(backend):
    f = lambda n, x: rune.cond(n, lambda x: x + 1.0, lambda x: x - 1.0, x)  # noqa: E731
    assert_tree_close(backend(f)(np.int64(3), 0.0), np.float64(1.0))
    assert_tree_close(backend(f)(np.int64(0), 0.0), np.float64(-1.0))


# ------------------------------------------------------------- make_ir


def test_make_ir_is_printable_and_typed():
    ir = rune.make_ir(lambda x, y: rnp.sum(rnp.sin(x) * y))(np.ones(3, np.float32), 2.0)
    text = str(ir)
    assert "sin" in text and "reduce_sum" in text and "float32[3]" in text
    assert len(ir.params) == 2 and len(ir.outputs) == 1


def test_make_ir_static_argnums():
    f = lambda x, n, name: x * n if name == "times" else x + n  # noqa: E731
    mk = rune.make_ir(f, static_argnums=(1, 2))
    times3, plus3 = str(mk(np.ones(2), 3, "times")), str(mk(np.ones(2), 3, "plus"))
    assert "mul" in times3 and "3" in times3 and "add" in plus3
    assert len(mk(np.ones(2), 3, "times").params) == 1
    assert "5" in str(rune.make_ir(f, static_argnums=(2, 1))(np.ones(2), 5, "times"))


def test_make_ir_of_gradient_shows_reverse_pass():
    text = str(rune.make_ir(rune.grad(lambda x: rnp.sum(rnp.sin(x))))(X3))
    assert "cos" in text


# ------------------------------------------------------------- captures


def test_capture_of_enclosing_trace_value(backend):
    assert_tree_close(backend(rune.grad(lambda y: rune.grad(lambda x: x * y)(1.0)))(2.0),
                      np.float64(1.0))
    assert_tree_close(backend(rune.grad(lambda y: rune.grad(lambda x: x * x * y)(3.0)))(2.0),
                      np.float64(6.0))


def test_make_ir_of_inner_function_uses_the_outer_value():
    seen = []

    def outer(y):
        seen.append(rune.make_ir(lambda x: x * y)(1.0))
        return y * 1.0

    rune.grad(outer)(2.0)
    (ir,) = seen
    assert len(ir.params) == 2  # the captured y, then x
    assert "2.0" not in str(ir) and "mul" in str(ir)


def test_captures_under_vmap_and_jvp(backend):
    ys = np.array([1.0, -2.0, 3.0])
    inner = lambda y: rune.grad(lambda x: rnp.sin(x) * y)(0.5)  # noqa: E731
    assert_tree_close(backend(rune.vmap(inner))(ys), np.cos(0.5) * ys)
    out, t = backend(lambda y: rune.jvp(inner, (y,), (1.0,)))(2.0)
    assert_tree_close((out, t), (np.float64(np.cos(0.5) * 2.0), np.float64(np.cos(0.5))))
    captured_array = lambda w: rnp.sum(rune.vmap(lambda x: x * w)(M23))  # noqa: E731
    assert_tree_close(backend(rune.grad(captured_array))(X3), M23.sum(0))


# ------------------------------------------------------------- check_grads

CORRECT = {
    "sin*x": (lambda x: rnp.sum(rnp.sin(x) * x), (X3,)),
    "vector output": (lambda x: rnp.exp(x) * x[0], (X3,)),
    "pytrees": (lambda d, s: {"u": d["w"] * s, "v": (rnp.sum(d["w"] ** 2),)},
                ({"w": X3}, 1.5)),
    "integer argument": (lambda x, n: x ** n, (X3, 3)),
    "matrix": (lambda m: m @ m.T, (M23,)),
    "float32": (lambda x: x * x, (X3.astype(np.float32) + 2,)),
}


@pytest.mark.parametrize("name", CORRECT)
@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev")])
def test_check_grads_passes_on_correct_functions(name, modes):
    f, args = CORRECT[name]
    assert rune.check_grads(f, *args, modes=modes) is None


def half_blind(x, d):
    """The derivative through d["b"] is stopped, so it is wrong there."""
    return rnp.sum(x * x) + d["a"] * rune.stop_gradient(d["b"]) ** 2


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_check_grads_names_argument_and_direction_of_wrong_derivative(mode):
    with pytest.raises(rune.GradCheckError) as info:
        rune.check_grads(half_blind, X3, {"a": 1.5, "b": 2.0}, modes=(mode,))
    msg = str(info.value)
    assert isinstance(info.value, AssertionError)
    assert "['b']" in msg and "direction" in msg
    assert ("jvp" if mode == "fwd" else "vjp") in msg
    assert "central differences" in msg


def test_check_grads_passes_where_the_derivative_is_right():
    """Only d['b'] is wrong: checking x and d['a'] alone passes."""
    rune.check_grads(lambda x, a: half_blind(x, {"a": a, "b": 2.0}), X3, 1.5)


def test_check_grads_rejects_unknown_mode():
    with pytest.raises(ValueError, match="backward"):
        rune.check_grads(lambda x: x, 1.0, modes=("backward",))
