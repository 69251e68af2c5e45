"""NumPy's functions about complex values as such: sort_complex, isreal, iscomplex,
real_if_close.

real_if_close's result dtype depends on the values (complex, or real when every
imaginary part is small), which a trace does not know: of a traced complex value it is
a TypeError (jax.numpy has no real_if_close); of a real one it is the value itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..trace import Tracer
from . import math as mt
from ._core import accept, as_value, dtype_weak, to_dtype
from .sorting import sort
from .ufuncs import imag

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def sort_complex(a: Any) -> Any:
    """NumPy's sort_complex: sorted along the last axis in NumPy's order of complex
    values (lexicographic, NaNs last), as complex64 for int8, int16, uint8 and uint16,
    complex128 for other real dtypes.

    >>> print(rnp.sort_complex(np.array([1 + 2j, 1 - 1j, 0.5 + 9j])))
    [0.5+9.j 1. -1.j 1. +2.j]
    >>> print(rnp.sort_complex(np.array([3, 1, 2], np.int16)).dtype)
    complex64
    """
    a = as_value(accept(a, "rune_jit.numpy.sort_complex"))
    dtype = dtype_weak(a)[0]
    if dtype.kind != "c":
        a = to_dtype(a, C64 if dtype.char in "bhBH" else C128)
    return sort(a, axis=-1)


def isreal(x: Any) -> Any:
    """NumPy's isreal: whether each imaginary part is zero (always, for real dtypes).

    >>> print(rnp.isreal(np.array([1 + 0j, 1j, 2.0])))
    [ True False  True]
    """
    return mt.equal(imag(as_value(accept(x, "rune_jit.numpy.isreal"))), 0)


def iscomplex(x: Any) -> Any:
    """NumPy's iscomplex: whether each imaginary part is nonzero (never, for real dtypes).

    >>> print(rnp.iscomplex(np.array([1 + 0j, 1j, 2.0])))
    [False  True False]
    """
    return mt.not_equal(imag(as_value(accept(x, "rune_jit.numpy.iscomplex"))), 0)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """NumPy's real_if_close: the real part of `a` if every imaginary part is below
    `tol` (in machine epsilons of a's dtype when tol > 1), else `a`. Real values are
    returned as they are. A traced complex `a` is a TypeError: the result's dtype would
    depend on its values (use rnp.real(a), or call this outside the trace).

    >>> print(rnp.real_if_close(np.array([2.1 + 4e-15j, 5.2 + 3e-15j])))
    [2.1 5.2]
    >>> print(rnp.real_if_close(np.array([2.1 + 4e-13j, 5.2 + 3e-15j])).dtype)
    complex128
    """
    a = as_value(accept(a, "rune_jit.numpy.real_if_close"))
    if dtype_weak(a)[0].kind != "c":
        return a
    if isinstance(a, Tracer):
        raise TypeError("rune_jit.numpy.real_if_close: the dtype of its result depends on "
                        "the values of a complex argument, which are not known under a "
                        "trace (jit, grad, vmap); use rnp.real(a) if the imaginary parts "
                        "are negligible, or call real_if_close outside the transformation")
    return np.real_if_close(np.asarray(a), tol)


__all__ = ["iscomplex", "isreal", "real_if_close", "sort_complex"]
