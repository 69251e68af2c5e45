"""rune_jit.scipy.sparse.linalg: conjugate gradients (cg) and BiCGSTAB (bicgstab) with
jax.scipy.sparse.linalg's signatures, A a matrix or a matvec function, b a pytree.

>>> import rune_jit.scipy as rsp
>>> x, _ = rsp.sparse.linalg.cg(lambda v: 3.0 * v, np.array([3.0, 6.0]))
>>> print(np.round(x, 6))
[1. 2.]
"""

from ..._src.sparse_linalg import bicgstab, cg

__all__ = ["bicgstab", "cg"]
