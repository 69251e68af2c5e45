"""Settings read from the environment once, at import; `backend` may be set later."""

from __future__ import annotations

import ctypes
import os
import sys
import types

# Verify every region a trace or pass builds (the test suite turns this on).
verify_regions: bool = os.environ.get("RUNE_JIT_VERIFY", "") not in ("", "0")

# "native" runs each loop called outside jit as compiled code; "interpret" runs
# everything through the NumPy interpreter (the oracle the tests compare with); "iree"
# compiles the programs' MLIR with IREE for RUNE_JIT_IREE_DEVICE (backend/iree.py).
BACKENDS = ("native", "interpret", "iree")
_backend: str = os.environ.get("RUNE_JIT_BACKEND", "native")
if _backend not in BACKENDS:
    raise ValueError(f"RUNE_JIT_BACKEND must be one of {', '.join(map(repr, BACKENDS))}, "
                     f"got {_backend!r}")
# 1 while `backend` is not "native": jitted functions' native entries (backend/cpu/runtime/entry.py)
# read it and hand their calls to the Python path, which runs the backend chosen
NOT_NATIVE = ctypes.c_int32(_backend != "native")


class _Settings(types.ModuleType):
    """This module, with `backend` a property: setting it tells the native entries."""

    @property
    def backend(self) -> str:
        """The backend jitted calls and loops run on: "native", "interpret" or "iree"."""
        return _backend

    @backend.setter
    def backend(self, name: str) -> None:
        global _backend
        _backend = name
        NOT_NATIVE.value = name != "native"

    def update(self, name: str, value: object) -> None:
        """Set one of JAX's options where it means something here (`jax.config.update`):
        `rune.config.update("jax_enable_x64", True)` is accepted and changes nothing
        (rune_jit is float64 already); rune_jit/_src/options.py lists the others."""
        from . import options

        options.update(name, value)

    def __getattr__(self, name: str) -> object:
        if name.startswith("jax_"):  # JAX's options read as attributes: config.jax_enable_x64
            from . import options

            return options.read(name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _Settings


def _num_threads() -> int:
    """RUNE_JIT_NUM_THREADS: threads compiled code runs independent lanes on (the caller
    among them); default the CPUs this process may use."""
    raw = os.environ.get("RUNE_JIT_NUM_THREADS", "").strip()
    if not raw:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"RUNE_JIT_NUM_THREADS must be a positive integer, got {raw!r}")
    return n


# RUNE_JIT_DEBUG_NANS=1: each operation whose result has a NaN where its operands had none
# fails the call, naming its line, the lane and the loop step (ops/nan_checks.py). Read
# once: programs traced with and without the checks are different programs.
debug_nans: bool = os.environ.get("RUNE_JIT_DEBUG_NANS", "") not in ("", "0")

# Repeated layers of a traced function (the same computation applied K times in a row)
# become a scan over them, so later stages see one (ops/repeated_layers.py);
# RUNE_JIT_FOLD_LAYERS=0 keeps them as traced.
fold_layers: bool = os.environ.get("RUNE_JIT_FOLD_LAYERS", "") != "0"

# Threads compiled code may use (backend/cpu/runtime/threads.py); 1 compiles serial code only.
num_threads: int = _num_threads()

# The CPU compiled code is generated for (RUNE_JIT_CPU, as Numba's NUMBA_CPU_NAME): an
# LLVM CPU name (x86-64-v3, haswell, skylake-avx512, generic...) or "host", this machine's
# (the default); RUNE_JIT_CPU_FEATURES adds or removes LLVM features ("+avx2,-avx512f").
# Checked when the native backend loads, at the first compiled call (ValueError naming a
# name or feature LLVM does not know: rune_jit/_src/target_cpu.py); code that needs a
# feature this machine lacks may be read (`.lower(...).asm`) but never run.
cpu: str = os.environ.get("RUNE_JIT_CPU", "").strip() or "host"
cpu_features: str = os.environ.get("RUNE_JIT_CPU_FEATURES", "").strip()

# Where compiled code's transcendental functions come from: "own", the project's vector
# math (backend/cpu/codegen/vecmath/, within 1 ulp), or "libmvec", glibc's libm and libmvec (the
# old path, kept to compare with: docs/accuracy.md gives both).
math: str = os.environ.get("RUNE_JIT_MATH", "").strip() or "own"
if math not in ("own", "libmvec"):
    raise ValueError(f"RUNE_JIT_MATH must be 'own' or 'libmvec', got {math!r}")
