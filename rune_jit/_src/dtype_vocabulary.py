"""NumPy's words for shapes and dtypes, taking traced values wherever NumPy takes arrays:
`shape`, `ndim`, `size` (static: a traced value's shape is known when it is traced),
`result_type` (NEP 50: Python scalars and traced weak values are weak), `promote_types`,
`issubdtype`, `can_cast`, `dtype`, `finfo`, `iinfo`, `isscalar` (JAX's: a 0-d array is
a scalar)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .trace import Tracer

# a weak traced value promotes as the Python scalar of its kind would (NEP 50)
_WEAK_STAND_IN = {"f": 0.0, "i": 0, "u": 0, "b": False}


def _dtype_like(x: Any) -> Any:
    """What NumPy's dtype functions take in place of `x`: a traced value's dtype."""
    return x.dtype if isinstance(x, Tracer) else x


def shape(a: Any) -> tuple[int, ...]:
    """The shape of an array, a traced value, a number or a nested list.

    >>> import rune_jit as rune
    >>> shape(np.ones((2, 3))), shape(1.0), rune.jit(lambda x: x * shape(x)[0])(np.ones(2))
    ((2, 3), (), array([2., 2.]))
    """
    return a.shape if isinstance(a, Tracer) else np.shape(a)


def ndim(a: Any) -> int:
    """The number of dimensions of an array, a traced value or a number.

    >>> ndim(np.ones((2, 3))), ndim([1, 2]), ndim(3.0)
    (2, 1, 0)
    """
    return a.ndim if isinstance(a, Tracer) else np.ndim(a)


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements (along `axis` if given) of an array or a traced value.

    >>> size(np.ones((2, 3))), size(np.ones((2, 3)), 1), size(4.0)
    (6, 3, 1)
    """
    if not isinstance(a, Tracer):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[axis]


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype rune_jit.numpy computes a combination of these in (NumPy 2's promotion,
    NEP 50): dtypes, arrays, traced values, and Python scalars, which are weak (they
    take the array's dtype), as is a traced value made from Python scalars alone.

    >>> result_type(np.float32, 1.0), result_type(np.ones(2, np.int8), 300 // 3)
    (dtype('float32'), dtype('int8'))
    """
    return np.result_type(*[_stand_in(x) for x in arrays_and_dtypes])


def _stand_in(x: Any) -> Any:
    if isinstance(x, Tracer):
        return _WEAK_STAND_IN[x.dtype.kind] if x.weak else x.dtype
    return x


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both dtypes convert to safely (NumPy's promote_types).

    >>> promote_types("uint8", np.int8), promote_types(np.float16, np.int64)
    (dtype('int16'), dtype('float64'))
    """
    return np.promote_types(_dtype_like(type1), _dtype_like(type2))


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether dtype `arg1` is `arg2` or below it in NumPy's hierarchy (`np.floating`,
    `np.integer`, ...); a traced value stands for its dtype.

    >>> issubdtype(np.float32, np.floating), issubdtype(np.ones(2, int).dtype, np.inexact)
    (True, False)
    """
    return bool(np.issubdtype(_dtype_like(arg1), _dtype_like(arg2)))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether NumPy converts dtype `from_` to `to` under the `casting` rule (NumPy 2:
    a dtype, an array or a traced value; not a Python scalar).

    >>> can_cast(np.int8, np.float32), can_cast(np.float64, np.int32, "same_kind")
    (True, False)
    """
    if isinstance(from_, (bool, int, float, complex)) and not isinstance(from_, np.generic):
        raise TypeError("rune_jit.numpy.can_cast: from_ is a Python "
                        f"{type(from_).__name__}; NumPy 2 takes a dtype or an array here "
                        "(use result_type for a Python scalar's effect)")
    return bool(np.can_cast(_dtype_like(from_), _dtype_like(to), casting))


class _DtypeMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, np.dtype)

    def __subclasscheck__(cls, sub: type) -> bool:
        return isinstance(sub, type) and issubclass(sub, np.dtype)


class dtype(metaclass=_DtypeMeta):  # noqa: N801 (NumPy's name)
    """NumPy's dtype of a dtype-like (a type, a name, an array, a traced value): a
    `numpy.dtype`, which is also what `isinstance(d, rnp.dtype)` checks.

    >>> import rune_jit as rune
    >>> dtype("float32"), rune.jit(lambda x: x + (dtype(x) == np.int8))(np.int8(1))
    (dtype('float32'), array(2, dtype=int8))
    """

    def __new__(cls, obj: Any, align: bool = False, copy: bool = False) -> np.dtype:
        if isinstance(obj, (Tracer, np.ndarray)):
            return obj.dtype
        return np.dtype(obj, align=align, copy=copy)


def finfo(dtype: Any) -> np.finfo:
    """NumPy's machine limits of a float dtype, of an array's or a traced value's dtype.

    >>> print(finfo(np.float32).eps == np.float32(2.0 ** -23), finfo(np.ones(2)).bits)
    True 64
    """
    return np.finfo(_of(dtype))


def iinfo(int_type: Any) -> np.iinfo:
    """NumPy's limits of an integer dtype, of an array's or a traced value's dtype.

    >>> print(iinfo(np.int8).min, iinfo(np.ones(2, np.uint16)).max)
    -128 65535
    """
    return np.iinfo(_of(int_type))


def _of(x: Any) -> Any:
    return x.dtype if isinstance(x, (Tracer, np.ndarray)) else x


def isscalar(element: Any) -> bool:
    """JAX's isscalar: NumPy's scalars (numbers, NumPy scalars, strings) and 0-d arrays,
    traced ones included (NumPy says False of a 0-d array; rune_jit.numpy's results for a
    number are 0-d arrays, so that code reading a number keeps its meaning).

    >>> isscalar(1.0), isscalar(np.array(2.0)), isscalar(np.ones(2)), isscalar([1])
    (True, True, False, False)
    """
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Tracer)):
        return element.ndim == 0
    return False


__all__ = ["can_cast", "dtype", "finfo", "iinfo", "isscalar", "issubdtype", "ndim",
           "promote_types", "result_type", "shape", "size"]
