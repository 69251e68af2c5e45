"""What a value of a call is: Python scalars (weak), NumPy arrays and scalars, and
objects offering NumPy's array protocols or DLPack, as NumPy converts them. The
arguments of a call (call/arguments.py) and the operands of rune_jit.numpy
(numpy/_core.py) are both read this way."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import python_scalar_dtype

PY_SCALARS = (bool, int, float, complex)


def is_python_scalar(x: Any) -> bool:
    """A weak operand. np.float64 subclasses float, but NumPy scalars are strong (NEP 50)."""
    return isinstance(x, PY_SCALARS) and not isinstance(x, np.generic)


# ndarray subclasses whose values and operations are exactly an ndarray's: a memmap only
# says where its memory is. Any other subclass may mean more than its data (a mask, a
# matrix's products, units), which rune_jit would silently drop, so it is rejected.
PLAIN_SUBCLASSES = (np.memmap,)
ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__")


def array_of(x: Any, what: str) -> np.ndarray | None:
    """`x` as an ndarray if it is an array, else None. Arrays are ndarrays (and the
    subclasses in PLAIN_SUBCLASSES), NumPy scalars, and objects that are not ndarrays but
    offer NumPy's array protocols or DLPack (a JAX array, an array API array), converted
    as np.asarray (np.from_dlpack) converts them. Another ndarray subclass is a TypeError
    that calls it `what`."""
    kind = type(x)
    if isinstance(x, np.ndarray):
        if kind is not np.ndarray and kind not in PLAIN_SUBCLASSES:
            raise TypeError(
                f"{what} is a {kind.__module__}.{kind.__qualname__}, a subclass of "
                "numpy.ndarray, which rune_jit does not accept: it would compute with the "
                "data alone and drop what the subclass adds (a mask, a matrix's products, "
                "units). Pass np.asarray(...) of it to compute with its data")
        return np.asarray(x)
    if isinstance(x, np.generic) or any(hasattr(kind, p) for p in ARRAY_PROTOCOLS):
        return np.asarray(x)
    if hasattr(kind, "__dlpack__"):
        return np.from_dlpack(x)
    return None


def as_value(x: Any) -> Any:
    """Python scalars become 0-d arrays of NumPy's default dtype for them."""
    if isinstance(x, PY_SCALARS):
        return np.asarray(x, python_scalar_dtype(x))
    return x
