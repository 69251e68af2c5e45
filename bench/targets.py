"""The CPU targets the bench runs at (issue 41, items 2 and 3): each peer told the same
instruction set through its own setting, in a process of its own.

- `host`: every peer compiles for the machine it runs on.
- `avx2`: rune_jit with RUNE_JIT_CPU=haswell, Numba with NUMBA_CPU_NAME=haswell, JAX with
  XLA_FLAGS=--xla_cpu_max_isa=AVX2, C with -march=haswell (RUNE_BENCH_MARCH, read by
  peers/c_impl.py), OpenBLAS with OPENBLAS_CORETYPE=Haswell.

Both unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE first: a user's machine does not set
them, and OpenBLAS chooses its kernel by itself without them. These settings are read when
each library is imported, so `ensure` re-runs the bench in a process with the target's
environment (its first-call processes inherit it); `blas_kernels` records the kernel each
OpenBLAS then loaded.

    >>> env = environment("avx2", {"OPENBLAS_CORETYPE": "Zen", "XLA_FLAGS": "--a=1"})
    >>> env["RUNE_JIT_CPU"], env["OPENBLAS_CORETYPE"], env["XLA_FLAGS"]
    ('haswell', 'Haswell', '--a=1 --xla_cpu_max_isa=AVX2')
    >>> "OPENBLAS_CORETYPE" in environment("host", {"OPENBLAS_CORETYPE": "Zen"})
    False
"""

from __future__ import annotations

import ctypes
import os
import sys

TARGETS = {
    "host": {},
    "avx2": {"RUNE_JIT_CPU": "haswell", "NUMBA_CPU_NAME": "haswell",
             "XLA_FLAGS": "--xla_cpu_max_isa=AVX2", "RUNE_BENCH_MARCH": "haswell",
             "OPENBLAS_CORETYPE": "Haswell"},
}
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
MARKER = "RUNE_BENCH_TARGET"  # set in the process that runs at a target's environment


def environment(target: str, base: dict) -> dict:
    """`base` (the environment) with the target's settings: the OpenBLAS variables unset,
    then the target's set (XLA_FLAGS appended to those given)."""
    env = {k: v for k, v in base.items() if k not in UNSET}
    for key, value in TARGETS[target].items():
        given = env.get(key, "") if key == "XLA_FLAGS" else ""
        env[key] = f"{given} {value}".strip()
    env[MARKER] = target
    return env


def ensure(target: str, argv: list[str]) -> None:
    """Re-run this script in the target's environment unless this process is that run
    (os.execve: the same process id, output and exit status)."""
    if os.environ.get(MARKER) == target:
        return
    os.execve(sys.executable, [sys.executable, sys.argv[0], *argv],
              environment(target, dict(os.environ)))


def blas_kernels() -> dict:
    """The core type each OpenBLAS loaded in this process runs (openblas_get_corename,
    under its plain name or scipy-openblas's prefix and suffix), by library file:
    threadpoolctl reports the same, but is not a dependency of the bench."""
    found = {}
    for path in _loaded("openblas"):
        lib = ctypes.CDLL(path)
        for name in ("openblas_get_corename", "scipy_openblas_get_corename64_",
                     "scipy_openblas_get_corename", "openblas_get_corename64_"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                found[os.path.basename(path)] = fn().decode()
                break
    return found


def _loaded(fragment: str) -> list[str]:
    """The shared libraries mapped into this process whose file name has `fragment`."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if ".so" in line}
    except OSError:  # not Linux: nothing recorded
        return []
    return sorted(p for p in paths if fragment in os.path.basename(p).lower())
