"""More of jax.random's distributions, re-exported by rune_jit.random.

Each follows JAX's algorithm on the same draws (uniform, normal, exponential, bernoulli
of the same keys, split the same way), so those built on them give JAX's numbers to
rounding. Those built on gamma (chisquare, dirichlet, f, generalized_normal, ball,
loggamma, t) are JAX's formulas over rune_jit's gamma, which draws its own numbers
(Marsaglia-Tsang per element: same distribution, other values). binomial and
multinomial are JAX's loops (inversion and BTRS over the whole array, one key a step),
so they give JAX's counts. docs/random.md lists each one's agreement.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy as rnp
from .control_flow import iterate, scan
from .random import (I64, _check_key, _check_shape, _float_dtype, _int_dtype, _log_gamma,
                     _result_shape, _shape_of, _two, bernoulli, exponential, gamma, normal, split,
                     uniform)
from .trace import type_of_value

__all__ = ["ball", "binomial", "cauchy", "chisquare", "dirichlet", "double_sided_maxwell",
           "f", "generalized_normal", "geometric", "loggamma", "lognormal", "maxwell",
           "multinomial", "orthogonal", "pareto", "rademacher", "rayleigh", "t",
           "triangular", "wald", "weibull_min"]

# JAX's loops run until every element is done; these bound them (reached with
# probability far below 1e-30 for valid parameters)
BINOMIAL_MAX_STEPS = 4096


def _where(name: str) -> str:
    return f"rune_jit.random.{name}"


def _setup(key: Any, shape: Any, params: list, dtype: Any, name: str):
    """The checked key, the result shape (the parameters' broadcast one when None) and
    the float dtype."""
    where = _where(name)
    return (_check_key(key, where), _result_shape(shape, params, where),
            _float_dtype(dtype, where))


def _inexact(v: Any) -> np.dtype:
    """v's float dtype, float64 for integers and Python scalars (JAX's promotion)."""
    dtype = type_of_value(rnp.asarray(v)).dtype
    return dtype if dtype.kind == "f" and not isinstance(v, float) else np.dtype(np.float64)


def _cast(v: Any, dtype: np.dtype, shape: tuple) -> Any:
    return rnp.broadcast_to(rnp.astype(v, dtype), shape)


# ------------------------------------------------------------- transforms of one draw


def cauchy(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Cauchy floats, tan(pi (u - 1/2)) for u uniform in [eps, 1), as
    `jax.random.cauchy`.

    >>> print(np.round(cauchy(rune.random.PRNGKey(0), (3,)), 4))
    [-0.2619 -1.2378  9.1425]
    """
    key, shape, dtype = _setup(key, _check_shape(shape, _where("cauchy")), [], dtype, "cauchy")
    u = uniform(key, shape, dtype, np.finfo(dtype).eps, 1.0)
    return rnp.tan(rnp.multiply(np.array(np.pi, dtype), rnp.subtract(u, 0.5)))


def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability (int64 unless `dtype` says), as
    `jax.random.rademacher`: 2 bernoulli(key, 0.5) - 1.

    >>> rademacher(rune.random.PRNGKey(0), (4,))
    array([ 1,  1, -1, -1])
    """
    where = _where("rademacher")
    dtype = np.dtype(I64 if dtype is None else dtype)
    b = rnp.astype(bernoulli(_check_key(key, where), 0.5, _check_shape(shape, where)), dtype)
    return rnp.astype(rnp.subtract(rnp.multiply(2, b), 1), dtype)


def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Maxwell floats: the norm of three standard normals, as `jax.random.maxwell`.

    >>> print(np.round(maxwell(rune.random.PRNGKey(0), (3,)), 4))
    [1.9891 0.4246 1.2403]
    """
    key, shape, dtype = _setup(key, _check_shape(shape, _where("maxwell")), [], dtype,
                               "maxwell")
    z = normal(key, shape + (3,), dtype)
    return rnp.sqrt(rnp.sum(rnp.multiply(z, z), axis=-1))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (),
                         dtype: Any = None) -> Any:
    """loc + scale * (a random sign) * maxwell, as `jax.random.double_sided_maxwell`
    (whose result shape is `shape` + the parameters' broadcast shape).

    >>> double_sided_maxwell(rune.random.PRNGKey(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    where = _where("double_sided_maxwell")
    key = _check_key(key, where)
    dtype = _float_dtype(dtype, where)
    params = tuple(np.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    shape = (_check_shape(shape, where) or params) + params  # JAX's shape, odd as it is
    k_maxwell, k_sign = _two(split(key))
    m = maxwell(k_maxwell, shape, dtype)
    sign = rademacher(k_sign, shape, dtype)
    return rnp.add(rnp.multiply(rnp.multiply(sign, m), scale), loc)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (),
                dtype: Any = None) -> Any:
    """Weibull floats by the inverse CDF, scale (-log1p(-u))^(1/concentration), as
    `jax.random.weibull_min`.

    >>> print(np.round(weibull_min(rune.random.PRNGKey(0), 1.0, 2.0, (3,)), 4))
    [0.7363 0.4937 1.8335]
    """
    where = _where("weibull_min")
    key = _check_key(key, where)
    dtype = _float_dtype(dtype, where)
    u = uniform(key, _check_shape(shape, where), dtype)
    return rnp.multiply(rnp.power(rnp.negative(rnp.log1p(rnp.negative(u))),
                                  rnp.divide(1.0, concentration)), scale)


def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto floats of shape b, exp(e / b) for e exponential, as `jax.random.pareto`.

    >>> print(np.round(pareto(rune.random.PRNGKey(0), 2.0, (3,)), 4))
    [1.3113 1.1296 5.3699]
    """
    key, shape, dtype = _setup(key, shape, [b], dtype, "pareto")
    return rnp.exp(rnp.divide(exponential(key, shape, dtype), rnp.astype(b, dtype)))


def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh floats, scale sqrt(-2 log u), as `jax.random.rayleigh`.

    >>> print(np.round(rayleigh(rune.random.PRNGKey(0), 1.0, (3,)), 4))
    [1.32   1.7499 0.2657]
    """
    key, shape, dtype = _setup(key, shape, [scale], dtype, "rayleigh")
    u = uniform(key, shape, dtype)
    return rnp.multiply(_cast(scale, dtype, shape), rnp.sqrt(rnp.multiply(rnp.log(u), -2.0)))


def lognormal(key: Any, sigma: Any = 1.0, shape: Any = None, dtype: Any = None) -> Any:
    """exp(sigma z) for z standard normal, as `jax.random.lognormal`.

    >>> print(np.round(lognormal(rune.random.PRNGKey(0), 1.0, (3,)), 4))
    [0.814  0.4562 6.1478]
    """
    key, shape, dtype = _setup(key, shape, [sigma], dtype, "lognormal")
    return rnp.exp(rnp.multiply(normal(key, shape, dtype), rnp.astype(sigma, dtype)))


def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian, scale 1) floats by Michael, Schucany and Haas' method,
    as `jax.random.wald`.

    >>> print(np.round(wald(rune.random.PRNGKey(0), 1.0, (3,)), 4))
    [0.187  1.6107 1.5106]
    """
    key, shape, dtype = _setup(key, shape, [mean], dtype, "wald")
    k1, k2 = _two(split(key))
    mean = _cast(mean, dtype, shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = rnp.multiply(v, v)
    mean_sq = rnp.multiply(mean, mean)
    root = rnp.sqrt(rnp.add(rnp.multiply(rnp.multiply(4.0, mean), y),
                            rnp.multiply(mean_sq, rnp.multiply(y, y))))
    x = rnp.subtract(rnp.add(mean, rnp.divide(rnp.multiply(mean_sq, y), 2.0)),
                     rnp.multiply(rnp.divide(mean, 2.0), root))
    return rnp.where(rnp.less_equal(z, rnp.divide(mean, rnp.add(mean, x))), x,
                     rnp.divide(mean_sq, x))


def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """The number of Bernoulli(p) trials up to the first success (int64 unless `dtype`
    says): floor(log u / log1p(-p)) + 1, as `jax.random.geometric`.

    >>> geometric(rune.random.PRNGKey(0), 0.5, (4,))
    array([2, 3, 1, 1])
    """
    where = _where("geometric")
    key = _check_key(key, where)
    shape = _result_shape(shape, [p], where)
    dtype = _int_dtype(dtype, where)
    p = rnp.astype(p, _inexact(p))
    u = uniform(key, shape, p.dtype)
    log_u = rnp.log(rnp.where(rnp.equal(u, 0.0), 1.0, u))
    g = rnp.add(rnp.floor(rnp.divide(log_u, rnp.broadcast_to(rnp.log1p(-p), shape))), 1.0)
    return rnp.astype(g, dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Any:
    """Triangular floats on [left, right] peaking at mode, by the inverse CDF, as
    `jax.random.triangular`.

    >>> print(np.round(triangular(rune.random.PRNGKey(0), 0.0, 0.5, 1.0, (3,)), 4))
    [0.4574 0.3289 0.8683]
    """
    key, shape, dtype = _setup(key, shape, [left, mode, right], dtype, "triangular")
    left, mode, right = (_cast(v, dtype, shape) for v in (left, mode, right))
    width = rnp.subtract(right, left)
    u = uniform(key, shape, dtype)
    low = rnp.add(left, rnp.sqrt(rnp.multiply(rnp.multiply(u, width),
                                              rnp.subtract(mode, left))))
    high = rnp.subtract(right, rnp.sqrt(rnp.multiply(rnp.multiply(rnp.subtract(1.0, u), width),
                                                     rnp.subtract(right, mode))))
    return rnp.where(rnp.less(u, rnp.divide(rnp.subtract(mode, left), width)), low, high)


def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Haar-random [..., n, m] matrices with orthonormal columns (or rows, n < m): Q of
    the QR of a normal matrix, its columns' signs fixed by R's diagonal (Mezzadri), as
    `jax.random.orthogonal`.

    >>> q = orthogonal(rune.random.PRNGKey(0), 3)
    >>> print(np.round(q.T @ q, 6) + 0.0)
    [[1. 0. 0.]
     [0. 1. 0.]
     [0. 0. 1.]]
    """
    where = _where("orthogonal")
    key = _check_key(key, where)
    shape = _check_shape(shape, where)
    dtype = _float_dtype(dtype, where)
    m = n if m is None else m
    if not all(isinstance(v, (int, np.integer)) and v >= 0 for v in (n, m)):
        raise TypeError(f"{where}: n and m must be non-negative Python ints, got {n!r}, {m!r}")
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = rnp.linalg.qr(z)
    d = rnp.diagonal(r, axis1=-2, axis2=-1)
    x = rnp.multiply(q, rnp.expand_dims(rnp.sign(d), -2))
    return rnp.swapaxes(x, -1, -2) if n < m else x


# ------------------------------------------------------------- built on gamma


def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) draws, computed in log space (no underflow for small a), as
    `jax.random.loggamma` (rune_jit's gamma draws: docs/random.md).

    >>> print(round(float(np.exp(loggamma(rune.random.PRNGKey(0), 2.0, (20000,))).mean()), 1))
    2.0
    """
    key, shape, dtype = _setup(key, shape, [a], dtype, "loggamma")
    return _log_gamma(key, a, shape, dtype, _where("loggamma"))


def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-squared floats with df degrees of freedom, 2 Gamma(df / 2), as
    `jax.random.chisquare`.

    >>> print(round(float(chisquare(rune.random.PRNGKey(0), 4.0, (20000,)).mean()), 1))
    4.0
    """
    key, shape, dtype = _setup(key, shape, [df], dtype, "chisquare")
    half = rnp.divide(rnp.astype(df, dtype), 2.0)
    return rnp.multiply(rnp.exp(_log_gamma(key, half, shape, dtype, _where("chisquare"))),
                        2.0)


def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F floats, (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden), as `jax.random.f`.

    >>> print(round(float(np.median(f(rune.random.PRNGKey(0), 5.0, 5.0, (20000,)))), 1))
    1.0
    """
    key, shape, dtype = _setup(key, shape, [dfnum, dfden], dtype, "f")
    dfnum, dfden = rnp.astype(dfnum, dtype), rnp.astype(dfden, dtype)
    k_den, k_num = _two(split(key))
    num = rnp.divide(chisquare(k_num, dfnum, shape, dtype), dfnum)
    return rnp.divide(num, rnp.divide(chisquare(k_den, dfden, shape, dtype), dfden))


def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t floats, z sqrt((df / 2) / Gamma(df / 2)), as `jax.random.t`.

    >>> print(round(float(np.median(t(rune.random.PRNGKey(0), 3.0, (20000,)))), 1))
    0.0
    """
    key, shape, dtype = _setup(key, shape, [df], dtype, "t")
    k_n, k_g = _two(split(key))
    half = rnp.divide(rnp.astype(df, dtype), 2.0)
    z = normal(k_n, shape, dtype)
    return rnp.multiply(z, rnp.sqrt(rnp.divide(half, gamma(k_g, half, shape, dtype))))


def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) vectors along alpha's last axis: the softmax of loggamma draws
    (so small alphas do not give 0 / 0), as `jax.random.dirichlet`.

    >>> x = dirichlet(rune.random.PRNGKey(0), np.array([1.0, 2.0, 3.0]), (4,))
    >>> x.shape, bool(np.allclose(x.sum(-1), 1.0))
    ((4, 3), True)
    """
    where = _where("dirichlet")
    key = _check_key(key, where)
    dtype = _float_dtype(dtype, where)
    ashape = _shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"{where}: alpha must have at least one axis, got shape {ashape}")
    batch = _result_shape(shape, [np.empty(ashape[:-1])], where)
    logs = _log_gamma(key, rnp.astype(alpha, dtype), batch + ashape[-1:], dtype, where)
    from .nn import softmax

    return softmax(logs, -1)


def generalized_normal(key: Any, p: float, shape: Any = (), dtype: Any = None) -> Any:
    """Generalized normal floats of power p, density proportional to exp(-|x|^p):
    (random sign) Gamma(1/p)^(1/p), as `jax.random.generalized_normal`.

    >>> print(round(float(np.var(generalized_normal(rune.random.PRNGKey(0), 2.0, (20000,)))), 1))
    0.5
    """
    key, shape, dtype = _setup(key, _check_shape(shape, _where("generalized_normal")), [],
                               dtype, "generalized_normal")
    k_g, k_r = _two(split(key))
    g = gamma(k_g, 1.0 / p, shape, dtype)
    return rnp.multiply(rademacher(k_r, shape, dtype), rnp.power(g, 1.0 / p))


def ball(key: Any, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Points uniform in the d-dimensional unit p-norm ball (Barthe et al.), as
    `jax.random.ball`.

    >>> x = ball(rune.random.PRNGKey(0), 3, shape=(100,))
    >>> x.shape, bool((np.linalg.norm(x, axis=-1) < 1).all())
    ((100, 3), True)
    """
    key, shape, dtype = _setup(key, _check_shape(shape, _where("ball")), [], dtype, "ball")
    k1, k2 = _two(split(key))
    g = generalized_normal(k1, p, (*shape, int(d)), dtype)
    e = exponential(k2, shape, dtype)
    total = rnp.add(rnp.sum(rnp.power(rnp.abs(g), p), axis=-1), e)
    return rnp.divide(g, rnp.expand_dims(rnp.power(total, 1.0 / p), -1))


# ------------------------------------------------------------- binomial, multinomial

STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                          0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                          0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                          0.00833056343336287])


def _stirling_tail(k: Any) -> Any:
    """log(k!) less Stirling's approximation of it: a table below 10, the series above."""
    small = rnp.less_equal(k, 9.0)
    kc = rnp.clip(k, 0.0, 9.0)
    k1sq = rnp.multiply(rnp.add(kc, 1.0), rnp.add(kc, 1.0))
    approx = rnp.divide(rnp.subtract(1.0 / 12, rnp.divide(
        rnp.subtract(1.0 / 360, rnp.divide(1.0 / 1260, k1sq)), k1sq)), rnp.add(kc, 1.0))
    table = rnp.astype(STIRLING_TAIL, type_of_value(rnp.asarray(k)).dtype)
    # NaN counts (rejected lanes, inf trials) read entry 0 where XLA's gather clamps
    index = rnp.astype(rnp.floor(rnp.where(rnp.isnan(kc), 0.0, kc)), np.int32)
    return rnp.where(small, rnp.take(table, index, mode="clip"), approx)


def _binomial_inversion(key, count, prob, shape):
    """JAX's inversion: count the geometric waiting times that fit in `count` trials."""
    log_q = rnp.log1p(rnp.negative(prob))
    zero = rnp.zeros(shape, type_of_value(rnp.asarray(prob)).dtype)

    def step(carry):
        num, total, k = carry
        sub, k = _two(split(k))
        num = rnp.where(rnp.less_equal(total, count), rnp.add(num, 1.0), num)
        u = uniform(sub, shape, zero.dtype)
        return num, rnp.add(total, rnp.ceil(rnp.divide(rnp.log(u), log_q))), k

    num, _, _ = iterate(step, (zero, zero, key),
                        until=lambda c: rnp.logical_not(rnp.any(rnp.less_equal(c[1], count))),
                        max_steps=BINOMIAL_MAX_STEPS)
    return rnp.subtract(num, 1.0)


def _btrs(key, count, prob, shape):
    """JAX's BTRS (Hörmann's transformed rejection with squeeze), for count p > 10."""
    stddev = rnp.sqrt(rnp.multiply(rnp.multiply(count, prob), rnp.subtract(1.0, prob)))
    b = rnp.add(1.15, rnp.multiply(2.53, stddev))
    a = rnp.add(rnp.add(-0.0873, rnp.multiply(0.0248, b)), rnp.multiply(0.01, prob))
    c = rnp.add(rnp.multiply(count, prob), 0.5)
    v_r = rnp.subtract(0.92, rnp.divide(4.2, b))
    r = rnp.divide(prob, rnp.subtract(1.0, prob))
    alpha = rnp.multiply(rnp.add(2.83, rnp.divide(5.1, b)), stddev)
    m = rnp.floor(rnp.multiply(rnp.add(count, 1.0), prob))
    dtype = type_of_value(rnp.asarray(prob)).dtype
    tails_m = rnp.add(_stirling_tail(m), _stirling_tail(rnp.subtract(count, m)))

    def log_bound(k):
        """JAX's upper bound on the log acceptance ratio at k (in its rounding order)."""
        rest1 = rnp.add(rnp.subtract(count, k), 1.0)
        ub = rnp.add(rnp.add(
            rnp.multiply(rnp.add(m, 0.5), rnp.log(rnp.divide(
                rnp.add(m, 1.0), rnp.multiply(r, rnp.add(rnp.subtract(count, m), 1.0))))),
            rnp.multiply(rnp.add(count, 1.0), rnp.log(rnp.divide(
                rnp.add(rnp.subtract(count, m), 1.0), rest1)))),
            rnp.multiply(rnp.add(k, 0.5), rnp.log(rnp.divide(rnp.multiply(r, rest1),
                                                             rnp.add(k, 1.0)))))
        return rnp.subtract(rnp.subtract(rnp.add(ub, tails_m), _stirling_tail(k)),
                            _stirling_tail(rnp.subtract(count, k)))

    def step(carry):
        k_out, accepted, key_ = carry
        parts = split(key_, 3)
        key_, u = parts[0], rnp.subtract(uniform(parts[1], shape, dtype), 0.5)
        v = uniform(parts[2], shape, dtype)
        us = rnp.subtract(0.5, rnp.abs(u))
        quick = rnp.logical_and(rnp.greater_equal(us, 0.07), rnp.less_equal(v, v_r))
        k = rnp.floor(rnp.add(rnp.multiply(rnp.add(rnp.divide(rnp.multiply(2.0, a), us), b),
                                           u), c))
        reject = rnp.logical_or(rnp.less(k, 0.0), rnp.greater(k, count))
        v = rnp.log(rnp.divide(rnp.multiply(v, alpha),
                               rnp.add(rnp.divide(a, rnp.multiply(us, us)), b)))
        bound = log_bound(k)
        ok = rnp.logical_or(quick, rnp.logical_and(rnp.logical_not(reject),
                                                   rnp.less_equal(v, bound)))
        return rnp.where(ok, k, k_out), rnp.logical_or(accepted, ok), key_

    init = (rnp.full(shape, -1.0, dtype), rnp.zeros(shape, bool), key)
    return iterate(step, init, until=lambda c: rnp.all(c[1]),
                   max_steps=BINOMIAL_MAX_STEPS)[0]


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """The number of successes in n Bernoulli(p) trials, as floats (float64 unless
    `dtype` says), as `jax.random.binomial`: inversion where n min(p, 1 - p) <= 10, BTRS
    above; NaN for n < 0 or p outside [0, 1] (NaN), inf for n = inf.

    >>> binomial(rune.random.PRNGKey(0), 10.0, 0.3, (5,))
    array([4., 1., 3., 4., 3.])
    """
    key, shape, dtype = _setup(key, shape, [n, p], dtype, "binomial")
    prob = _cast(p, _inexact(p), shape)
    count = _cast(n, prob.dtype, shape)
    lower_half = rnp.less(prob, 0.5)
    q = rnp.where(lower_half, prob, rnp.subtract(1.0, prob))
    bad_count = rnp.logical_or(rnp.isnan(count), rnp.less(count, 0.0))
    bad_q = rnp.logical_or(rnp.isnan(q), rnp.less(q, 0.0))
    q = rnp.where(bad_q, 0.01, q)
    inversion = rnp.logical_or(bad_count, rnp.less_equal(rnp.multiply(count, q), 10.0))
    count = rnp.floor(count)
    draws = rnp.where(
        inversion,
        _binomial_inversion(key, rnp.where(inversion, count, 0.0), q, shape),
        _btrs(key, rnp.where(inversion, 1e4, count), rnp.where(inversion, 0.5, q), shape))
    draws = rnp.astype(draws, dtype)
    invalid = rnp.logical_or(bad_q, bad_count)
    draws = rnp.where(invalid, np.nan, draws)
    draws = rnp.where(rnp.logical_and(rnp.isinf(count), rnp.logical_not(invalid)), np.inf,
                      draws)
    keep = rnp.logical_or(rnp.logical_or(lower_half, bad_count),
                          rnp.logical_or(rnp.isnan(prob), rnp.isinf(count)))
    return rnp.astype(rnp.where(keep, draws, rnp.subtract(rnp.astype(count, dtype), draws)),
                      dtype)


def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Counts of n draws among the categories of p's last axis, as
    `jax.random.multinomial`: a binomial per category of what is left, in a scan.

    >>> multinomial(rune.random.PRNGKey(0), 10.0, np.array([0.2, 0.3, 0.5]))
    array([1., 4., 5.])
    """
    del unroll  # a scan here is one loop whatever its unrolling
    where = _where("multinomial")
    key = _check_key(key, where)
    dtype = _float_dtype(dtype, where)
    p = rnp.astype(p, _inexact(p))
    shape = tuple(p.shape) if shape is None else _check_shape(shape, where)
    if not shape:
        raise ValueError(f"{where}: p must have a category axis (at least one axis)")
    n = rnp.broadcast_to(rnp.astype(n, p.dtype), shape[:-1])
    p = rnp.moveaxis(rnp.broadcast_to(p, shape), -1, 0)
    left = rnp.flip(rnp.cumsum(rnp.flip(p, 0), axis=0), 0)
    ratios = rnp.divide(p, rnp.where(rnp.equal(left, 0.0), 1.0, left))
    keys = split(key, shape[-1])

    def step(remainder, xs):
        ratio, k = xs
        count = binomial(k, remainder, rnp.clip(ratio, 0.0, 1.0),
                         dtype=type_of_value(rnp.asarray(remainder)).dtype)
        return rnp.subtract(remainder, count), count

    counts = scan(step, n, (ratios, keys))[1]
    return rnp.astype(rnp.moveaxis(counts, 0, -1), dtype)
