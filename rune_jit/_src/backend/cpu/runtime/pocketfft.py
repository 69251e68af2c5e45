"""NumPy's pocketfft for compiled code: the inner loops of numpy.fft's gufuncs.

numpy.fft computes every transform with five gufuncs of `numpy.fft._pocketfft_umath`
(fft, ifft, rfft_n_even, rfft_n_odd, irfft), whose loops are C++ pocketfft (BSD-3) with
its thread-safe plan cache, called without the GIL. Compiled code calls the same loops,
through the addresses NumPy's ufunc object holds (`functions` and `data` of the public
`PyUFuncObject` of numpy/ufuncobject.h), so jit's transforms are NumPy's, on every
platform NumPy ships, with no library of our own. The struct's fields are checked
against what the ufunc says of itself (its name, its numbers of operands and loops,
each loop's dtypes) before any address is used: a NumPy laid out otherwise is a clear
error, never a call to the wrong place.
"""

from __future__ import annotations

import ctypes
import re
from functools import lru_cache

import numpy as np
from numpy.fft import _pocketfft_umath

PREFIX = "rune_pocketfft_"
GUFUNCS = ("fft", "ifft", "rfft_n_even", "rfft_n_odd", "irfft")
SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


class _UFuncObject(ctypes.Structure):
    # numpy/ufuncobject.h, PyUFuncObject's leading fields
    _fields_ = [("head", ctypes.c_byte * object.__basicsize__),  # PyObject_HEAD
                ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)),
                ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int),
                ("name", ctypes.c_char_p), ("types", ctypes.POINTER(ctypes.c_byte))]


def symbol(gufunc: str, real: np.dtype, data: bool = False) -> str:
    """The name compiled code calls a loop by; with `data`, the name of an int64 that
    holds the address of the loop's data (NULL for some: a symbol cannot be NULL)."""
    return f"{PREFIX}{gufunc}_{SUFFIX[np.dtype(real)]}{'_data' if data else ''}"


def _loops(name: str) -> dict[str, int]:
    """{symbol: address} of one gufunc's float32 and float64 loops and their data."""
    uf = getattr(_pocketfft_umath, name)
    s = _UFuncObject.from_address(id(uf))
    if (s.nin, s.nout, s.nargs, s.ntypes) != (uf.nin, uf.nout, uf.nargs, uf.ntypes) or \
            s.name != name.encode():
        raise RuntimeError(f"rune_jit: numpy {np.__version__}'s numpy.fft gufunc {name} is "
                           "not laid out as NumPy 2's: compiled code cannot call its FFT "
                           "(run this program with RUNE_JIT_BACKEND=interpret)")
    found = {}
    for i, types in enumerate(uf.types):
        codes = types.replace("->", "")
        if [s.types[i * uf.nargs + k] for k in range(uf.nargs)] != \
                [np.dtype(c).num for c in codes]:
            raise RuntimeError(f"rune_jit: numpy.fft gufunc {name}'s loop {i} is not "
                               f"{types} where NumPy says it is")
        real = np.dtype(codes[1])  # the scale factor's dtype: the loop's precision
        if real in SUFFIX:
            found[symbol(name, real)] = s.functions[i]
            holder = ctypes.c_void_p(s.data[i] if s.data else None)  # no data: NULL
            _HOLDERS.append(holder)
            found[symbol(name, real, data=True)] = ctypes.addressof(holder)
    return found


_HOLDERS: list[ctypes.c_void_p] = []  # alive as long as the process


@lru_cache(maxsize=None)
def _all() -> dict[str, int]:
    return {k: v for name in GUFUNCS for k, v in _loops(name).items()}


_NAMES = re.compile(rb"rune_pocketfft_[a-z0-9_]+")


def addresses(obj: bytes) -> dict[str, int]:
    """The address of each loop (and its data) that object code names."""
    table = _all()
    return {raw.decode(): table[raw.decode()] for raw in set(_NAMES.findall(obj))
            if raw.decode() in table}


def needed_by(obj: bytes) -> bool:
    return PREFIX.encode() in obj
