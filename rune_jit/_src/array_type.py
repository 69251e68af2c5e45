"""The type of rune_jit's arrays, for annotations and `isinstance`: a NumPy array (what
rune_jit computes with and returns) or a traced value (under `jit`, `grad`, `vmap`, in a
loop step). Exported as `rune_jit.numpy.ndarray`, as `jax.numpy.ndarray` is `jax.Array`."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from .trace import Tracer

# NumPy scalars too: an eager reduction (rnp.sum(x)) gives one, where JAX gives a 0-d Array
_ARRAYS = (np.ndarray, np.generic, Tracer)


class _ArrayMeta(type):
    """Instances and subclasses are those of NumPy's ndarray and of the tracer: the two
    kinds of value a rune_jit function sees as an array."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _ARRAYS)

    def __subclasscheck__(cls, sub: type) -> bool:
        return isinstance(sub, type) and issubclass(sub, _ARRAYS)


class Array(metaclass=_ArrayMeta):
    """A rune_jit array: a NumPy array, or a traced value inside a transformation.

    Use it in annotations and `isinstance` checks; make arrays with `rnp.asarray`.
    NumPy scalars (`np.float64(1.0)`, what an eager `rnp.sum` gives) are arrays here, as
    the 0-d Array JAX would give; Python numbers and lists are not, as in JAX.

    >>> import rune_jit as rune
    >>> isinstance(np.ones(2), Array), isinstance(rnp.sum(np.ones(2)), Array)
    (True, True)
    >>> isinstance(1.0, Array)
    False
    >>> print(rune.jit(lambda x: isinstance(x, Array) and x.ndim)(np.ones(2)))
    1
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("rune_jit.numpy.ndarray cannot be instantiated: make an array with "
                        "rune_jit.numpy.asarray or rune_jit.numpy.array")


Array.__module__ = "rune_jit"  # shown as JAX shows jax.Array
