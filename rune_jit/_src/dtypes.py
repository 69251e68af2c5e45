"""The supported dtypes and NumPy 2 (NEP 50) promotion with weak Python scalars."""

from __future__ import annotations

import numpy as np

float64 = np.dtype(np.float64)
float32 = np.dtype(np.float32)
float16 = np.dtype(np.float16)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
int16 = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint64 = np.dtype(np.uint64)
uint32 = np.dtype(np.uint32)
uint16 = np.dtype(np.uint16)
uint8 = np.dtype(np.uint8)
bool_ = np.dtype(np.bool_)
complex128 = np.dtype(np.complex128)
complex64 = np.dtype(np.complex64)

FLOATS = (float64, float32, float16)
COMPLEXES = (complex128, complex64)
SIGNED = (int64, int32, int16, int8)
UNSIGNED = (uint64, uint32, uint16, uint8)
SUPPORTED = FLOATS + COMPLEXES + SIGNED + UNSIGNED + (bool_,)
INEXACT = "fc"  # the kinds of dtypes that have tangents and derivatives
SUPPORTED_NAMES = ", ".join(d.name for d in SUPPORTED[:-1]) + " and bool"

# A weak operand takes part in promotion as the Python scalar of its kind would.
_WEAK_STAND_IN = {"c": 0j, "f": 0.0, "i": 0, "u": 0, "b": False}


def name(dtype: np.dtype) -> str:
    """The dtype as NumPy names it (float64, uint8, bool): in the IR and in messages."""
    return np.dtype(dtype).name


def check_supported(dtype: np.dtype, where: str) -> np.dtype:
    """`dtype` if rune_jit supports it, else a TypeError that says `where` and lists them.

    >>> check_supported(np.dtype("uint8"), "x").name
    'uint8'
    """
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED:
        raise TypeError(f"{where}: dtype {name(dtype)} is not supported; rune_jit supports "
                        f"{SUPPORTED_NAMES}")
    return dtype


def python_scalar_dtype(value: bool | int | float | complex) -> np.dtype:
    """The dtype NumPy gives a Python scalar standing alone (an int that fits int64)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise OverflowError(f"Python int {value} does not fit in int64")
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    raise TypeError(f"{type(value).__name__} is not a number rune_jit accepts")


def result_type(*operands: tuple[np.dtype, bool]) -> np.dtype:
    """Promote (dtype, weak) pairs as NumPy 2 promotes arrays and Python scalars.

    >>> result_type((uint8, False), (int64, True)).name  # uint8 array + Python int
    'uint8'
    >>> result_type((uint64, False), (int64, False)).name
    'float64'
    >>> result_type((float32, False), (complex128, True)).name  # float32 array + 1j
    'complex64'
    """
    args = [_WEAK_STAND_IN[d.kind] if weak else d for d, weak in operands]
    return np.result_type(*args)


def float_for(dtype: np.dtype) -> np.dtype:
    """The float dtype NumPy computes `sin`, `sqrt`, ... of `dtype` in: the smallest float
    that holds its values (float16 for bool, int8 and uint8; float32 for int16 and uint16;
    float64 for wider integers).

    >>> float_for(int16).name
    'float32'
    """
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in INEXACT else np.result_type(dtype, float16)


def int_bounds(dtype: np.dtype) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def is_inexact(dtype: np.dtype) -> bool:
    """Whether values of `dtype` have tangents (a float or a complex dtype).

    >>> is_inexact(complex64), is_inexact(int32)
    (True, False)
    """
    return np.dtype(dtype).kind in INEXACT


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the real and imaginary parts of `dtype` (itself if it is real).

    >>> real_dtype(complex64).name
    'float32'
    """
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are `dtype` (float16 widens to complex64, as NumPy).

    >>> complex_dtype(float32).name
    'complex64'
    """
    return np.result_type(np.dtype(dtype), complex64)
