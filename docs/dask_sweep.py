"""A parameter sweep on Dask's distributed scheduler (docs/scaling.md): the escape time
of 10^6 points of the Mandelbrot set's plane, a vmapped `iterate` whose lanes stop on
their own, in one process and then in chunks on a LocalCluster of worker processes.

    pip install -e '.[dask]' && python docs/dask_sweep.py [workers]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import rune_jit as rune


def escape(c_re, c_im):
    """Steps until |z| > 2 under z' = z² + c (at most 1000)."""
    def step(s):
        re, im, n = s
        return re * re - im * im + c_re, 2.0 * re * im + c_im, n + 1
    return rune.iterate(step, (np.float64(0.0), np.float64(0.0), np.int64(0)),
                        until=lambda s: (s[0] * s[0] + s[1] * s[1] > 4.0) | (s[2] >= 1000),
                        max_steps=1000)[2]


escape_all = rune.jit(rune.vmap(escape))


def plane(n: int) -> tuple[np.ndarray, np.ndarray]:
    re, im = np.meshgrid(np.linspace(-2.0, 0.6, n), np.linspace(-1.2, 1.2, n))
    return re.ravel(), im.ravel()


def main(workers: int = 2) -> None:
    from dask.distributed import Client, LocalCluster

    re, im = plane(1000)
    escape_all(re[:64], im[:64])  # compiled before timing
    start = time.perf_counter()
    whole = escape_all(re, im)
    one = time.perf_counter() - start
    with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        chunks = np.array_split(np.arange(re.size), 8 * workers)
        client.gather(client.map(escape_all, [re[:64]], [im[:64]]))  # each worker compiles
        client.run(lambda: escape_all(re[:64], im[:64]))
        start = time.perf_counter()  # the data's trip to the workers counts too
        res, ims = client.scatter([re[c] for c in chunks]), client.scatter([im[c] for c in chunks])
        parts = client.gather(client.map(escape_all, res, ims))
        spread = time.perf_counter() - start
    assert np.array_equal(np.concatenate(parts), whole)
    print(f"one process: {one:.2f} s; {workers} Dask workers: {spread:.2f} s "
          f"({one / spread:.2f}x); results identical")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
