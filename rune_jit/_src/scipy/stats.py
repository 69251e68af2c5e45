"""The implementation of rune_jit.scipy.stats (its docstring is the public module's)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as rnp
from ..numpy._core import accept, dtype_weak, shape_of
from . import special

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _in_float64(*args: Any) -> tuple[list, np.dtype]:
    """The arguments in float64, and the result dtype: float32 if every array among them
    is float32 (Python numbers are weak), else float64."""
    strong = [dtype_weak(accept(a))[0] for a in args if not dtype_weak(accept(a))[1]]
    out = F32 if strong and all(d == F32 for d in strong) else F64
    return [rnp.astype(rnp.asarray(a), F64) for a in args], out


def _method(fn):
    """A norm method fn(z, scale) of the standardized z = (x - loc) / scale."""
    def method(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        (x, loc, scale), out = _in_float64(x, loc, scale)
        return rnp.astype(fn((x - loc) / scale, scale), out)

    method.__name__, method.__doc__ = fn.__name__, fn.__doc__
    return method


def _quantile(sign: float):
    def method(self, q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        (q, loc, scale), out = _in_float64(q, loc, scale)
        return rnp.astype(loc + sign * scale * special.ndtri(q), out)

    return method


class _Norm:
    """The normal distribution with mean `loc` and standard deviation `scale`, as
    scipy.stats.norm's functions (`norm.pdf(x, loc=0, scale=1)`, ...).

    >>> print(np.round(norm.cdf(np.array([-1.96, 0.0]), 0.0, 1.0), 6))
    [0.024998 0.5     ]
    """

    @_method
    def logpdf(z, scale):
        """log of the density.

        >>> print(np.round(norm.logpdf(1.0, loc=1.0, scale=2.0), 6))
        -1.612086
        """
        return -0.5 * z * z - LOG_SQRT_2PI - rnp.log(scale)

    @_method
    def pdf(z, scale):
        """The density.

        >>> print(np.round(norm.pdf(0.0), 6))
        0.398942
        """
        return rnp.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * scale)

    @_method
    def cdf(z, scale):
        """P(X <= x), accurate in the left tail.

        >>> print(norm.cdf(-30.0))
        4.906713927148187e-198
        """
        return special.ndtr(z)

    @_method
    def logcdf(z, scale):
        """log P(X <= x), accurate in both tails.

        >>> print(np.round(norm.logcdf(-40.0), 6))
        -804.608442
        """
        return special.log_ndtr(z)

    @_method
    def sf(z, scale):
        """P(X > x).

        >>> print(norm.sf(30.0))
        4.906713927148187e-198
        """
        return special.ndtr(-z)

    @_method
    def logsf(z, scale):
        """log P(X > x).

        >>> print(np.round(norm.logsf(40.0), 6))
        -804.608442
        """
        return special.log_ndtr(-z)

    ppf = _quantile(1.0)
    ppf.__name__, ppf.__doc__ = "ppf", """The quantile function, the inverse of cdf.

        >>> print(np.round(norm.ppf(np.array([0.025, 0.5]), loc=1.0), 6))
        [-0.959964  1.      ]
        """
    isf = _quantile(-1.0)
    isf.__name__, isf.__doc__ = "isf", """The inverse of sf.

        >>> print(np.round(norm.isf(0.025), 6))
        1.959964
        """


norm = _Norm()


class _MultivariateNormal:
    """The multivariate normal distribution, as scipy.stats.multivariate_normal's
    `logpdf(x, mean, cov)` and `pdf` (x of shape [..., d], mean [d], cov [d, d]; the
    result has x's batch shape)."""

    def logpdf(self, x: Any, mean: Any = None, cov: Any = 1.0) -> Any:
        """log of the density, through the Cholesky factor L of cov: the Mahalanobis
        term is |L⁻¹(x - mean)|² and log det cov = 2 sum(log diag L).

        >>> cov = np.array([[2.0, 0.3], [0.3, 1.0]])
        >>> print(np.round(multivariate_normal.logpdf(np.array([0.5, -1.0]), np.zeros(2), cov), 6))
        -2.828968
        """
        from ..numpy.linalg import cholesky
        from .linalg import solve_triangular

        (x, cov), out = _in_float64(x, cov)
        if not shape_of(x):
            x = rnp.reshape(x, (1,))
        d = shape_of(x)[-1]
        mean = 0.0 if mean is None else rnp.astype(rnp.asarray(mean), F64)
        if len(shape_of(cov)) < 2:
            cov = rnp.eye(d) * cov
        diff = x - mean
        chol = cholesky(cov)
        batch = diff.shape[:-1]
        flat = rnp.transpose(rnp.reshape(diff, (-1, d)))  # [d, n]
        z = solve_triangular(chol, flat, lower=True)
        maha = rnp.reshape(rnp.sum(z * z, axis=0), batch)
        logdet = 2.0 * rnp.sum(rnp.log(rnp.sum(chol * rnp.eye(d), axis=-1)))
        return rnp.astype(-0.5 * (maha + logdet) - d * LOG_SQRT_2PI, out)

    def pdf(self, x: Any, mean: Any = None, cov: Any = 1.0) -> Any:
        """The density.

        >>> print(np.round(multivariate_normal.pdf(np.zeros(2), np.zeros(2), np.eye(2)), 6))
        0.159155
        """
        return rnp.exp(self.logpdf(x, mean, cov))


multivariate_normal = _MultivariateNormal()

__all__ = ["multivariate_normal", "norm"]
