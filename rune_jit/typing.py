"""JAX's `jax.typing` for rune_jit: the types of array-like arguments and of dtype
arguments, for annotations.

>>> import rune_jit as rune
>>> def scale(x: rune.typing.ArrayLike, dtype: rune.typing.DTypeLike = None) -> rune.Array:
...     return rnp.asarray(x, dtype) * 2
>>> scale([1, 2], np.float32)
array([2., 4.], dtype=float32)
"""

from ._src.typing import ArrayLike, DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
