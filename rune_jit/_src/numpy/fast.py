"""The concrete-array fast path: a rune_jit.numpy call on NumPy arrays, outside any trace,
goes straight to NumPy.

On exact ndarrays of one dtype the general path promotes (nothing to do), broadcasts (as
NumPy would) and binds a primitive whose impl is one NumPy call. The fast path makes that
call after the checks that keep its result the general path's:

- no trace is current in this thread (under one, the call is staged, not computed);
- every operand is an exact `numpy.ndarray` (not a subclass, a NumPy scalar or a list) of
  the same dtype object, one the function takes as it is (`sin` of an int array converts
  it first: that is the general path's work);
- a Python scalar operand of a binary function is one NEP 50 gives the array's dtype (a
  float with a float array, an int with an int array, a bool with any), converted as the
  general path converts it: an int the dtype does not hold is NumPy's OverflowError.

Anything else, and any error NumPy raises (shapes that do not broadcast, say), goes to the
general path, which gives rune_jit's result or message. A 0-d result is a 0-d array, as
every rune_jit.numpy result is.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..dtypes import SUPPORTED
from ..ops import elementwise as ew
from ..trace import state

ndarray = np.ndarray
FLOATS = frozenset(d for d in SUPPORTED if d.kind == "f")
# a Python scalar's type -> the kinds of array dtype it leaves unchanged (NEP 50)
_KEEPS = {float: "f", int: "fiu", bool: "fiub"}


def accepted(op: Callable, floats_only: bool = False, bools: bool = True) -> frozenset:
    """The dtypes a function computes as the elementwise primitive behind `op` (`ew.add`)
    takes them: of its kinds, only floats if the function converts the others
    (np.divide), no bools if it computes them as int8 (np.power)."""
    kinds = [k for k in ew.NUMPY[op.__name__][1]
             if (k == "f" or not floats_only) and (k != "b" or bools)]
    return frozenset(d for d in SUPPORTED if d.kind in kinds)


def unary(general: Callable, op: Callable, dtypes: frozenset = FLOATS) -> Callable:
    """`general(x)`, or for an array of `dtypes` outside any trace, the NumPy computation
    of the elementwise primitive behind `op`.

    >>> f = unary(lambda x: "the general path", ew.sin)
    >>> f(np.zeros(2)), f([0.0]), f(np.zeros(2, np.int32))
    (array([0., 0.]), 'the general path', 'the general path')
    """
    compute, array = ew.NUMPY[op.__name__][0], ndarray  # (a closure's read is quick)

    @functools.wraps(general)
    def f(x: Any) -> Any:
        if type(x) is array and x.dtype in dtypes and state.builder is None:
            try:
                out = compute(x)
            except Exception:
                return general(x)  # for its error
            return out if type(out) is array else np.asarray(out)  # a NumPy scalar: 0-d
        return general(x)

    return f


def binary(general: Callable, op: Callable, dtypes: frozenset, scalars: bool = True
           ) -> Callable:
    """`general(a, b)`, or for operands of one dtype of `dtypes` (two arrays, or with
    `scalars` an array and a Python scalar it keeps) outside any trace, the NumPy
    computation of the elementwise primitive behind `op`.

    >>> f = binary(lambda a, b: "the general path", ew.add, accepted(ew.add))
    >>> f(np.ones(2, np.float32), 2.0), f(np.ones(2, np.int8), 2.5)
    (array([3., 3.], dtype=float32), 'the general path')
    """
    compute, array = ew.NUMPY[op.__name__][0], ndarray  # (a closure's read is quick)

    @functools.wraps(general)
    def f(a: Any, b: Any) -> Any:
        if type(a) is array and type(b) is array:
            d = a.dtype
            if d is b.dtype and d in dtypes and state.builder is None:
                try:
                    out = compute(a, b)
                except Exception:
                    return general(a, b)
                return out if type(out) is array else np.asarray(out)
        elif scalars and state.builder is None:
            ops = _with_scalar(a, b, dtypes)
            if ops is not None:
                try:
                    out = compute(*ops)
                except Exception:
                    return general(a, b)
                return out if type(out) is ndarray else np.asarray(out)
        return general(a, b)

    return f


def _with_scalar(a: Any, b: Any, dtypes: frozenset) -> tuple | None:
    """(a, b) with the Python scalar among them as a 0-d array of the array's dtype, if
    NEP 50 gives the result that dtype; else None."""
    if type(a) is ndarray:
        d = a.dtype
        if d in dtypes and d.kind in _KEEPS.get(type(b), ""):
            return a, np.asarray(b, d)
    elif type(b) is ndarray:
        d = b.dtype
        if d in dtypes and d.kind in _KEEPS.get(type(a), ""):
            return np.asarray(a, d), b
    return None


def reduction(general: Callable, ufunc: np.ufunc) -> Callable:
    """`general(a, axis, ...)` (sum, prod, max, min), or for a float array of one or more
    dimensions with the defaults but `axis` (None or an int in range), outside any trace,
    the NumPy reduction the primitive's impl makes: `ufunc.reduce` over those axes.

    >>> f = reduction(lambda a, axis=None, *args, **kw: "the general path", np.add)
    >>> f(np.ones((2, 3)), 1), f(np.ones((2, 3)), 2), f(np.ones(3), keepdims=True)
    (array([3., 3.]), 'the general path', 'the general path')
    """

    @functools.wraps(general)  # its signature, for inspect and the API reference
    def f(a: Any, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        if (type(a) is ndarray and not args and not kwargs and a.dtype in FLOATS
                and state.builder is None and a.ndim):
            axes = _axes(axis, a.ndim)
            if axes is not None:
                try:
                    return np.asarray(ufunc.reduce(a, axis=axes), a.dtype)
                except Exception:
                    pass  # the general path's error
        return general(a, axis, *args, **kwargs)

    return f


_ALL = [tuple(range(n)) for n in range(33)]  # NumPy's 32 dimensions at most


def _axes(axis: Any, ndim: int) -> tuple | None:
    """The axes the general path reduces over, for axis None or an int in range."""
    if axis is None:
        return _ALL[ndim]
    if type(axis) is int and -ndim <= axis < ndim:
        return (axis % ndim,)
    return None
