"""A parameter sweep on Dask's distributed scheduler (docs/scaling.md): the escape time
of 9 * 10^6 points of the Mandelbrot set's plane, a vmapped `iterate` whose lanes stop on
their own, in one process (on all its cores) and then in chunks of rows on a
LocalCluster of worker processes, each given its share of the cores
(RUNE_JIT_NUM_THREADS), each building its own rows of the plane.

    pip install -e '.[dask]' && python docs/dask_sweep.py [workers]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import rune_jit as rune

SIDE = 3000  # points a side of the plane


def escape(c_re, c_im):
    """Steps until |z| > 2 under z' = z² + c (at most 1000)."""
    def step(s):
        re, im, n = s
        return re * re - im * im + c_re, 2.0 * re * im + c_im, n + 1
    return rune.iterate(step, (np.float64(0.0), np.float64(0.0), np.int64(0)),
                        until=lambda s: (s[0] * s[0] + s[1] * s[1] > 4.0) | (s[2] >= 1000),
                        max_steps=1000)[2]


escape_all = rune.jit(rune.vmap(escape))


def rows(first: int, end: int) -> np.ndarray:
    """The escape times of rows first..end of the plane."""
    re, im = np.meshgrid(np.linspace(-2.0, 0.6, SIDE), np.linspace(-1.2, 1.2, SIDE)[first:end])
    return escape_all(re.ravel(), im.ravel())


def best(run, times: int = 3) -> float:
    """The fastest of `times` runs, in seconds."""
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append(time.perf_counter() - start)
    return min(took)


def main(workers: int = 2) -> None:
    from dask.distributed import Client, LocalCluster

    rows(0, 1)  # compiled before timing
    whole = rows(0, SIDE)
    one = best(lambda: rows(0, SIDE))
    cores = len(os.sched_getaffinity(0))
    os.environ["RUNE_JIT_NUM_THREADS"] = str(max(1, cores // workers))  # the workers read it
    bounds = np.linspace(0, SIDE, 8 * workers + 1).astype(int)
    with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(rows, 0, 1)  # each worker compiles

        def sweep():
            return client.gather(client.map(rows, bounds[:-1], bounds[1:], pure=False))
        parts = sweep()
        spread = best(sweep)
    assert np.array_equal(np.concatenate(parts), whole)
    print(f"one process ({rune.config.num_threads} threads): {one:.2f} s; {workers} Dask "
          f"workers ({os.environ['RUNE_JIT_NUM_THREADS']} threads each): {spread:.2f} s "
          f"({one / spread:.2f}x); results identical")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
