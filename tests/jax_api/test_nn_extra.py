"""The activations added to rune_jit.nn for jax.nn's names (celu, selu, glu, hard_*,
soft_sign, mish, squareplus, sparse_*, log1mexp, logmeanexp, identity) against jax.nn,
eagerly and compiled, with their derivatives, under vmap and in a scan step; and the
package layout (rune_jit.nn is a package with nn.initializers)."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import nn

jax = pytest.importorskip("jax")
jnn = pytest.importorskip("jax.nn")

X = np.array([-30.0, -3.0, -1.0, -0.7, -0.2, 0.3, 0.9, 1.0001, 2.5, 40.0])
UNARY = ["celu", "selu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "soft_sign",
         "mish", "squareplus", "sparse_plus", "sparse_sigmoid", "identity"]
# jax.nn names rune_jit does not provide (docs/porting-from-jax.md says why)
NOT_PROVIDED = {"dot_product_attention", "get_scaled_dot_general_config",
                "scaled_dot_general", "scaled_matmul"}


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("jax_enable_x64", True)


def jax_values(name, x, **kw):
    return np.asarray(getattr(jnn, name)(x, **kw))


def jax_grads(name, x, **kw):
    return np.asarray(jax.vmap(jax.grad(lambda v: getattr(jnn, name)(v, **kw)))(x))


def test_every_jax_nn_name_is_provided_or_listed():
    names = {n for n in dir(jnn) if not n.startswith("_")}
    missing = sorted(n for n in names - NOT_PROVIDED if not hasattr(nn, n))
    assert not missing
    assert set(nn.__all__) <= {n for n in dir(nn)}


@pytest.mark.parametrize("name", UNARY)
def test_values_and_derivatives_match_jax(name, backend):
    f = getattr(nn, name)
    np.testing.assert_allclose(backend(f)(X), jax_values(name, X), rtol=1e-14, atol=1e-15)
    grads = backend(rune.vmap(rune.grad(f)))(X)
    np.testing.assert_allclose(grads, jax_grads(name, X), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name,kw", [("celu", {"alpha": 0.5}), ("squareplus", {"b": 0.25})])
def test_parameters(name, kw, backend):
    f = getattr(nn, name)
    np.testing.assert_allclose(backend(lambda x: f(x, **kw))(X), jax_values(name, X, **kw),
                               rtol=1e-14)


def test_selu_grad_check():
    rune.check_grads(nn.selu, np.array([-1.3, 0.4, 2.0]))
    rune.check_grads(nn.mish, np.array([-1.3, 0.4, 2.0]))


def test_log1mexp_is_accurate_at_both_ends(backend):
    x = np.array([1e-12, 1e-5, 0.3, np.log(2.0), 0.7, 5.0, 40.0])
    np.testing.assert_allclose(backend(nn.log1mexp)(x), jax_values("log1mexp", x), rtol=1e-14)
    np.testing.assert_allclose(backend(rune.vmap(rune.grad(nn.log1mexp)))(x),
                               1 / np.expm1(x), rtol=1e-12)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_glu_and_logmeanexp(axis, backend, rng):
    x = rng.normal(size=(4, 6))
    glu_axis = -1 if axis is None else axis
    np.testing.assert_allclose(backend(lambda v: nn.glu(v, glu_axis))(x),
                               jax_values("glu", x, axis=glu_axis), rtol=1e-14)
    np.testing.assert_allclose(backend(lambda v: nn.logmeanexp(v, axis=axis))(x),
                               jax_values("logmeanexp", x, axis=axis), rtol=1e-13)


def test_logmeanexp_where_and_keepdims(backend, rng):
    x = rng.normal(size=(3, 5))
    mask = rng.uniform(size=(3, 5)) > 0.3
    mask[:, 0] = True
    got = backend(lambda v: nn.logmeanexp(v, axis=1, where=mask, keepdims=True))(x)
    want = jnn.logmeanexp(x, axis=1, where=mask, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_glu_of_an_odd_axis_names_it():
    with pytest.raises(ValueError, match="axis -1 must be even, got 5"):
        nn.glu(np.ones((2, 5)))


def test_in_a_scan_step_and_under_vmap(backend):
    def step(c, x):
        return c + nn.hard_tanh(x) + nn.soft_sign(x), nn.celu(x)

    total, ys = backend(lambda xs: rune.scan(step, 0.0, xs))(X)
    want = float(np.sum(jax_values("hard_tanh", X) + jax_values("soft_sign", X)))
    assert abs(float(total) - want) < 1e-12
    np.testing.assert_allclose(ys, jax_values("celu", X), rtol=1e-14)
    batch = np.stack([X, -X])
    np.testing.assert_allclose(backend(rune.vmap(nn.glu))(batch),
                               np.stack([jax_values("glu", X), jax_values("glu", -X)]),
                               rtol=1e-14)


def test_old_names_and_integer_inputs_still_work():
    assert float(nn.relu(np.float64(-1.0))) == 0.0
    assert nn.selu(np.array([1, 2])).dtype == np.float64
    assert rnp.allclose(nn.softplus(np.array([0.0])), np.log(2.0))
