"""lax's reductions: reduce with a recognised computation, reduce_sum/prod/max/min/and/or,
argmax and argmin, over rune_jit's reduction primitives (so every derivative, batching
rule and compiled loop is theirs).

A computation is recognised, not traced: `reduce` and `reduce_window` take the adds,
multiplies, maxima and minima of rune_jit (lax, numpy), NumPy and `operator`, and raise
NotImplementedError naming any other function. `lax.reduce(x, init, op, dims)` is
`op(init, op-reduction of x over dims)`, as XLA applies the initial value once.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as rnp
from ..numpy import _core
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops.shape import full
from ..trace import bind1, type_of_value

# What each recognised computation folds with: the reduction primitive and the
# elementwise op that applies the initial value.
MONOIDS: dict[str, tuple[Callable, Callable]] = {
    "sum": (red.reduce_sum, ew.add), "prod": (red.reduce_prod, ew.mul),
    "max": (red.reduce_max, ew.max), "min": (red.reduce_min, ew.min),
    "and": (red.reduce_min, ew.min), "or": (red.reduce_max, ew.max)}
# lax.add and its kin live in another module of this package, so they are known by
# their names within rune_jit.lax; every other recognised function by identity.
LAX_NAMES = {"add": "sum", "mul": "prod", "max": "max", "min": "min", "bitwise_and": "and",
             "bitwise_or": "or"}
KNOWN = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
         np.logical_and: "and", np.logical_or: "or", operator.add: "sum",
         operator.mul: "prod", operator.and_: "and", operator.or_: "or",
         rnp.add: "sum", rnp.multiply: "prod", rnp.maximum: "max", rnp.minimum: "min",
         rnp.logical_and: "and", rnp.logical_or: "or", ew.add: "sum", ew.mul: "prod",
         ew.max: "max", ew.min: "min"}


def monoid(computation: Callable, where: str) -> str:
    """The name ("sum", "prod", "max", "min", "and", "or") of a recognised computation."""
    known = KNOWN.get(computation) if _hashable(computation) else None
    module = getattr(computation, "__module__", None) or ""
    if known is None and module.startswith(("rune_jit.lax", "rune_jit._src.lax")):
        known = LAX_NAMES.get(getattr(computation, "__name__", ""))
    if known is None:
        raise NotImplementedError(
            f"{where}: the computation {getattr(computation, '__qualname__', computation)!r} "
            "is not one rune_jit recognises; pass lax.add, lax.mul, lax.max or lax.min (or "
            "rune_jit.numpy's, NumPy's or operator's add, multiply, maximum, minimum, "
            "logical_and, logical_or)")
    return known


def _hashable(f: Any) -> bool:
    try:
        hash(f)
    except TypeError:
        return False
    return True


def identity(name: str, dtype: np.dtype) -> np.ndarray:
    """The value that `name` leaves unchanged, in `dtype` (max's is -inf or the least
    integer, as lax.reduce_max's initial value)."""
    if name in ("sum", "or"):
        return np.zeros((), dtype)
    if name in ("prod", "and"):
        return np.ones((), dtype)
    if dtype.kind == "f":
        return np.asarray(-np.inf if name == "max" else np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(name == "min")
    info = np.iinfo(dtype)
    return np.asarray(info.min if name == "max" else info.max, dtype)


def fold(name: str, x: Any, axes: Sequence[int]) -> Any:
    """x reduced by `name` over `axes`; an empty axis gives the identity."""
    shape, dtype = type_of_value(x).shape, type_of_value(x).dtype
    if name in ("and", "or") and dtype.kind != "b":
        raise TypeError(f"rune_jit.lax: a logical {name} reduction takes bools, got "
                        f"{dtype.name}")
    if any(shape[a] == 0 for a in axes):
        kept = tuple(n for i, n in enumerate(shape) if i not in axes)
        return full(kept, identity(name, dtype))
    return MONOIDS[name][0](x, axes)


def _operand(x: Any, where: str) -> Any:
    return _core.as_value(_core.accept(x, where))


def _axes(axes: Sequence[int], ndim: int, where: str) -> tuple[int, ...]:
    return _core.normalize_axes(tuple(axes), ndim, where)


def apply_init(name: str, y: Any, init: Any) -> Any:
    """op(init, y), for a scalar init in y's dtype."""
    return MONOIDS[name][1](full(type_of_value(y).shape, init), y)


def scalar_init(init: Any, dtype: np.dtype, where: str) -> Any:
    """An initial value as a scalar of `dtype`."""
    init = _operand(init, where)
    if type_of_value(init).shape != ():
        raise TypeError(f"{where}: an initial value must be a scalar, got shape "
                        f"{type_of_value(init).shape}")
    return _core.to_dtype(init, dtype)


def reduce(operands: Any, init_values: Any, computation: Callable, dimensions: Sequence[int],
           out_sharding: Any = None) -> Any:
    """lax.reduce: `computation(init, x reduced by computation over dimensions)`, for a
    single operand or a tuple of operands each with its init value.

    >>> import numpy as np
    >>> print(reduce(np.arange(6.0).reshape(2, 3), 0.0, np.add, (1,)))
    [ 3. 12.]
    """
    where = "rune_jit.lax.reduce"
    if isinstance(operands, (tuple, list)):
        if not isinstance(init_values, (tuple, list)) or len(init_values) != len(operands):
            raise TypeError(f"{where}: {len(operands)} operands need as many init_values")
        return type(operands)(reduce(x, i, computation, dimensions)
                              for x, i in zip(operands, init_values))
    name = monoid(computation, where)
    x = _operand(operands, where)
    axes = _axes(dimensions, len(type_of_value(x).shape), where)
    init = scalar_init(init_values, type_of_value(x).dtype, where)
    return apply_init(name, fold(name, x, axes), init)


def _named(name: str, kinds: str, doc: str) -> Callable:
    where = f"rune_jit.lax.reduce_{name}"

    def f(operand: Any, axes: Sequence[int]) -> Any:
        x = _operand(operand, where)
        dtype = type_of_value(x).dtype
        if dtype.kind not in kinds:
            raise TypeError(f"{where}: operand dtype {dtype.name} is not supported")
        return fold(name, x, _axes(axes, len(type_of_value(x).shape), where))

    f.__name__ = f.__qualname__ = f"reduce_{name}"
    f.__doc__ = doc
    return f


reduce_sum = _named("sum", "iuf", """The sum over `axes` (lax.reduce_sum).

    >>> print(reduce_sum(np.ones((2, 3)), (0, 1)))
    6.0
    """)
reduce_prod = _named("prod", "iuf", """The product over `axes` (lax.reduce_prod).

    >>> print(reduce_prod(np.array([2.0, 3.0]), (0,)))
    6.0
    """)
reduce_max = _named("max", "biuf", """The maximum over `axes`, -inf over an empty axis
    (lax.reduce_max).

    >>> print(reduce_max(np.array([2.0, 3.0]), (0,)))
    3.0
    """)
reduce_min = _named("min", "biuf", """The minimum over `axes`, inf over an empty axis
    (lax.reduce_min).

    >>> print(reduce_min(np.array([2.0, 3.0]), (0,)))
    2.0
    """)
reduce_and = _named("and", "b", """Whether all of a bool operand holds over `axes`
    (lax.reduce_and).

    >>> print(reduce_and(np.array([True, False]), (0,)))
    False
    """)
reduce_or = _named("or", "b", """Whether any of a bool operand holds over `axes`
    (lax.reduce_or).

    >>> print(reduce_or(np.array([True, False]), (0,)))
    True
    """)


def _arg(prim: Any, name: str, doc: str) -> Callable:
    where = f"rune_jit.lax.{name}"

    def f(operand: Any, axis: int, index_dtype: Any) -> Any:
        x = _operand(operand, where)
        shape = type_of_value(x).shape
        ax = _core.normalize_axis(int(axis), len(shape), where)
        dtype = np.dtype(index_dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"{where}: index_dtype must be an integer dtype, got {dtype.name}")
        if shape[ax] == 0:
            raise ValueError(f"{where}: axis {ax} of the operand (shape {shape}) is empty")
        return bind1(prim, x, axis=ax, index_dtype=dtype)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


argmax = _arg(red.argmax_p, "argmax", """The index of the first largest value along
    `axis` (a NaN counts as the largest), in `index_dtype` (lax.argmax).

    >>> print(argmax(np.array([1.0, 3.0, 3.0]), 0, np.int32))
    1
    """)
argmin = _arg(red.argmin_p, "argmin", """The index of the first smallest value along
    `axis` (a NaN counts as the smallest), in `index_dtype` (lax.argmin).

    >>> print(argmin(np.array([1.0, 0.0, 0.0]), 0, np.int32))
    1
    """)
