"""Errors of the vector math in ulps against the correctly rounded result (mpmath), for
docs/accuracy.md: rune_jit's own code and libmvec's (RUNE_JIT_MATH=libmvec, a
subprocess: the setting is read at import), on the samples of the test suite.

    python tools/accuracy_vecmath.py N sin cos tan

prints, per function and dtype, the number of points and the maximum and mean error of
each (an error of 1 is a result one spacing from the correctly rounded one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

import mpmath  # noqa: E402
from test_vector_math_trig import FUNCTIONS, pairs, samples  # noqa: E402
from ulp_oracle import correctly_rounded, ulp_errors  # noqa: E402

DTYPES = (np.float64, np.float32)
ORACLES = {**FUNCTIONS, "arctan2": mpmath.atan2}


def inputs(name: str, dtype, n: int) -> tuple[np.ndarray, ...]:
    """The test suite's samples of `name` (pairs of arctan2's: n of each of 3 kinds)."""
    return pairs(dtype, n // 3 * 2, 1) if name == "arctan2" else (samples(dtype, n, 1, name),)


def results(n: int, names: list[str], out: Path) -> None:
    """Each function's compiled results on the samples, saved to `out` (an .npz)."""
    import rune_jit as rune
    import rune_jit.numpy as rnp

    arrays = {f"{name} {np.dtype(dt).name}": rune.jit(getattr(rnp, name))(*inputs(name, dt, n))
              for name in names for dt in DTYPES}
    np.savez(out, **arrays)


def main(n: int, names: list[str]) -> None:
    got = {}
    for math in ("own", "libmvec"):
        path = Path(f"/tmp/rune_accuracy_{math}_{os.getpid()}.npz")
        env = dict(os.environ, RUNE_JIT_MATH=math)
        subprocess.run([sys.executable, __file__, "--results", str(n), str(path), *names],
                       env=env, check=True)
        got[math] = dict(np.load(path))
        path.unlink()
    for name in names:
        for dt in DTYPES:
            xs = inputs(name, dt, n)
            exact = correctly_rounded(ORACLES[name], *xs, dtype=dt)
            key = f"{name} {np.dtype(dt).name}"
            row = {"points": len(xs[0])}
            for math, arrays in got.items():
                err = ulp_errors(arrays[key], exact)
                row[math] = (float(err.max()), float(err.mean()))
            print(key, json.dumps(row))


if __name__ == "__main__":
    if sys.argv[1] == "--results":
        results(int(sys.argv[2]), sys.argv[4:], Path(sys.argv[3]))
    else:
        main(int(sys.argv[1]), sys.argv[2:])
