"""The thread speedup (issue 17): rune_jit on one thread against all of them, with a control.

W4, W4s and a Mandelbrot set of vmapped-iterate lanes are timed on one thread
(`threads.limit(1)`, the same compiled code running every region inline) and on all
of RUNE_JIT_NUM_THREADS, taking turns; the ratio is one thread's time over all threads'.
The control is NumPy doing the same split: `np.sin` over an array's two halves, in one
thread and in two (NumPy releases the GIL), so that a busy host shows in the table: on
an idle one its ratio is near 2. The load average is recorded before and after.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import harness
import rune_impl
import workloads as wl

MANDELBROT = {"full": 1000, "quick": 300, "tiny": 30}  # pixels a side: 1e6 lanes at full
MAX_ITER = 100
CONTROL = {"full": 2_000_000, "quick": 200_000, "tiny": 20_000}  # elements of the control


def mandelbrot(c: np.ndarray) -> np.ndarray:
    """Escape counts of z -> z*z + c over complex c, as a vmapped iterate (at most
    MAX_ITER steps): MB's lanes."""
    import rune_jit as rune

    return rune.vmap(rune_impl.escape_steps(MAX_ITER))(c)


def _rune_runs(name: str, mode: str) -> tuple[dict, str]:
    """{"one thread": call, "all threads": call} for a workload, and its size."""
    import rune_jit as rune
    from rune_jit._src.backend.cpu.runtime import threads

    if name == "Mandelbrot":
        side = MANDELBROT[mode]
        f, args = rune.jit(mandelbrot), (wl.mandelbrot_grid(side),)
        call, size = (lambda: f(*args)), f"{side}x{side} lanes, at most {MAX_ITER} steps"
    else:
        inp = wl.inputs(wl.BY_NAME[name], mode)
        call, size = rune_impl.IMPLS[name](inp), f"{inp.n} lanes"

    def alone():
        with threads.limit(1):
            return call()
    return {"one thread": alone, "all threads": call}, size


def _numpy_runs(mode: str, pool: ThreadPoolExecutor) -> dict:
    x = np.random.default_rng(0).uniform(-3, 3, CONTROL[mode])
    out = np.empty_like(x)
    halves = [(x[:x.size // 2], out[:x.size // 2]), (x[x.size // 2:], out[x.size // 2:])]

    def one():
        for h, o in halves:
            np.sin(h, out=o)

    def two():
        list(pool.map(lambda ho: np.sin(*ho), halves))
    return {"one thread": one, "all threads": two}


def speedups(mode: str, repeats: int, min_sample: float) -> dict:
    """Rows of the thread speedup: each workload's two medians and their ratio."""
    from rune_jit._src import config

    load = {"load_average_before": os.getloadavg()[0]}
    rows = {}
    for name in ("W4", "W4s", "Mandelbrot"):
        runs, size = _rune_runs(name, mode)
        same = all(np.array_equal(a, b) for a, b in zip(
            harness.leaves(runs["one thread"]()), harness.leaves(runs["all threads"]())))
        rows[name] = _row(harness.steady(runs, repeats, min_sample), size, same)
    with ThreadPoolExecutor(2) as pool:
        rows["NumPy control"] = _row(harness.steady(_numpy_runs(mode, pool), repeats,
                                                    min_sample),
                                     f"np.sin over 2 halves of {CONTROL[mode]} doubles", True)
    load["load_average_after"] = os.getloadavg()[0]
    return {"threads": config.num_threads, "cpus": len(os.sched_getaffinity(0)), **load,
            "rows": rows}


def _row(stats: dict, size: str, identical: bool) -> dict:
    one, every = stats["one thread"]["median"], stats["all threads"]["median"]
    return {"size": size, "one_thread_s": one, "all_threads_s": every,
            "ratio": one / every, "identical": identical}
