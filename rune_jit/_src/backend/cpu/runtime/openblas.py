"""scipy-openblas64's library (LAPACK for compiled code), loaded once per process.

It is loaded the first time a program that calls it is lowered or linked, with its
symbols kept out of the process's global scope (RTLD_LOCAL): `llvm.link` gives compiled
code the address of each `scipy_` symbol it names. Loaded globally, the library's few
unprefixed LAPACK internals (`claqz0_`, `clarft_lvl2_`, ..., 64-bit integers) took the
place of other libraries' own 32-bit ones: JAX's least squares failed after rune_jit's.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path

PREFIX = "scipy_"


@lru_cache(maxsize=None)
def library() -> ctypes.CDLL:
    """scipy-openblas64's library, loaded once, its symbols local to it."""
    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is None or spec.origin is None:
        raise ImportError("rune_jit: compiled linear algebra calls LAPACK from the package "
                          "scipy-openblas64, which is not installed (pip install "
                          "scipy-openblas64)")
    libdir = Path(spec.origin).parent / "lib"
    path = next(iter(sorted(libdir.glob("libscipy_openblas*.so*"))), None)
    if path is None:
        raise ImportError(f"rune_jit: no libscipy_openblas library in {libdir}")
    lib = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        # One thread per call: compiled code calls LAPACK once per matrix of a batch, for
        # which OpenBLAS's threads only wait on each other (100 eighs of 64 x 64: 466 ms
        # threaded, 99 single on 2 busy cores). NumPy's and SciPy's wheels carry copies
        # of their own, whose threads this leaves alone.
        lib.scipy_openblas_set_num_threads64_(ctypes.c_int(1))
    return lib


_NAMES = re.compile(rb"scipy_[A-Za-z0-9_]+")


def addresses(obj: bytes) -> dict[str, int]:
    """The address of each of the library's symbols that object code names (its string
    table holds them whole, each ended by a NUL)."""
    lib = library()
    found = {}
    for raw in set(_NAMES.findall(obj)):
        fn = getattr(lib, raw.decode(), None)
        if fn is not None:
            found[raw.decode()] = ctypes.cast(fn, ctypes.c_void_p).value
    return found


def needed_by(obj: bytes) -> bool:
    return PREFIX.encode() in obj
