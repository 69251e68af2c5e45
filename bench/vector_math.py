"""ns per element of a jitted map of one math function over 10^6 elements (issue 37).

    python bench/vector_math.py [--functions exp,log] [--n 1000000] [--repeat 15]

One row per function and dtype: rune_jit's own code, rune_jit with RUNE_JIT_MATH=libmvec
(glibc's libmvec in loops; both in subprocesses, since the setting is read at import),
NumPy (SciPy for erf, erfc, erfinv, gammaln and digamma), and JAX and Numba where
importable (Numba has no erfinv or digamma: those cells are nan). The best of `repeat` calls, each on the same
input (a uniform sample of the function's usual range), on one thread
(RUNE_JIT_NUM_THREADS=1, XLA's and Numba's elementwise loops run on one too).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

# name -> the range the inputs are drawn from (uniform), finite results in float32
FUNCTIONS = {"exp": (-80, 80), "exp2": (-120, 120), "expm1": (-2, 2), "log": (1e-3, 1e3),
             "log2": (1e-3, 1e3), "log10": (1e-3, 1e3), "log1p": (-0.9, 100),
             "sinh": (-80, 80), "cosh": (-80, 80), "pow": (0.1, 10),
             "sin": (-10, 10), "cos": (-10, 10), "tan": (-10, 10), "arctan": (-10, 10),
             "arctan2": (-10, 10), "arcsin": (-1, 1), "arccos": (-1, 1),
             "arcsinh": (-100, 100), "arccosh": (1, 100), "arctanh": (-0.99, 0.99),
             "cbrt": (-100, 100), "erf": (-4, 4), "erfc": (-4, 8),
             "erfinv": (-1, 1), "gammaln": (0.1, 20), "digamma": (0.1, 20)}
# Numba's kernels call Python's math module, which has these under other names or not
MATH_NAMES = {"gammaln": "lgamma", "erfinv": None, "digamma": None}
BINARY = ("pow", "arctan2")
DTYPES = ("float64", "float32")
MODES = ("own", "libmvec")


def inputs(name: str, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    low, high = FUNCTIONS[name]
    count = 2 if name in BINARY else 1
    return tuple(rng.uniform(low, high, n).astype(dtype) for _ in range(count))


def best_ns(fn, args: tuple, n: int, repeat: int) -> float:
    fn(*args)  # compiles
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times) / n * 1e9


def numpy_name(name: str) -> str:
    return {"pow": "power"}.get(name, name)


def find(numpy_like, special, name: str):
    """`name` in a NumPy-like module, else in its scipy.special (erf, erfc)."""
    return getattr(numpy_like, numpy_name(name), None) or getattr(special, name)


def rune_rows(functions: list[str], n: int, repeat: int) -> dict:
    import rune_jit as rune
    import rune_jit.numpy as rnp

    return {f"{name} {dtype}": best_ns(rune.jit(find(rnp, rune.scipy.special, name)),
                                       inputs(name, dtype, n), n, repeat)
            for name in functions for dtype in DTYPES}


def peer_rows(peer: str, functions: list[str], n: int, repeat: int) -> dict:
    if peer == "numpy":
        import scipy.special

        wrap = lambda name: find(np, scipy.special, name)  # noqa: E731
    elif peer == "jax":
        import jax
        import jax.numpy as jnp
        import jax.scipy.special

        jax.config.update("jax_enable_x64", True)
        wrap = lambda name: (lambda f: lambda *a: f(*a).block_until_ready())(  # noqa: E731
            jax.jit(find(jnp, jax.scipy.special, name)))
    else:
        import numba

        wrap = lambda name: numba.vectorize(["float64(float64)", "float32(float32)"]  # noqa: E731
                                            if name not in BINARY else
                                            ["float64(float64, float64)",
                                             "float32(float32, float32)"])(
            _numba_kernel(name))
    return {f"{name} {dtype}": best_ns(wrap(name), inputs(name, dtype, n), n, repeat)
            if peer != "numba" or MATH_NAMES.get(name, name) else float("nan")
            for name in functions for dtype in DTYPES}


def _numba_kernel(name: str):
    import math

    fn = find(np, math, MATH_NAMES.get(name, name))
    return (lambda x, y: fn(x, y)) if name in BINARY else (lambda x: fn(x))


def in_subprocess(mode: str, functions: list[str], n: int, repeat: int) -> dict:
    env = {**os.environ, "RUNE_JIT_MATH": mode, "RUNE_JIT_NUM_THREADS": "1"}
    cmd = [sys.executable, __file__, "--rune-only", "--functions", ",".join(functions),
           "--n", str(n), "--repeat", str(repeat)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--rune-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    functions = args.functions.split(",")
    if args.rune_only:
        print(json.dumps(rune_rows(functions, args.n, args.repeat)))
        return
    columns = {f"rune_jit ({mode})": in_subprocess(mode, functions, args.n, args.repeat)
               for mode in MODES}
    for peer in ("numpy", "jax", "numba"):
        try:
            columns[peer] = peer_rows(peer, functions, args.n, args.repeat)
        except ImportError:
            print(f"{peer}: not importable, left out")
    print("| function | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for row in columns["rune_jit (own)"]:
        print(f"| {row} | " + " | ".join(f"{c[row]:.2f}" for c in columns.values()) + " |")


if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                          "intra_op_parallelism_threads=1")
    main()
