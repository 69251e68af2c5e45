"""The implementation of rune_jit.dtypes (its docstring is the public module's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import check_supported
from .dtype_vocabulary import finfo, iinfo, issubdtype, result_type

__all__ = ["canonicalize_dtype", "extended", "finfo", "float0", "iinfo", "issubdtype",
           "prng_key", "result_type"]

# JAX's dtype of the tangents of integer and boolean values; rune_jit's derivatives of
# them are zeros of a float dtype, so no rune_jit array has it: a comparison with it is
# False, as JAX code that tests for it expects of values that are not such tangents
float0 = np.dtype([("float0", np.void, 0)])


class extended(np.generic):
    """The scalar type above JAX's extended dtypes (typed PRNG keys): no rune_jit array
    has one, so `issubdtype(x.dtype, extended)` is False.

    >>> import rune_jit as rune
    >>> rune.dtypes.issubdtype(np.float32, rune.dtypes.extended)
    False
    """


class prng_key(extended):
    """The scalar type of JAX's typed PRNG keys (`jax.random.key`). rune_jit's keys are
    JAX's raw keys, uint32 arrays of shape (2,), so `issubdtype(key.dtype, prng_key)` is
    False, as JAX answers of `jax.random.PRNGKey`'s.

    >>> import rune_jit as rune
    >>> rune.dtypes.issubdtype(rune.random.PRNGKey(0).dtype, rune.dtypes.prng_key)
    False
    """


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype rune_jit computes in for `dtype`: the dtype itself, since rune_jit's
    arrays are NumPy's at every width (JAX's with 64-bit mode on); one rune_jit does not
    support (float128, bfloat16...) is a TypeError.

    >>> import rune_jit as rune
    >>> rune.dtypes.canonicalize_dtype(np.int64), rune.dtypes.canonicalize_dtype(float)
    (dtype('int64'), dtype('float64'))
    """
    return check_supported(np.dtype(dtype), "rune_jit.dtypes.canonicalize_dtype")
