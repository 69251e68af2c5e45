"""rune_jit.scipy.sparse: jax.scipy.sparse's iterative solvers (`rune_jit.scipy.sparse.linalg`).

>>> import rune_jit.scipy as rsp
>>> x, info = rsp.sparse.linalg.cg(np.eye(2) * 2.0, np.array([2.0, 4.0]))
>>> print(x, info)
[1. 2.] None
"""

from . import linalg

__all__ = ["linalg"]
