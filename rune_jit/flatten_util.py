"""Flat views of pytrees under JAX's name (`jax.flatten_util`).

>>> flat, unravel = ravel_pytree((np.float64(1.0), np.arange(2.0)))
>>> flat.tolist(), unravel(flat + 1)[1].tolist()
([1.0, 0.0, 1.0], [1.0, 2.0])
"""

from ._src.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
