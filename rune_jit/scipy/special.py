"""rune_jit.scipy.special: SciPy's special functions on traced and concrete arrays.

Dtypes: as SciPy's loop search picks them. float32 arguments give float32 results, and
so do float16, bools and integers of 16 bits or less for the functions whose first loop
is float32's (erfinv, ndtri, entr); every other argument gives float64. float32 is
computed in float64 and rounded once, so the float32 results are SciPy's to within
half an ulp. The functions are compositions of primitives (erf, erfc, erfinv, log,
...), portable to any backend; gammaln and digamma carry their derivative as a rule
(digamma and trigamma), as JAX's do. Accuracy against SciPy: docs/accuracy.md.
"""

from .._src.scipy.special import (beta, betainc, betaln, boxcox, boxcox1p, comb, digamma, entr,
                                  erf, erfc, erfinv, expit, factorial, gamma, gammainc, gammaincc,
                                  gammaln, gammasgn, i0, i0e, i1, i1e, kl_div, log_ndtr,
                                  log_softmax, loggamma, logit, logsumexp, multigammaln, ndtr,
                                  ndtri, poch, psi, rel_entr, softmax, trigamma, xlog1py, xlogy)

__all__ = ["beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr", "erf",
           "erfc", "erfinv", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "loggamma",
           "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "poch", "psi", "rel_entr",
           "softmax", "trigamma", "xlog1py", "xlogy"]
