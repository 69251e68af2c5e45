"""rune_jit.nn.initializers against jax.nn.initializers: the same key gives JAX's
numbers (float32 and float64), eagerly and compiled; fans as JAX counts them; errors."""

import numpy as np
import pytest

import rune_jit as rune
from rune_jit import random
from rune_jit.nn import initializers as init

jax = pytest.importorskip("jax")
jinit = pytest.importorskip("jax.nn.initializers")

BUILT = ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "he_uniform",
         "he_normal", "kaiming_uniform", "kaiming_normal", "lecun_uniform", "lecun_normal",
         "orthogonal"]
SHAPES = [(3, 2, 6), (4, 4), (2, 7)]


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("jax_enable_x64", True)


def close(got, want, dtype):
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_allclose(got, np.asarray(want), rtol=rtol, atol=rtol * 1e-2)


def test_every_jax_initializer_is_provided():
    names = {n for n in dir(jinit) if not n.startswith("_")}
    assert names <= set(init.__all__)


@pytest.mark.parametrize("name", BUILT)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.slow
def test_builders_match_jax(name, dtype):
    got = getattr(init, name)()(random.PRNGKey(0), (5, 4), dtype)
    close(got, getattr(jinit, name)()(jax.random.PRNGKey(0), (5, 4), dtype), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILT)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [7, -3, 2**40])
def test_builders_match_jax_over_seeds_and_shapes(name, dtype, seed):
    for shape in SHAPES:
        got = getattr(init, name)()(random.PRNGKey(seed), shape, dtype)
        close(got, getattr(jinit, name)()(jax.random.PRNGKey(seed), shape, dtype), dtype)


@pytest.mark.parametrize("build", [lambda m: m.normal(0.5), lambda m: m.uniform(2.0),
                                   lambda m: m.truncated_normal(0.3, lower=-1.0, upper=3.0),
                                   lambda m: m.constant(-2.5), lambda m: m.zeros,
                                   lambda m: m.ones])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simple_initializers_match_jax(build, dtype):
    got = build(init)(random.PRNGKey(3), (3, 5), dtype)
    close(got, build(jinit)(jax.random.PRNGKey(3), (3, 5), dtype), dtype)


def test_default_dtype_is_float64():
    assert init.normal()(random.PRNGKey(0), (2,)).dtype == np.float64
    assert init.glorot_uniform()(random.PRNGKey(0), (2, 3)).dtype == np.float64


# normal in the quick run; the other two in the slow run (the quick run's 5 minutes: issue 32)
@pytest.mark.parametrize("distribution", [
    pytest.param("truncated_normal", marks=pytest.mark.slow), "normal",
    pytest.param("uniform", marks=pytest.mark.slow)])
def test_variance_scaling_axes(distribution):
    kw = dict(in_axis=(0, 1), out_axis=-1, batch_axis=2)
    shape = (2, 3, 4, 5)
    for mode in ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]:
        got = init.variance_scaling(1.7, mode, distribution, **kw)(random.PRNGKey(1), shape)
        want = jinit.variance_scaling(1.7, mode, distribution, **kw)(jax.random.PRNGKey(1),
                                                                      shape)
        close(got, want, np.float64)


@pytest.mark.slow
def test_orthogonal_column_axis_and_delta_orthogonal():
    key, jkey = random.PRNGKey(2), jax.random.PRNGKey(2)
    close(init.orthogonal(2.0, column_axis=0)(key, (3, 2, 4)),
          jinit.orthogonal(2.0, column_axis=0)(jkey, (3, 2, 4)), np.float64)
    for shape in [(3, 2, 5), (3, 3, 4, 4), (1, 3, 3, 2, 2)]:
        close(init.delta_orthogonal()(key, shape), jinit.delta_orthogonal()(jkey, shape),
              np.float64)


def test_under_jit_vmap_and_a_scan_step():
    build = init.he_uniform()
    got = rune.jit(lambda k: build(k, (4, 3)))(random.PRNGKey(5))
    close(got, jinit.he_uniform()(jax.random.PRNGKey(5), (4, 3)), np.float64)
    keys = random.split(random.PRNGKey(9), 3)
    batch = rune.vmap(lambda k: init.orthogonal()(k, (3, 3)))(keys)
    for b in batch:
        np.testing.assert_allclose(b.T @ b, np.eye(3), atol=1e-12)

    def step(key, _):
        key, sub = random.split(key)
        return key, init.lecun_normal()(sub, (2, 2))

    _, ws = rune.jit(lambda k: rune.scan(step, k, None, length=2))(random.PRNGKey(4))
    k1 = jax.random.split(jax.random.PRNGKey(4))[1]
    close(ws[0], jinit.lecun_normal()(k1, (2, 2)), np.float64)


def test_statistics_of_a_large_draw():
    w = init.glorot_normal()(random.PRNGKey(0), (300, 500))
    assert abs(w.var() * 400 - 1.0) < 0.03
    assert np.abs(w).max() <= 2 * np.sqrt(2 / 800) / 0.87962566103423978


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="1-dimensional shape"):
        init.glorot_uniform()(random.PRNGKey(0), (5,))
    with pytest.raises(ValueError, match="invalid mode 'fan_max'"):
        init.variance_scaling(1.0, "fan_max", "normal")
    with pytest.raises(ValueError, match="invalid distribution 'cauchy'"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="at least 2 axes"):
        init.orthogonal()(random.PRNGKey(0), (4,))
    with pytest.raises(ValueError, match="3, 4 or 5-axis"):
        init.delta_orthogonal()(random.PRNGKey(0), (4, 4))
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(random.PRNGKey(0), (3, 4, 2))
