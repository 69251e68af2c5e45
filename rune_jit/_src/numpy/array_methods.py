"""ndarray methods and attributes of traced values beyond the basic ones of methods.py,
each the rune_jit.numpy function of the same name (docs/numpy.md lists them all).

Traced values are immutable: the methods that change an ndarray in place (fill, put,
resize, x[i] = v) are TypeErrors that name the functional spelling, and sort and
partition return a new array. The methods that need the values (item, tolist,
tobytes) are ConcretizationErrors: a traced value has none yet.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ops import elementwise as ew
from . import arrange, arrays, comparisons, sorting, statistics
from ._core import strong


def _rnp(name: str) -> Callable:
    """rune_jit.numpy.<name>, looked up when called (the package defines it later)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        from .. import numpy as rnp

        return getattr(rnp, name)(*args, **kwargs)

    return call


def _immutable(name: str, instead: str) -> Callable:
    def method(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"rune_jit: traced values are immutable, so x.{name}(...) cannot "
                        f"change x in place; use {instead}, which returns a new array")

    method.__name__ = name
    return method


def _needs_values(name: str) -> Callable:
    def method(self, *args: Any, **kwargs: Any) -> None:
        self._concrete(f"x.{name}()")

    method.__name__ = name
    return method


def _set_item(self, key: Any, value: Any) -> None:
    raise TypeError("rune_jit: traced values are immutable, so x[key] = value cannot change "
                    "x; use x = x.at[key].set(value), which returns the updated array")


def _matrix_transpose(self) -> Any:
    if self.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return arrange.swapaxes(self, -1, -2)


def _view(self, dtype: Any = None, type: Any = None) -> Any:
    """x.view(dtype): the same bits read as another dtype of the same size."""
    if type is not None:
        raise TypeError("rune_jit: x.view(type=) is not supported")
    if dtype is None:
        return self
    dtype = np.dtype(dtype)
    if dtype.itemsize != self.dtype.itemsize:
        raise TypeError(f"rune_jit: x.view({dtype}) of a {self.dtype} array changes the size "
                        "of the elements, which is not supported")
    return self if dtype == self.dtype else ew.bitcast_convert(self, dtype)


def _to_device(self, device: Any, /, *, stream: Any = None) -> Any:
    if device != "cpu":
        raise ValueError(f"rune_jit: the only device is 'cpu', got {device!r}")
    return self


METHODS: dict[str, Any] = {
    # copies: a traced value is immutable, so a copy is itself
    "copy": lambda self, order="K": strong(self),
    "__copy__": lambda self: self,
    "__deepcopy__": lambda self, memo=None: self,
    # statistics
    "std": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
    correction=None: statistics.std(self, axis, dtype, out, ddof, keepdims,
                                    correction=correction),
    "var": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
    correction=None: statistics.var(self, axis, dtype, out, ddof, keepdims,
                                    correction=correction),
    "ptp": lambda self, axis=None, out=None, keepdims=False: statistics.ptp(self, axis, out,
                                                                            keepdims),
    # rounding, complex parts (arrays here are real)
    "round": lambda self, decimals=0, out=None: _rnp("round")(self, decimals, out),
    "__round__": lambda self, ndigits=None: _rnp("round")(self, ndigits or 0),
    "real": property(lambda self: _rnp("real")(self)),
    "imag": property(lambda self: _rnp("imag")(self)),
    "conj": lambda self: _rnp("conjugate")(self),
    "conjugate": lambda self: _rnp("conjugate")(self),
    "__divmod__": lambda self, other: (self // other, self % other),
    "__rdivmod__": lambda self, other: (other // self, other % self),
    # shapes and diagonals
    "swapaxes": lambda self, axis1, axis2: arrange.swapaxes(self, axis1, axis2),
    "repeat": lambda self, repeats, axis=None: arrange.repeat(self, repeats, axis),
    "diagonal": lambda self, offset=0, axis1=0, axis2=1: arrays.diagonal(self, offset, axis1,
                                                                         axis2),
    "trace": lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: arrays.trace(
        self, offset, axis1, axis2, dtype, out),
    "compress": lambda self, condition, axis=None: comparisons.compress(condition, self, axis),
    "mT": property(_matrix_transpose),
    "view": _view,
    "partition": lambda self, kth, axis=-1, kind="introselect", order=None: sorting.partition(
        self, kth, axis, kind, order),
    "argpartition": lambda self, kth, axis=-1, kind="introselect", order=None:
    sorting.argpartition(self, kth, axis, kind, order),
    # attributes
    "itemsize": property(lambda self: self.dtype.itemsize),
    "nbytes": property(lambda self: self.size * self.dtype.itemsize),
    "device": property(lambda self: "cpu"),
    "to_device": _to_device,
    # in place in NumPy: not here
    "fill": _immutable("fill", "rnp.full_like(x, value)"),
    "put": _immutable("put", "x.at[indices].set(values)"),
    "resize": _immutable("resize", "rnp.reshape(x, shape) (or rnp.pad/rnp.tile)"),
    "itemset": _immutable("itemset", "x.at[index].set(value)"),
    "__setitem__": _set_item,
    # the values themselves
    "item": _needs_values("item"),
    "tolist": _needs_values("tolist"),
    "tobytes": _needs_values("tobytes"),
    "tofile": _needs_values("tofile"),
    "dump": _needs_values("dump"),
    "dumps": _needs_values("dumps"),
}
