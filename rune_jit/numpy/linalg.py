"""rune_jit.numpy.linalg: numpy.linalg's functions, on stacks of matrices [..., m, n].

Integers and bools compute in float64, float32 and complex64 stay, other complex values
compute in complex128, float16 is a TypeError (as in NumPy); `eig` and `eigvals` are
always complex (as JAX's). The decompositions are primitives (ops/decomp.py: LAPACK in compiled
code); the rest is built from them. Functions that read one triangle of a symmetric
(Hermitian) matrix (cholesky, eigh, eigvalsh) differentiate as NumPy computes: the other triangle
has a zero derivative.

Under a trace, where NumPy's result depends on values (lstsq's residuals, whose shape
depends on the rank), the result is the one of full rank: see `lstsq`.
"""

from .._src.numpy.linalg import (cholesky, det, eig, eigh, eigvals, eigvalsh, inv, LinAlgError, lstsq,
                                 matrix_norm, matrix_power, matrix_rank, matrix_transpose, norm,
                                 pinv, qr, slogdet, solve, svd, vector_norm)

__all__ = ["cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "LinAlgError", "lstsq", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "norm", "pinv", "qr", "slogdet",
           "solve", "svd", "vector_norm"]
