"""Measure the vector math of our own (backend/cpu/vecmath) and glibc's libmvec against
the correctly rounded result: the largest and mean error in ulps per function and dtype.

    python tools/accuracy_vecmath.py [--n 1000000] [--functions exp,log]

prints the rows of docs/accuracy.md's table. The points are those of
tests/primitives/test_vector_math_trig.py for the trigonometric functions, else of
tests/primitives/test_vector_math_exp_log.py (`samples`: log-uniform over every binade of the domain,
both signs, and uniform in [-50, 50] and [-2, 2]; then `edges`; `power_samples` for
power), n per function and
dtype; the reference is mpmath's value at 200 bits rounded once (tests/ulp_oracle.py),
computed once and compared with rune_jit's compiled results under RUNE_JIT_MATH=own and
=libmvec (each in a subprocess: the setting is read at import) and with NumPy's (SciPy's
for erf and erfc). arcsinh ... erfc take tests/primitives/
test_vector_math_inverse_hyperbolic_cbrt_erf.py's `samples` and `edges`, erfinv, gammaln
and digamma test_vector_math_special.py's (where they are within 1 ulp in float64: the
rest of their domain is in docs/accuracy.md's section on them). An
error is the distance to the correctly rounded result in ulps of that result (so 0 is
correctly rounded, 1 one float away).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "primitives")]
import mpmath  # noqa: E402
import test_vector_math_exp_log as cases  # noqa: E402
import test_vector_math_inverse_hyperbolic_cbrt_erf as more_cases  # noqa: E402
import test_vector_math_special as special_cases  # noqa: E402
import test_vector_math_trig as trig_cases  # noqa: E402
from ulp_oracle import correctly_rounded, ulp_errors  # noqa: E402

ORACLES = {**cases.ORACLES, **trig_cases.FUNCTIONS, "arctan2": mpmath.atan2,
           **more_cases.FUNCTIONS, **special_cases.FUNCTIONS}

DTYPES = ("float64", "float32")


def points(name: str, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    t = np.dtype(dtype).type
    if name == "arctan2":
        return trig_cases.pairs(t, n // 3 * 2, 1)
    if name in trig_cases.FUNCTIONS:
        return (trig_cases.samples(t, n, 1, name),)
    if name == "power":
        return tuple(v[:n] for v in cases.power_samples(t, n // 4 + 1, seed=7))
    if name in special_cases.FUNCTIONS:
        x = special_cases.samples(name, t, n, seed=7)
        return (np.concatenate([x[::max(1, x.size // n)][:n], special_cases.edges(name, t)]),)
    if name in more_cases.FUNCTIONS:
        x = more_cases.samples(name, t, n // 4 + 1, seed=7)[:n]
        return (np.concatenate([x, more_cases.edges(name, t)]),)
    x = cases.samples(name, t, n // 3 + 1, seed=7)[:n]
    return (np.concatenate([x, cases.edges(name, t)]),)


def compiled(mode: str, name: str, xs: tuple[np.ndarray, ...]) -> np.ndarray:
    """rune_jit's jitted `name` of xs, in a subprocess with RUNE_JIT_MATH=mode."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "x.npz"), Path(tmp, "y.npy")
        np.savez(src, *xs)
        code = ("import numpy as np, rune_jit as rune, rune_jit.numpy as rnp; "
                f"a = np.load({str(src)!r}); args = [a[k] for k in sorted(a.files)]; "
                f"f = getattr(rnp, {name!r}, None) or getattr(rune.scipy.special, {name!r}); "
                f"np.save({str(out)!r}, rune.jit(f)(*args))")
        subprocess.run([sys.executable, "-c", code], check=True,
                       env={**os.environ, "RUNE_JIT_MATH": mode})
        return np.load(out)


def reference(name: str):
    """NumPy's function, or SciPy's (erf, erfc, erfinv, gammaln, digamma: NumPy has none)."""
    import scipy.special

    return getattr(np, name, None) or getattr(scipy.special, name)


def row(name: str, dtype: str, n: int) -> str:
    xs = points(name, dtype, n)
    with np.errstate(all="ignore"):
        near = getattr(np, name, None) if name in more_cases.FUNCTIONS else None
        exact = correctly_rounded(ORACLES[name], *xs, dtype=np.dtype(dtype), near=near)
        results = [compiled(mode, name, xs) for mode in ("own", "libmvec")]
        results.append(reference(name)(*xs))
        finite = np.isfinite(exact)
        errs = [ulp_errors(r[finite], exact[finite]) for r in results]
    cells = [f"{e.max():.2f} / {e.mean():.3f}" for e in errs]
    return f"| {name} | {dtype} | {xs[0].size:,} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--functions", default=",".join(ORACLES))
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    args = ap.parse_args()
    print("| function | dtype | points | own: max / mean ulp | libmvec | NumPy |")
    print("|---|---|---|---|---|---|")
    for name in args.functions.split(","):
        for dtype in args.dtypes.split(","):
            print(row(name, dtype, args.n), flush=True)


if __name__ == "__main__":
    main()
