"""rune_jit.scipy.stats: the normal distribution (`norm`) and `multivariate_normal.logpdf`.

Dtypes as rune_jit.scipy.special's: float32 stays float32, the rest computes in float64.
"""

from .._src.scipy.stats import (multivariate_normal, norm)

__all__ = ["multivariate_normal", "norm"]
