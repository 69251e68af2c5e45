"""Counter-based random numbers, bit for bit JAX's default generator (threefry2x32).

A key is an ordinary uint32[2] array (JAX's legacy "raw" keys, `jax.random.PRNGKey`): it
flows through jit, vmap (a batch of keys), scan and iterate carries like any array. Every
draw is a pure function of a key, computed with uint32 operations that compile to
straight-line code (fused into the loop that uses it: no Python per draw). For the same
key, `split`, `fold_in`, `bits`, `uniform` and `randint` give exactly JAX's numbers (with
`jax_threefry_partitionable`, JAX's default since 0.5); `normal` follows JAX's
erf_inv to within a few ulps (docs/random.md says how many).

Defaults follow JAX with `jax_enable_x64` (as rune_jit's default float is float64):
`uniform` and `normal` give float64, `randint` int64, `bits` uint64, and a seed is an
int64. Draws have no derivative; a reparameterised sample (`normal(key) * sigma + mu`)
differentiates in its parameters. See docs/random.md.
"""

from ._src.random import (ball, bernoulli, beta, binomial, bits, categorical, cauchy, chisquare,
                          choice, dirichlet, double_sided_maxwell, exponential, f, fold_in, gamma,
                          generalized_normal, geometric, gumbel, key, key_data, laplace, loggamma,
                          logistic, lognormal, maxwell, multinomial, multivariate_normal, normal,
                          orthogonal, pareto, permutation, poisson, PRNGKey, rademacher, randint,
                          rayleigh, split, t, triangular, truncated_normal, uniform, wald,
                          weibull_min)

__all__ = ["ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare",
           "choice", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma",
           "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace", "loggamma",
           "logistic", "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal",
           "orthogonal", "pareto", "permutation", "poisson", "PRNGKey", "rademacher", "randint",
           "rayleigh", "split", "t", "triangular", "truncated_normal", "uniform", "wald",
           "weibull_min"]
