"""Regressions from JAX code ported to rune_jit (issue 39, item 5), each through the
public API, eagerly and under jit, and under the transformations it composes with.

1. A custom_vjp whose backward rule calls the custom function itself (JAX's
   `fixed_point` example) recursed without end under grad.
2. A transformation called eagerly closed over the arguments it does not
   differentiate as NumPy arrays, which a traced index (an argmax, a loop counter)
   cannot index: `grad(f)(x, y)` raised ConcretizationError where `jit(grad(f))`
   computed. (The generated programs of tests/fuzz_programs.py index with traced
   indices too.)
3. A jitted function called inside a transformation, closing over its traced
   values, ran its compiled code without them: `grad(lambda a: jit(lambda x: x *
   a)(2.0))(0.5)` raised TypeError.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

RTOL = 1e-10


# ------------------------------------------------------------- 1. custom_vjp calling itself


def _self_calling_app():
    app = rune.custom_vjp(lambda f, x: f(x), nondiff_argnums=(0,))
    app.defvjp(lambda f, x: (app(f, x), x), lambda f, x, g: (app(lambda u: 2.0 * u, g),))
    return app


def test_custom_vjp_whose_bwd_calls_itself_has_a_gradient():
    app = _self_calling_app()
    f = lambda x: app(rnp.sin, x)  # noqa: E731
    assert float(rune.grad(f)(1.0)) == pytest.approx(2.0, rel=RTOL)
    assert float(rune.jit(rune.grad(f))(1.0)) == pytest.approx(2.0, rel=RTOL)
    xs = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(rune.vmap(rune.grad(f))(xs), 2.0, rtol=RTOL)
    np.testing.assert_allclose(rune.jit(rune.vmap(rune.grad(f)))(xs), 2.0, rtol=RTOL)
    assert float(f(1.0)) == pytest.approx(np.sin(1.0), rel=RTOL)


@partial(rune.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    """JAX's docs' fixed_point: iterate x <- f(a, x) until it stops moving."""
    def cond_fun(carry):
        x_prev, x = carry
        return rnp.abs(x_prev - x) > 1e-12

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)

    _, x_star = rune.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star


def _fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def _rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = rune.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def _fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = rune.vjp(lambda a: f(a, x_star), a)
    a_bar, = vjp_a(fixed_point(partial(_rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, rnp.zeros_like(x_star)


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_rev)


def newton_sqrt(a):
    return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_fixed_point_sqrt_value_and_gradient(jitted):
    wrap = rune.jit if jitted else (lambda f: f)
    assert float(wrap(newton_sqrt)(2.0)) == pytest.approx(np.sqrt(2.0), rel=RTOL)
    assert float(wrap(rune.grad(newton_sqrt))(2.0)) == pytest.approx(0.5 / np.sqrt(2.0),
                                                                      rel=RTOL)
    a = np.array([0.25, 2.0, 9.0])
    np.testing.assert_allclose(wrap(rune.vmap(rune.grad(newton_sqrt)))(a),
                               0.5 / np.sqrt(a), rtol=RTOL)
    # the bwd's own fixed_point is differentiated again (its rules traced when needed)
    assert float(wrap(rune.grad(rune.grad(newton_sqrt)))(2.0)) == pytest.approx(
        -0.25 * 2.0 ** -1.5, rel=1e-8)


def test_fixed_point_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    want = jax.grad(lambda a: jax.numpy.sqrt(a))(2.0)
    assert float(rune.grad(newton_sqrt)(2.0)) == pytest.approx(float(want), rel=1e-10)


# ------------------------------------------------------------- 2. traced indices, eager


def _indexed_loop(x, y):
    """A loop whose step indexes with an argmax and with its counter, stopping on a
    test of its carry (data-dependent); y is read at the argmax."""
    table = np.array([1.0, -2.0, 0.5])

    def step(c):
        v, k = c
        i = rnp.argmax(v)
        w = v * 0.5 + y[i] + x[k % 3] + rnp.asarray(table)[k % 3]
        return w.at[i].add(y[(i + 1) % 3]), k + 1

    v, k = rune.iterate(step, (x, 0), until=lambda c: rnp.sum(c[0]) > 10.0, max_steps=20)
    return rnp.sum(v * y) + k


X = np.array([0.3, 1.2, 0.7])
Y = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_of_an_argument_it_does_not_differentiate_indexed_by_a_traced_index(argnums):
    g = rune.grad(_indexed_loop, argnums=argnums)
    want = rune.jit(g)(X, Y)
    for got in (g(X, Y), g(X, Y)):  # the first call interpreted, the second compiled
        for w, o in zip(np.atleast_1d(want) if argnums != (0, 1) else want,
                        np.atleast_1d(got) if argnums != (0, 1) else got):
            np.testing.assert_allclose(o, w, rtol=RTOL)
    # (check_grads calls f on NumPy arrays too: y[i] needs y traced, as jit makes it)
    rune.check_grads(rune.jit(_indexed_loop), X, Y, modes=("rev",))


def test_jacrev_and_vmap_of_grad_with_an_indexed_constant_argument():
    jr = rune.jacrev(lambda x, y: y[rnp.argmax(x)] * x, argnums=0)
    np.testing.assert_allclose(jr(X, Y), rune.jit(jr)(X, Y), rtol=RTOL)
    np.testing.assert_allclose(jr(X, Y), 2.0 * np.eye(3), rtol=RTOL)
    vg = rune.vmap(rune.grad(_indexed_loop), in_axes=(0, None))
    xs = np.stack([X, X[::-1]])
    np.testing.assert_allclose(vg(xs, Y), rune.jit(vg)(xs, Y), rtol=RTOL)


OPTIONS = [1.0]  # a list: the eager cache cannot vouch for a function reading it


def test_a_grad_the_eager_cache_cannot_keep_traces_its_arguments_too():
    def f(x, y):
        return rnp.sum(x * y[rnp.argmax(x)]) * OPTIONS[0]

    np.testing.assert_allclose(rune.grad(f)(X, Y), [2.0, 2.0, 2.0], rtol=RTOL)


def test_grad_keeps_a_python_int_outside_argnums_static():
    def f(x, n):
        for _ in range(n):  # a Python loop over it: it must stay a Python int
            x = rnp.sin(x)
        return x

    assert float(rune.grad(f)(0.5, 2)) == pytest.approx(np.cos(np.sin(0.5)) * np.cos(0.5))


def test_a_jitted_single_element_tuple_stays_a_tuple():
    f = rune.jit(lambda x: (x * 2.0,))
    for _ in range(3):  # the first call, then the native entry's
        out = f(np.ones(2))
        assert isinstance(out, tuple) and len(out) == 1
        np.testing.assert_array_equal(out[0], [2.0, 2.0])


# ------------------------------------------------------------- 3. jit inside a trace


def test_jit_closing_over_a_traced_value():
    inner = lambda a: rune.jit(lambda x: x * a)(2.0)  # noqa: E731
    assert float(rune.grad(inner)(0.5)) == 2.0
    assert float(rune.jit(rune.grad(inner))(0.5)) == 2.0
    out, tan = rune.jvp(inner, (0.5,), (1.0,))
    assert (float(out), float(tan)) == (1.0, 2.0)
    np.testing.assert_allclose(rune.vmap(inner)(np.array([1.0, 3.0])), [2.0, 6.0])
    assert float(rune.jit(inner)(3.0)) == 6.0


def _sin_of_scaled(a):
    return rune.jit(lambda x: rnp.sin(x * a))(2.0)


def test_jit_in_grad_in_vmap_and_higher_derivatives():
    a = np.array([0.1, 0.4, 1.3])
    g = rune.vmap(rune.grad(_sin_of_scaled))
    np.testing.assert_allclose(g(a), 2.0 * np.cos(2.0 * a), rtol=RTOL)
    np.testing.assert_allclose(rune.jit(g)(a), 2.0 * np.cos(2.0 * a), rtol=RTOL)
    gg = rune.grad(rune.grad(_sin_of_scaled))
    assert float(gg(0.3)) == pytest.approx(-4.0 * np.sin(0.6), rel=RTOL)
    np.testing.assert_allclose(rune.jacfwd(lambda v: rune.jit(lambda x: x * v)(v))(a[:2]),
                               np.diag(2.0 * a[:2]), rtol=RTOL)
    rune.check_grads(_sin_of_scaled, 0.7)
    rune.check_grads(rune.grad(_sin_of_scaled), 0.7)


def test_jit_in_jit_closing_over_the_outer_argument():
    f = rune.jit(lambda a, b: rune.jit(lambda x: x * a + b)(2.0))
    assert float(f(3.0, 1.0)) == 7.0
    assert float(rune.grad(f, argnums=(0, 1))(3.0, 1.0)[0]) == 2.0


def test_jit_in_a_scan_step_closing_over_the_carry():
    def total(w, xs):
        def step(c, x):
            return rune.jit(lambda y: c * w + y)(x), c
        return rune.scan(step, 0.0, xs)[0]

    xs = np.array([1.0, 2.0, 3.0])
    want = ((0.0 * 1.5 + 1.0) * 1.5 + 2.0) * 1.5 + 3.0
    assert float(total(1.5, xs)) == pytest.approx(want)
    assert float(rune.jit(total)(1.5, xs)) == pytest.approx(want)
    g = rune.grad(total)(1.5, xs)
    assert float(g) == pytest.approx(2 * 1.5 + 2.0, rel=RTOL)  # d/dw (w^2 + 2 w + 3)
    assert float(rune.jit(rune.grad(total))(1.5, xs)) == pytest.approx(float(g), rel=RTOL)


def test_jit_with_static_arguments_and_a_pytree_closure():
    params = {"w": 0.5, "b": np.array([1.0, -1.0])}

    def loss(p):
        power = rune.jit(lambda x, n: rnp.sum((x * p["w"] + p["b"]) ** n), static_argnums=1)
        return power(np.array([2.0, 4.0]), 2)

    g = rune.grad(loss)(params)
    # sum((x w + b)^2): d/dw = sum(2 (x w + b) x), d/db = 2 (x w + b)
    r = np.array([2.0, 4.0]) * 0.5 + params["b"]
    assert float(g["w"]) == pytest.approx(float(np.sum(2 * r * np.array([2.0, 4.0]))))
    np.testing.assert_allclose(g["b"], 2 * r)
    gj = rune.jit(rune.grad(loss))(params)
    np.testing.assert_allclose(gj["b"], g["b"])


def test_a_jitted_function_called_before_works_inside_a_trace():
    double = rune.jit(lambda x: 2.0 * x)
    assert float(double(1.0)) == 2.0  # compiled, its native entry installed
    assert float(rune.grad(lambda a: double(a) * a)(3.0)) == 12.0
    assert float(rune.grad(lambda a: double(2.0) * a)(3.0)) == 4.0


def test_a_jitted_function_fails_inside_a_trace_as_it_fails_alone():
    branchy = rune.jit(lambda x: x if x > 0 else -x)
    with pytest.raises(rune.ConcretizationError):
        branchy(1.0)
    with pytest.raises(rune.ConcretizationError):  # not run on the concrete 1.0 instead
        rune.grad(lambda a: branchy(1.0) * a)(2.0)


# ------------------------------------------------------------- found by the fuzzer


def test_a_one_element_constant_indexed_by_a_traced_index():
    """rnp.asarray of a NumPy array of one element came back a NumPy array inside a
    trace (folded, as constant scalars are), which a traced index cannot index."""
    table, one = np.array([1.0, 2.0, 3.0]), np.array([5.0])

    def f(x):
        i = rnp.argmax(x)
        return rnp.asarray(table)[i % 3] * x[0] + rnp.asarray(one)[i % 1] * x[1]

    x = np.array([0.5, 2.0, 1.0])
    assert float(rune.jit(f)(x)) == 11.0
    np.testing.assert_allclose(rune.grad(f)(x), [2.0, 5.0, 0.0])
    np.testing.assert_allclose(rune.jit(rune.grad(f))(x), [2.0, 5.0, 0.0])
    np.testing.assert_allclose(rune.vmap(f)(np.stack([x, x[::-1]])), [11.0, 12.0])


def _fuzz_807(a0):
    """Generated program 807 (tests/fuzz_programs.py): a one-element value of the top
    level, read at an argmax in a scan step inside a while_loop, raised eagerly."""
    v1 = rnp.cos(a0)
    v2 = rnp.max(v1, axis=0, keepdims=True)

    def body(c):
        (c8,) = c

        def step(c10, r11):
            (c12, c13) = c10
            n17 = rnp.tanh(c13 * -0.75 + v2)
            v19 = rnp.asarray(v2)[rnp.argmax(c12) % 1]
            n20 = n17 * 0.9375 + 0.0625 * rnp.tanh(rnp.sum(v19))
            return (c12 * 0.5, n20), (n20, v1)

        (_, _), (v23, _) = rune.scan(rune.remat(step), (a0.astype(np.float32), rnp.tanh(v2)),
                                     c8[::-2], reverse=True)
        return (rnp.tanh(c8 + rnp.max(v23)) * 0.5 + 2.0,)

    (v26,) = rune.while_loop(lambda c: 1.0 > rnp.min(c[0]), body, (v1,))
    return rnp.sum(v26) + rnp.sum(v2)


def test_fuzz_807_eager_and_jitted_agree():
    a0 = np.array([0.3993278674638461, 0.7145443510241762, -0.14044270359473])
    want = rune.jit(_fuzz_807)(a0)
    np.testing.assert_allclose(_fuzz_807(a0), want, rtol=1e-9)
    g = rune.jit(rune.grad(_fuzz_807))(a0)
    np.testing.assert_allclose(rune.grad(_fuzz_807)(a0), g, rtol=1e-9)
    xs = np.stack([a0, -a0])
    np.testing.assert_allclose(rune.vmap(_fuzz_807)(xs), rune.jit(rune.vmap(_fuzz_807))(xs),
                               rtol=1e-9)
