"""The five dtypes and NumPy 2 (NEP 50) promotion with weak Python scalars."""

from __future__ import annotations

import numpy as np

float64 = np.dtype(np.float64)
float32 = np.dtype(np.float32)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
bool_ = np.dtype(np.bool_)

SUPPORTED = (float64, float32, int64, int32, bool_)

# A weak operand takes part in promotion as the Python scalar of its kind would.
_WEAK_STAND_IN = {"f": 0.0, "i": 0, "b": False}


def name(dtype: np.dtype) -> str:
    """The dtype as NumPy names it (float64, int32, bool): in the IR and in messages."""
    return np.dtype(dtype).name


def check_supported(dtype: np.dtype, where: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED:
        raise TypeError(
            f"{where}: dtype {dtype} is not supported; rune_jit supports "
            "float64, float32, int64, int32 and bool"
        )
    return dtype


def python_scalar_dtype(value: bool | int | float) -> np.dtype:
    """The dtype NumPy gives a Python scalar standing alone."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise OverflowError(f"Python int {value} does not fit in int64")
        return int64
    if isinstance(value, float):
        return float64
    raise TypeError(f"{type(value).__name__} is not a number rune_jit accepts")


def result_type(*operands: tuple[np.dtype, bool]) -> np.dtype:
    """Promote (dtype, weak) pairs as NumPy 2 promotes arrays and Python scalars."""
    args = [_WEAK_STAND_IN[d.kind] if weak else d for d, weak in operands]
    return np.result_type(*args)
