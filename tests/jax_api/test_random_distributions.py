"""The distributions added to rune_jit.random for jax.random's names. Those JAX draws
from uniform, normal, exponential and bernoulli (and binomial, multinomial: JAX's
loops) give JAX's numbers for the same key; those built on gamma follow JAX's formulas
over rune_jit's own gamma draws, so they are tested as distributions (moments and a
Kolmogorov-Smirnov test against scipy.stats on 10^4 draws, fixed seeds)."""

import numpy as np
import pytest
from scipy import stats

import rune_jit as rune
from rune_jit import random

jax = pytest.importorskip("jax")
jr = pytest.importorskip("jax.random")

# name: (arguments after the key, shape)
SAME_AS_JAX = {
    "cauchy": ((), (7,)),
    "rademacher": ((), (9,)),
    "maxwell": ((), (6,)),
    "double_sided_maxwell": ((0.5, 2.0), (6,)),
    "weibull_min": ((1.5, 2.0), (6,)),
    "pareto": ((np.array([1.0, 2.0, 3.0]),), (2, 3)),
    "rayleigh": ((1.5,), (6,)),
    "lognormal": ((0.7,), (6,)),
    "wald": ((np.array([0.5, 1.3]),), (3, 2)),
    "geometric": ((0.3,), (8,)),
    "triangular": ((0.0, 0.3, 1.0), (6,)),
    "binomial": ((np.array([3.0, 10.0, 30.0, 1e3, 1e5]), np.array([0.2, 0.5, 0.9, 0.3, 0.01])),
                 (2, 5)),
}


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("jax_enable_x64", True)


def same(got, want, dtype=np.float64):
    want = np.asarray(want)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)


@pytest.mark.parametrize("name", sorted(SAME_AS_JAX))
@pytest.mark.slow
def test_same_numbers_as_jax(name):
    args, shape = SAME_AS_JAX[name]
    for seed in (0, 11):
        got = getattr(random, name)(random.PRNGKey(seed), *args, shape)
        same(got, getattr(jr, name)(jr.PRNGKey(seed), *args, shape))


@pytest.mark.parametrize("name", ["cauchy", "maxwell", "rayleigh", "triangular"])
def test_float32_and_jit(name):
    args, shape = SAME_AS_JAX[name]
    fn = getattr(random, name)
    got = rune.jit(lambda k: fn(k, *args, shape, np.float32))(random.PRNGKey(3))
    same(got, getattr(jr, name)(jr.PRNGKey(3), *args, shape, np.float32), np.float32)


@pytest.mark.slow
def test_binomial_edges_match_jax():
    n = np.array([5.0, 50.0, 500.0, np.inf, -1.0, 30.0, 0.0, 20.0])
    p = np.array([0.7, 0.2, 0.9, 0.5, 0.5, np.nan, 0.5, 1.0])
    same(random.binomial(random.PRNGKey(1), n, p), jr.binomial(jr.PRNGKey(1), n, p))


@pytest.mark.slow
def test_binomial_under_jit_and_vmap_match_jax():
    keys = random.split(random.PRNGKey(2), 3)
    got = rune.jit(rune.vmap(lambda k: random.binomial(k, 100.0, 0.4, (4,))))(keys)
    want = jax.vmap(lambda k: jr.binomial(k, 100.0, 0.4, (4,)))(jr.split(jr.PRNGKey(2), 3))
    same(got, want)


@pytest.mark.slow
def test_multinomial_matches_jax():
    p = np.array([0.2, 0.3, 0.5])
    same(random.multinomial(random.PRNGKey(0), 10.0, p, shape=(3, 3)),
         jr.multinomial(jr.PRNGKey(0), 10.0, p, shape=(3, 3)))


@pytest.mark.slow
def test_multinomial_compiled_matches_jax():
    p = np.array([0.2, 0.3, 0.5])
    got = rune.jit(lambda k: random.multinomial(k, np.array([5.0, 40.0]), p, shape=(2, 3)))(
        random.PRNGKey(4))
    same(got, jr.multinomial(jr.PRNGKey(4), np.array([5.0, 40.0]), p, shape=(2, 3)))
    assert (got.sum(-1) == [5.0, 40.0]).all()


def test_orthogonal_matches_jax():
    same(random.orthogonal(random.PRNGKey(0), 3, (2,)), jr.orthogonal(jr.PRNGKey(0), 3, (2,)))
    same(random.orthogonal(random.PRNGKey(1), 2, m=4), jr.orthogonal(jr.PRNGKey(1), 2, m=4))
    q = rune.jit(lambda k: random.orthogonal(k, 4, m=3))(random.PRNGKey(5))
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)


def test_same_numbers_in_a_scan_step():
    def step(key, _):
        key, sub = random.split(key)
        return key, random.wald(sub, 2.0, (2,)) + random.cauchy(sub, (2,))

    _, ys = rune.jit(lambda k: rune.scan(step, k, None, length=2))(random.PRNGKey(8))
    sub = jr.split(jr.PRNGKey(8))[1]
    same(ys[0], jr.wald(sub, 2.0, (2,)) + jr.cauchy(sub, (2,)))


def ks(draws, cdf):
    assert stats.kstest(np.asarray(draws).ravel(), cdf).pvalue > 1e-3


N = 10_000


@pytest.mark.parametrize("name,args,dist", [
    ("chisquare", (3.0,), stats.chi2(3.0)),
    ("chisquare", (0.4,), stats.chi2(0.4)),
    ("t", (4.0,), stats.t(4.0)),
    ("f", (5.0, 7.0), stats.f(5.0, 7.0)),
    ("loggamma", (2.5,), stats.loggamma(2.5)),
    ("generalized_normal", (1.5,), stats.gennorm(1.5)),
])
def test_gamma_based_distributions(name, args, dist):
    draws = getattr(random, name)(random.PRNGKey(21), *args, (N,))
    ks(draws, dist.cdf)


def test_dirichlet_and_ball_distributions():
    alpha = np.array([0.3, 1.0, 4.0])
    x = random.dirichlet(random.PRNGKey(5), alpha, (N,))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(x.mean(0), alpha / alpha.sum(), atol=0.01)
    for i, a in enumerate(alpha):  # each marginal is Beta(a, sum - a)
        ks(x[:, i], stats.beta(a, alpha.sum() - a).cdf)
    pts = random.ball(random.PRNGKey(6), 3, p=2, shape=(N,))
    radius = np.linalg.norm(pts, axis=-1)
    ks(radius, lambda r: np.clip(r, 0, 1) ** 3)  # uniform in the ball: P(R < r) = r^3
    assert (np.abs(random.ball(random.PRNGKey(7), 2, p=1, shape=(100,))).sum(-1) < 1).all()


def test_binomial_distribution_and_other_dtypes():
    draws = random.binomial(random.PRNGKey(31), 40.0, 0.35, (N,))
    assert abs(draws.mean() - 14.0) < 0.15 and abs(draws.var() - 9.1) < 0.4
    assert random.binomial(random.PRNGKey(0), 3.0, 0.5, (2,), np.float32).dtype == np.float32


def test_draws_vmap_over_keys_and_do_not_differentiate_their_key():
    keys = random.split(random.PRNGKey(0), 4)
    got = rune.vmap(lambda k: random.pareto(k, 3.0, (2,)))(keys)
    want = jax.vmap(lambda k: jr.pareto(k, 3.0, (2,)))(jr.split(jr.PRNGKey(0), 4))
    same(got, want)
    # a reparameterised draw differentiates in its parameter: d/ds (s z) = z
    g = rune.grad(lambda s: random.rayleigh(random.PRNGKey(1), s, (3,)).sum())(2.0)
    np.testing.assert_allclose(g, random.rayleigh(random.PRNGKey(1), 1.0, (3,)).sum(),
                               rtol=1e-12)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="rune_jit.random.cauchy: dtype must be a float"):
        random.cauchy(random.PRNGKey(0), (2,), np.int32)
    with pytest.raises(ValueError, match="rune_jit.random.pareto: parameter shapes"):
        random.pareto(random.PRNGKey(0), np.ones(3), (2,))
    with pytest.raises(ValueError, match="alpha must have at least one axis"):
        random.dirichlet(random.PRNGKey(0), 1.0)
    with pytest.raises(TypeError, match="key must be a uint32"):
        random.maxwell(np.zeros(3, np.uint32))
