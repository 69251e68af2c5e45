"""gammaln and digamma in float64 on the negative axis against mpmath: the rows of
docs/accuracy.md's table for it (largest / mean error in ulps; rune_jit compiled, SciPy,
and the largest eager error), and near_zero.py's Taylor series in the zeros' windows.

    python tools/accuracy_gamma_negative.py [--n 10000]

Ranges: (-1, 0) and (-20, -1) uniform outside the windows |x - r| <= width of
rune_jit/_src/scipy/negative_zeros.py's zeros r; in the windows (half the points within
4096 ulps of a zero, half uniform in its window); (-30, -20) uniform; (-10^15, -30)
log-uniform; the poles left out. Seed 7.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mpmath
import numpy as np
import scipy.special as sc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from ulp_oracle import correctly_rounded, ulp_errors  # noqa: E402

import rune_jit as rune  # noqa: E402
import rune_jit.scipy.special as rs  # noqa: E402
from rune_jit._src.scipy import negative_zeros  # noqa: E402
from rune_jit._src.scipy.near_zero import near_zero  # noqa: E402

ORACLES = {"gammaln": lambda x: mpmath.re(mpmath.loggamma(x)), "digamma": mpmath.digamma}


def _windows(name: str, n: int, rng) -> tuple[dict, np.ndarray, np.ndarray]:
    """The ranges' points, and the window points with their cells."""
    table = getattr(negative_zeros, name.upper())
    r, width = np.array(table["r"][0]), np.array(table["width"])
    rows = np.flatnonzero(width > 0)
    at = rng.choice(rows, n)
    offset = np.where(rng.random(n) < 0.5,
                      np.spacing(np.abs(r[at])) * rng.integers(-4096, 4097, n),
                      width[at] * rng.uniform(-1, 1, n))
    keep = np.abs(offset) <= width[at]
    zx, at = r[at][keep] + offset[keep], at[keep]

    def outside(x):
        return x[~(np.abs(x[:, None] - r[None, rows]) <= width[None, rows]).any(axis=1)][:n]

    ranges = {"(-1, 0) outside the windows": outside(-rng.uniform(0, 1, 3 * n)),
              "(-20, -1) outside the windows": outside(-rng.uniform(1, 20, 3 * n)),
              "(-20, -1/4] in the zeros' windows": zx,
              "(-30, -20)": -rng.uniform(20, 30, n),
              "(-10^15, -30)": -np.exp(rng.uniform(np.log(30), np.log(1e15), n))}
    return {k: x[x != np.rint(x)] for k, x in ranges.items()}, zx, at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    n = parser.parse_args().n
    rng = np.random.default_rng(7)
    for name in ORACLES:
        ranges, zx, cells = _windows(name, n, rng)
        for label, x in ranges.items():
            exact = correctly_rounded(ORACLES[name], x)
            ours = ulp_errors(np.asarray(rune.jit(getattr(rs, name))(x)), exact)
            with np.errstate(all="ignore"):
                eager = ulp_errors(np.asarray(getattr(rs, name)(x)), exact)
                scipy = ulp_errors(getattr(sc, name)(x), exact)
            print(f"| {name} | {label} | {ours.max():.2f} / {ours.mean():.3f} | "
                  f"{scipy.max():.0f} / {scipy.mean():.2f} | eager max {eager.max():.2f}")
        table = getattr(negative_zeros, name.upper())
        _, value = near_zero(zx, cells.astype(np.float64), table)
        err = ulp_errors(np.asarray(value), correctly_rounded(ORACLES[name], zx))
        print(f"| {name} | the windows, near_zero.py | {err.max():.2f} / {err.mean():.3f} |")


if __name__ == "__main__":
    main()
