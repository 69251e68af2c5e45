"""ns per element of one math function mapped over 10^6 elements, by peer.

    python bench/vector_math.py [name ...]

Columns: rune_jit's own vector math (backend/cpu/vecmath), rune_jit calling glibc's
libmvec (RUNE_JIT_MATH=libmvec, read at import: a subprocess), NumPy, and JAX and Numba
where importable. One row per function and dtype (float64, float32); each figure is the
best of REPEATS runs of a jitted map (compiled once before), on one thread. The default
rows are every function of vecmath.FUNCTIONS with an input range in DOMAINS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Callable

import numpy as np

N = 10 ** 6
REPEATS = 15
DTYPES = ("float64", "float32")
# each argument's range: the reduced range of the function and some way past it
DOMAINS = {"sin": [(-10.0, 10.0)], "cos": [(-10.0, 10.0)], "tan": [(-10.0, 10.0)],
           "arctan": [(-10.0, 10.0)], "arctan2": [(-10.0, 10.0), (-10.0, 10.0)],
           "arcsin": [(-1.0, 1.0)], "arccos": [(-1.0, 1.0)]}
PEERS = ("own", "libmvec", "numpy", "jax", "numba")


def inputs(name: str, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.uniform(lo, hi, N).astype(dtype) for lo, hi in DOMAINS[name]]


def best_ns(fn: Callable, args: list[np.ndarray]) -> float:
    fn(*args)  # compile
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best / N * 1e9


def mapped(peer: str, name: str) -> Callable | None:
    """The peer's jitted map of `name`, or None if the peer is not importable."""
    if peer in ("own", "libmvec"):
        import rune_jit as rune
        import rune_jit.numpy as rnp
        return rune.jit(getattr(rnp, name))
    if peer == "numpy":
        return getattr(np, name)
    try:
        if peer == "jax":
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_enable_x64", True)
            f = jax.jit(getattr(jnp, name))
            return lambda *a: f(*a).block_until_ready()
        import numba
        ufunc = getattr(np, name)
        return numba.njit(lambda *a: ufunc(*a))
    except ImportError:
        return None


def column(peer: str, names: list[str]) -> dict[str, float | None]:
    """ns per element of each name and dtype ("sin float64") for one peer."""
    out = {}
    for name in names:
        fn = mapped(peer, name)
        for dtype in DTYPES:
            out[f"{name} {dtype}"] = None if fn is None else best_ns(fn, inputs(name, dtype))
    return out


def run_column(peer: str, names: list[str]) -> dict[str, float | None]:
    """`column` in a fresh process (rune_jit reads RUNE_JIT_MATH at import)."""
    env = dict(os.environ, RUNE_JIT_MATH="libmvec" if peer == "libmvec" else "own",
               RUNE_JIT_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--column", peer, *names], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main(names: list[str]) -> None:
    from rune_jit.backend.cpu import vecmath

    names = names or [n for n in sorted(vecmath.FUNCTIONS) if n in DOMAINS]
    table = {peer: run_column(peer, names) for peer in PEERS}
    print("| function | " + " | ".join(PEERS) + " |")
    print("|---|" + "---|" * len(PEERS))
    for row in table["own"]:
        cells = [("n/a" if table[p][row] is None else f"{table[p][row]:.2f}") for p in PEERS]
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--column"]:
        print(json.dumps(column(sys.argv[2], sys.argv[3:])))
    else:
        main(sys.argv[1:])
