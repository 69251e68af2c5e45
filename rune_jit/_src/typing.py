"""The unions behind `rune_jit.typing`, as JAX's: what rune_jit accepts as an array (its
arrays, NumPy scalars, Python numbers) and as a dtype (names, types, dtypes)."""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from .array_type import Array


class SupportsDType(Protocol):
    """Anything with a `dtype` attribute (an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
