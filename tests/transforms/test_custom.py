"""custom_jvp and custom_vjp (issue 15): JAX's API, honoured by every pass and inside loops."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from loop_helpers import PATHS, on


@rune.custom_jvp
def log1pexp(x):
    return rnp.log1p(rnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t / (1.0 + rnp.exp(-x))  # stable where autodiff of fun is not


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@rune.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (np.zeros_like(lo), np.zeros_like(hi), rnp.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)

X = np.array([-3.0, 0.5, 40.0, 1000.0])


@pytest.mark.parametrize("path", PATHS)
def test_custom_jvp_rule_is_used_by_grad_jvp_vmap(path, monkeypatch):
    g = on(path, rune.grad(lambda v: rnp.sum(log1pexp(v))), monkeypatch)
    np.testing.assert_allclose(g(X), sigmoid(X), rtol=1e-14)  # autodiff of fun: nan at 1000
    out, t = on(path, lambda v: rune.jvp(log1pexp, (v,), (np.ones(4),)), monkeypatch)(X)
    np.testing.assert_allclose(t, sigmoid(X), rtol=1e-14)
    np.testing.assert_allclose(out[:3], np.logaddexp(0, X[:3]), rtol=1e-14)
    vg = on(path, rune.vmap(rune.grad(log1pexp)), monkeypatch)
    np.testing.assert_allclose(vg(X), sigmoid(X), rtol=1e-14)


@pytest.mark.parametrize("path", PATHS)
def test_grad_of_grad_differentiates_the_rule(path, monkeypatch):
    h = on(path, rune.grad(rune.grad(log1pexp)), monkeypatch)
    for x in (0.3, -2.0):
        s = sigmoid(x)
        np.testing.assert_allclose(h(np.float64(x)), s * (1 - s), rtol=1e-12)


def test_eager_calls_run_the_function_itself():
    calls = []

    @rune.custom_jvp
    def f(x):
        calls.append("f")
        return x * 2.0

    f.defjvp(lambda p, t: (calls.append("rule") or f(p[0]), t[0] * 2.0))
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    assert calls == ["f"]


def _loops(inner):
    """inner inside a scan step, an iterate step, a cond branch and a remat body."""
    def in_scan(x):
        return rune.scan(lambda c, r: (inner(c * r), None), 0.5, x)[0]

    def in_iterate(x):
        return rune.iterate(lambda c: (c[0] + 1.0, inner(c[1]) * 0.9), (0.0, x),
                            until=lambda c: c[0] >= 3.0, max_steps=5)[1].sum()

    def in_cond(x):
        return rune.cond(x[0] > 0, lambda v: inner(v).sum(), lambda v: -v.sum(), x)

    def in_remat(x):
        return rune.remat(lambda v: inner(v))(x).sum()

    return [in_scan, in_iterate, in_cond, in_remat]


@pytest.mark.parametrize("which", range(4))
@pytest.mark.parametrize("path", PATHS)
def test_custom_jvp_inside_loops_and_structured_steps(which, path, monkeypatch):
    f = _loops(log1pexp)[which]
    x = np.array([0.3, -0.4, 0.8])
    want = rune.grad(_loops(lambda v: rnp.log1p(rnp.exp(v)))[which])(x)
    np.testing.assert_allclose(on(path, rune.grad(f), monkeypatch)(x), want, rtol=1e-12)
    rune.check_grads(f, x)


@pytest.mark.parametrize("which", range(4))
@pytest.mark.parametrize("path", PATHS)
def test_custom_vjp_inside_loops_and_structured_steps(which, path, monkeypatch):
    lo, hi = np.float64(-0.01), np.float64(0.01)
    f = _loops(lambda v: rnp.tanh(clip_gradient(lo, hi, v * 3.0)))[which]
    g = on(path, rune.grad(f), monkeypatch)(np.array([0.3, -0.4, 0.8]))
    assert np.all(np.abs(g) <= 0.2) and np.any(g != 0)  # clipped: unclipped, about 1


@pytest.mark.parametrize("path", PATHS)
def test_custom_vjp_runs_fwd_then_bwd(path, monkeypatch):
    lo, hi = np.float64(-1.0), np.float64(1.0)
    g = on(path, rune.grad(lambda x: rnp.sum(5.0 * clip_gradient(lo, hi, x))), monkeypatch)
    np.testing.assert_array_equal(g(np.ones(3)), [1.0, 1.0, 1.0])
    v = on(path, rune.vmap(rune.grad(lambda x: 5.0 * clip_gradient(lo, hi, x))), monkeypatch)
    np.testing.assert_array_equal(v(np.ones(3)), [1.0, 1.0, 1.0])
    out = on(path, lambda x: clip_gradient(lo, hi, x) * 2.0, monkeypatch)(np.ones(2))
    np.testing.assert_array_equal(out, [2.0, 2.0])


def test_fwd_may_call_the_function_and_rules_their_function():
    """A rule that calls its own function (common: fwd computes f(x)) is traced once."""
    @rune.custom_vjp
    def square(x):
        return x * x

    square.defvjp(lambda x: (square(x), x), lambda x, g: (2.0 * x * g,))
    f = lambda v: rnp.sum(square(v) * 3.0)  # noqa: E731
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(rune.grad(f)(x), 6.0 * x)
    np.testing.assert_allclose(rune.jit(rune.grad(f))(x), 6.0 * x)
    np.testing.assert_allclose(rune.grad(lambda v: rune.grad(f)(v).sum())(x), [6.0, 6.0])
    np.testing.assert_allclose(rune.vmap(rune.grad(lambda v: square(v)))(x), 2.0 * x)


def test_nondiff_argnums_and_pytrees():
    @rune.custom_jvp
    def scaled(k, xs):  # k: a static Python number; xs: a dict of arrays
        return {"a": xs["a"] * k, "b": rnp.sin(xs["b"])}

    scaled.nondiff_argnums = (0,)

    @scaled.defjvp
    def _(k, primals, tangents):
        (xs,), (ts,) = primals, tangents
        return scaled(k, xs), {"a": ts["a"] * k, "b": ts["b"] * rnp.cos(xs["b"])}

    xs = {"a": np.array([1.0, 2.0]), "b": np.array(0.5)}
    g = rune.grad(lambda d: rnp.sum(scaled(3.0, d)["a"]) + scaled(3.0, d)["b"])(xs)
    np.testing.assert_allclose(g["a"], [3.0, 3.0])
    np.testing.assert_allclose(g["b"], np.cos(0.5))


def test_defjvps_sums_a_rule_per_argument():
    @rune.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: ty * x)
    gx, gy = rune.grad(f, argnums=(0, 1))(np.float64(3.0), np.float64(4.0))
    assert (float(gx), float(gy)) == (4.0, 3.0)


def test_the_ir_shows_one_equation_with_the_function_and_its_rule():
    region = rune.make_ir(lambda v: log1pexp(v) * 2.0)(X)
    assert [e.prim.name for e in region.eqns] == ["custom_jvp_call", "mul"]
    assert "fun = {" in str(region) and "jvp = {" in str(region)
    vjp_ir = str(rune.make_ir(lambda v: clip_gradient(-1.0, 1.0, v))(X))
    assert "custom_vjp_call" in vjp_ir and "fwd = {" in vjp_ir and "bwd = {" in vjp_ir


# ------------------------------------------------------------- bad input


def test_a_rule_returning_tangents_of_another_type_names_both():
    @rune.custom_jvp
    def f(x):
        return (x * 2.0, x * 3.0)

    f.defjvp(lambda p, t: (f(p[0]), (t[0] * 2.0, rnp.astype(t[0], np.float32))))
    with pytest.raises(TypeError, match=r"tangent of output\[1\] as float32\[2\], but "
                                        r"output\[1\] is float64\[2\]"):
        rune.grad(lambda v: rnp.sum(f(v)[1]))(np.ones(2))

    g = rune.custom_jvp(lambda x: (x, x))
    g.defjvp(lambda p, t: (g(p[0]), t[0]))
    with pytest.raises(TypeError, match="tangents of structure"):
        rune.grad(lambda v: rnp.sum(g(v)[0]))(np.ones(2))


def test_bwd_returning_the_wrong_number_of_cotangents_says_so():
    @rune.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(TypeError, match="bwd must return a tuple of 2 cotangents, one per "
                                        "argument; it returned 1"):
        rune.grad(f)(np.float64(1.0), np.float64(2.0))


def test_jvp_of_a_custom_vjp_function_is_a_clear_error():
    for f in (lambda v: rune.jvp(lambda u: clip_gradient(-1.0, 1.0, u), (v,), (v,)),
              rune.jit(lambda v: rune.jvp(lambda u: clip_gradient(-1.0, 1.0, u), (v,), (v,))),
              rune.jacfwd(lambda v: clip_gradient(-1.0, 1.0, v))):
        with pytest.raises(TypeError, match="reverse-mode rule only; forward mode"):
            f(np.ones(2))


def test_differentiating_a_closed_over_value_is_an_error():
    def f(w):
        g = rune.custom_jvp(lambda x: x * w)
        g.defjvp(lambda p, t: (g(p[0]), t[0] * w))
        return rnp.sum(g(np.ones(2)))

    with pytest.raises(TypeError, match="closes over"):
        rune.grad(f)(np.float64(2.0))


def test_library_rules_are_traced_when_a_pass_needs_them():
    """gammaln's jvp rule (gammaln again, and digamma) is traced when differentiated, not
    at each call (a jit of betainc, four gammalns, traced 30,630 equations: 5 s of
    compiling); the gradient still works, and a rule given a traced nondiff argument
    (betainc's a and b) is traced at once."""
    import scipy.special as sp
    import rune_jit.scipy.special as rs
    from rune_jit._src.ir import Region

    def jvp_rule(f, *args):
        (eqn,) = rune.make_ir(f)(*args).eqns
        return eqn.params["jvp"]

    x = np.array([0.2, 0.5, 0.9])
    assert not isinstance(jvp_rule(rs.gammaln, x), Region)
    assert "jvp rule of gammaln, traced when needed" in repr(jvp_rule(rs.gammaln, x))
    np.testing.assert_allclose(rune.jit(rune.grad(lambda v: rnp.sum(rs.gammaln(v))))(x),
                               sp.digamma(x), rtol=1e-13)
    in_scan = rune.jit(rune.grad(
        lambda v: rune.scan(lambda c, r: (c + rs.gammaln(r), None), 0.0, v)[0]))
    np.testing.assert_allclose(in_scan(x), sp.digamma(x), rtol=1e-13)
    a = np.array([0.5, 2.0, 3.0])
    assert isinstance(jvp_rule(rs.betainc, a, a, x), Region)
    np.testing.assert_allclose(rune.jit(rune.vmap(rune.grad(rs.betainc, 2)))(a, a, x),
                               x ** (a - 1) * (1 - x) ** (a - 1) / sp.beta(a, a), rtol=1e-11)
