"""Operators, methods and NumPy's dispatch protocols on traced values."""

from __future__ import annotations

import inspect
import sys
from typing import Any, Callable

import numpy as np

from ..trace import Tracer
from . import advanced, indexing, math, products, reductions, shapes, sorting
from ._core import is_python_scalar, weak


def _weak_result(out: Any, *operands: Any) -> Any:
    """Python-scalar arithmetic stays weak: an all-weak operation gives a weak result."""
    if isinstance(out, Tracer) and all(
        is_python_scalar(o) or (isinstance(o, Tracer) and o.weak) for o in operands
    ):
        return weak(out)
    return out


def _binary(fn: Callable) -> tuple[Callable, Callable]:
    def op(self, other):
        return _weak_result(fn(self, other), self, other)

    def rop(self, other):
        return _weak_result(fn(other, self), other, self)

    return op, rop


OPERATORS = {
    "add": math.add, "sub": math.subtract, "mul": math.multiply, "truediv": math.divide,
    "floordiv": math.floor_divide, "mod": math.remainder, "pow": math.power,
    "matmul": products.matmul, "and": math.bitwise_and, "or": math.bitwise_or,
    "xor": math.bitwise_xor, "lshift": math.left_shift, "rshift": math.right_shift,
}


def _invert(self):
    return _weak_result(math.invert(self), self)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d traced value")
    return (self[i] for i in range(self.shape[0]))


METHODS = {
    "__neg__": lambda self: _weak_result(math.negative(self), self),
    "__pos__": lambda self: self,
    "__abs__": lambda self: _weak_result(math.abs(self), self),
    "__invert__": _invert,
    "__lt__": math.less, "__le__": math.less_equal, "__gt__": math.greater,
    "__ge__": math.greater_equal, "__eq__": math.equal, "__ne__": math.not_equal,
    "__getitem__": indexing.getitem,
    "__iter__": _iter,
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max,
    "min": reductions.min, "mean": reductions.mean, "all": reductions.all,
    "any": reductions.any, "argmax": reductions.argmax, "argmin": reductions.argmin,
    "astype": shapes.astype, "ravel": shapes.ravel, "flatten": shapes.ravel,
    "squeeze": shapes.squeeze, "dot": products.dot, "clip": math.clip,
    "reshape": lambda self, *shape: shapes.reshape(
        self, shape[0] if len(shape) == 1 else shape),
    "transpose": lambda self, *axes: shapes.transpose(
        self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None),
    "T": property(lambda self: shapes.transpose(self)),
}


# ------------------------------------------------------------- NumPy dispatch

UFUNCS: dict[str, Callable] = {
    name: getattr(math, name) for name in (
        "add subtract multiply divide power negative positive absolute sign sqrt square exp "
        "expm1 log log1p sin cos tan tanh sinh cosh arctan arctan2 maximum minimum "
        "floor_divide remainder less less_equal greater greater_equal equal not_equal "
        "logical_and logical_or logical_xor logical_not isnan isfinite bitwise_and "
        "bitwise_or bitwise_xor invert left_shift right_shift bitwise_count").split()
}
UFUNCS["matmul"] = products.matmul


def qualified_name(f: Any) -> str:
    """Where users reach `f`: its module and qualified name (`numpy.linalg.inv`). A ufunc
    does not say its module (`scipy.special.ndtr`): the public module that holds it does."""
    module, name = getattr(f, "__module__", None), getattr(f, "__qualname__", f.__name__)
    if module is None:
        holders = [m for m, mod in list(sys.modules.items()) if mod is not None
                   and not any(p.startswith("_") for p in m.split("."))
                   and getattr(mod, f.__name__, None) is f]
        module = min(holders, key=lambda m: (m.count("."), m), default="numpy")
    return f"{module}.{name}"


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    rule = UFUNCS.get(ufunc.__name__) if ufunc is getattr(np, ufunc.__name__, None) else None
    call = qualified_name(ufunc) + ("" if method == "__call__" else f".{method}")
    if method != "__call__" and hasattr(rule, method):  # np.add.reduce(x): rnp.add.reduce
        return getattr(rule, method)(*inputs, **kwargs)
    if method != "__call__" or rule is None:
        raise TypeError(f"rune_jit: {call} has no rule for traced values")
    if kwargs:
        raise TypeError(f"rune_jit: {call} with these arguments has no rule for traced values "
                        f"(keyword arguments {sorted(kwargs)})")
    return rule(*inputs)


def _function_table() -> dict[Callable, Callable]:
    from .. import numpy as rnp

    table = {}
    for name in rnp.__all__:
        for module in (np, np.linalg):
            f = getattr(module, name, None)
            if callable(f) and not isinstance(f, (type, np.ufunc)):
                table[f] = getattr(rnp, name)
    for name in rnp.linalg.__all__:  # numpy.linalg's functions: rune_jit.numpy.linalg's
        f = getattr(np.linalg, name, None)
        if callable(f) and not isinstance(f, type):
            table[f] = getattr(rnp.linalg, name)
    return table


_FUNCTIONS: dict[Callable, Callable] = {}


def _array_function(self, func, types, args, kwargs):
    if not _FUNCTIONS:
        _FUNCTIONS.update(_function_table())
    rule = _FUNCTIONS.get(func)
    if rule is None:
        raise TypeError(f"rune_jit: {qualified_name(func)} has no rule for traced values")
    try:
        inspect.signature(rule).bind(*args, **kwargs)
    except TypeError as e:  # an argument rune_jit.numpy does not take, such as out=
        raise TypeError(f"rune_jit: {qualified_name(func)} with these arguments has no rule "
                        f"for traced values ({e})") from None
    return rule(*args, **kwargs)


def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """x.sort(): unlike NumPy's, a new array (traced values are immutable)."""
    return sorting.sort(self, axis, kind, order, stable=stable, descending=descending)


METHODS.update({  # indexing, sorting and prefix operations
    "at": property(lambda self: advanced.AtIndexer(self)),
    "sort": _sort_method,
    "argsort": lambda self, axis=-1, kind=None, order=None: sorting.argsort(self, axis, kind,
                                                                           order),
    "cumsum": lambda self, axis=None, dtype=None: sorting.cumsum(self, axis, dtype),
    "cumprod": lambda self, axis=None, dtype=None: sorting.cumprod(self, axis, dtype),
    "take": lambda self, indices, axis=None, mode="raise": sorting.take(self, indices, axis,
                                                                          mode=mode),
    "searchsorted": lambda self, v, side="left", sorter=None: sorting.searchsorted(
        self, v, side, sorter),
    "nonzero": lambda self: sorting.nonzero(self),
})

# statistics, shapes, diagonals, attributes, and the in-place and value-reading methods
# (numpy/array_methods.py)
from .array_methods import METHODS as _MORE_METHODS  # noqa: E402

METHODS.update(_MORE_METHODS)


def install() -> None:
    for name, fn in OPERATORS.items():
        op, rop = _binary(fn)
        setattr(Tracer, f"__{name}__", op)
        setattr(Tracer, f"__r{name}__", rop)
    for name, fn in METHODS.items():
        setattr(Tracer, name, fn)
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
