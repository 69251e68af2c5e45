"""rune_jit.scipy.linalg: scipy.linalg's solves, factorizations, expm and structured
matrices (SciPy is not needed: these are rune_jit's primitives, LAPACK in compiled
code).

Matrices may be stacks [..., n, n], their batch shape broadcast with b's.
"""

from .._src.scipy.linalg import (block_diag, cho_factor, cho_solve, cholesky, circulant, det, eigh,
                                 expm, hankel, inv, lu, lu_factor, lu_solve, qr, solve,
                                 solve_triangular, svd, toeplitz)

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "det", "eigh", "expm",
           "hankel", "inv", "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_triangular",
           "svd", "toeplitz"]
