"""scipy-openblas64's library (LAPACK for compiled code), loaded once per process.

It is loaded globally (RTLD_GLOBAL) the first time a program that calls it is lowered or
linked (`llvm.link` asks for it when the object names a `scipy_` symbol), so compiled
code finds its symbols as it finds libm's: in the process's global scope.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

import llvmlite.binding as llvm

PREFIX = "scipy_"


@lru_cache(maxsize=None)
def library() -> ctypes.CDLL:
    """scipy-openblas64's library, loaded into the global scope (once)."""
    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is None or spec.origin is None:
        raise ImportError("rune_jit: compiled linear algebra calls LAPACK from the package "
                          "scipy-openblas64, which is not installed (pip install "
                          "scipy-openblas64)")
    libdir = Path(spec.origin).parent / "lib"
    path = next(iter(sorted(libdir.glob("libscipy_openblas*.so*"))), None)
    if path is None:
        raise ImportError(f"rune_jit: no libscipy_openblas library in {libdir}")
    lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        # One thread per call: compiled code calls LAPACK once per matrix of a batch, for
        # which OpenBLAS's threads only wait on each other (100 eighs of 64 x 64: 466 ms
        # threaded, 99 single on 2 busy cores). NumPy's and SciPy's wheels carry copies
        # of their own, whose threads this leaves alone.
        lib.scipy_openblas_set_num_threads64_(ctypes.c_int(1))
    llvm.load_library_permanently(str(path))  # where LLJIT looks, when it links
    return lib


def needed_by(obj: bytes) -> bool:
    return PREFIX.encode() in obj
