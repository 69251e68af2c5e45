"""Measure rune_jit's special functions and libm-backed elementwise functions against
SciPy and NumPy: the largest error in ulps over a sweep of each function's domain, in
float64 and float32, eagerly (the NumPy interpreter) and compiled.

    python tools/accuracy.py [points per sweep, default 200000]

prints the table of docs/accuracy.md. tests/primitives/test_accuracy_special.py runs a reduced sweep
and checks the bounds below (BOUNDS), which the page documents.

The error of a result g against the reference w (SciPy's or NumPy's float64 result at
the same input, which the float32 rows are measured against too) is |g - w| in ulps of
max(|w|, FLOOR): FLOOR is the smallest normal number (ulps of the result itself, and of
the normal range where results are subnormal), or 1 for the functions whose sweeps
cross a zero of the function, where the error is absolute (gammaln, digamma, logit).
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable

import numpy as np
import scipy.special as sc

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from rune_jit.scipy import special as rs


def _lin(lo, hi):
    return lambda n: np.linspace(lo, hi, n)


def _geo(lo, hi, sign=1.0):
    return lambda n: sign * np.geomspace(lo, hi, n)


def _both(*makers):
    return lambda n: np.concatenate([m(n // len(makers)) for m in makers])


# name: (rune_jit function, reference, sweep of the first argument, second argument or
# None, floor); a second argument is drawn from its own sweep, in the same order
ROWS: dict[str, tuple] = {
    "arcsin": (rnp.arcsin, np.arcsin, _lin(-1, 1), None, "tiny"),
    "arccos": (rnp.arccos, np.arccos, _lin(-1, 1), None, "tiny"),
    "arcsinh": (rnp.arcsinh, np.arcsinh, _lin(-50, 50), None, "tiny"),
    "arccosh": (rnp.arccosh, np.arccosh, _both(_lin(1, 3), _geo(3, 1e30)), None, "tiny"),
    "arctanh": (rnp.arctanh, np.arctanh, _lin(-1, 1), None, "tiny"),
    "cbrt": (rnp.cbrt, np.cbrt, _both(_lin(-100, 100), _geo(1e-300, 1e300)), None, "tiny"),
    "log2": (rnp.log2, np.log2, _geo(1e-300, 1e300), None, "tiny"),
    "log10": (rnp.log10, np.log10, _geo(1e-300, 1e300), None, "tiny"),
    "exp2": (rnp.exp2, np.exp2, _lin(-1000, 1000), None, "tiny"),
    "hypot": (rnp.hypot, np.hypot, _lin(-1e3, 1e3), _lin(1e-3, 5e2), "tiny"),
    "logaddexp": (rnp.logaddexp, np.logaddexp, _lin(-50, 50), _lin(40, -45), 1.0),
    "i0": (rnp.i0, np.i0, _lin(-700, 700), None, "tiny"),
    "erf": (rs.erf, sc.erf, _lin(-6, 6), None, "tiny"),
    "erfc": (rs.erfc, sc.erfc, _lin(-6, 26), None, "tiny"),
    "erfinv": (rs.erfinv, sc.erfinv, _lin(-1, 1), None, "tiny"),
    "ndtr": (rs.ndtr, sc.ndtr, _lin(-37, 9), None, "tiny"),
    "log_ndtr": (rs.log_ndtr, sc.log_ndtr, _lin(-60, 37), None, "tiny"),
    "ndtri": (rs.ndtri, sc.ndtri, _both(_geo(1e-300, 0.5), _lin(0, 1)), None, "tiny"),
    "expit": (rs.expit, sc.expit, _lin(-700, 700), None, "tiny"),
    "logit": (rs.logit, sc.logit, _lin(0, 1), None, 1.0),
    "gammaln": (rs.gammaln, sc.gammaln, _both(_lin(-30.1, 30), _geo(1e-10, 1e300)), None, 1.0),
    "digamma": (rs.digamma, sc.digamma, _both(_lin(-30.1, 30), _geo(1e-10, 1e300)), None, 1.0),
    "trigamma": (rs.trigamma, lambda x: sc.polygamma(1, x), _both(_lin(-30.1, 30),
                                                                  _geo(1e-10, 1e150)),
                 None, "tiny"),
    "xlogy": (rs.xlogy, sc.xlogy, _lin(-10, 10), _geo(1e-300, 1e300), "tiny"),
    "entr": (rs.entr, sc.entr, _both(_lin(0, 10), _geo(1e-300, 1e300)), None, "tiny"),
}
# the largest errors (ulps) the page promises: float64, float32
BOUNDS = {
    "arcsin": (4, 4), "arccos": (4, 4), "arcsinh": (4, 4), "arccosh": (4, 4),
    "arctanh": (4, 4), "cbrt": (4, 4), "log2": (4, 4), "log10": (4, 4), "exp2": (4, 4),
    "hypot": (4, 4), "logaddexp": (4, 4), "i0": (16, 4), "erf": (4, 4), "erfc": (1024, 4),
    "erfinv": (8, 4),
    "ndtr": (4096, 4), "log_ndtr": (4096, 4), "ndtri": (8, 4), "expit": (8, 4),
    "logit": (4, 4), "gammaln": (128, 4), "digamma": (16384, 4), "trigamma": (16, 4),
    "xlogy": (4, 4), "entr": (4, 4),
}


def ulps(got: np.ndarray, want: np.ndarray, dtype: np.dtype, floor) -> float:
    """The largest error of got against want, in ulps of `dtype` at max(|want|, floor)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        want = want.astype(dtype).astype(np.float64)  # the reference, rounded to dtype
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        base = np.finfo(dtype).tiny if floor == "tiny" else floor
        scale = np.spacing(np.maximum(np.abs(want), base).astype(dtype)).astype(np.float64)
        err = np.where(same, 0.0, np.abs(got - want) / scale)
    return float(np.nan_to_num(err, nan=np.inf).max(initial=0.0))


def measure(name: str, n: int, dtype, compiled: bool) -> float:
    fn, ref, sweep, second, floor = ROWS[name]
    args = [sweep(n)] + ([second(len(sweep(n)))] if second else [])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ref(*args)
        inputs = [a.astype(dtype) for a in args]
        if dtype == np.float32:  # the reference at the float32 inputs themselves
            want = ref(*[a.astype(np.float64) for a in inputs])
        if compiled:
            got = rune.jit(fn)(*inputs)
        else:
            saved, config.backend = config.backend, "interpret"
            try:
                got = fn(*inputs)
            finally:
                config.backend = saved
    return ulps(got, want, np.dtype(dtype), floor)


def _exact() -> dict[str, Callable]:
    """Each special function to 50 digits (mpmath), where SciPy's own error shows."""
    import mpmath as mp

    mp.mp.dps = 50
    return {
        "erf": mp.erf, "erfc": mp.erfc, "ndtr": mp.ncdf, "log_ndtr": lambda x: (
            mp.log1p(-mp.ncdf(-x)) if x > 0 else mp.log(mp.ncdf(x))),
        "expit": lambda x: 1 / (1 + mp.exp(-x)),
        "logit": lambda p: mp.log(mp.mpf(p) / (1 - mp.mpf(p))),
        "gammaln": lambda x: mp.log(abs(mp.gamma(x))), "digamma": mp.digamma,
        "trigamma": lambda x: mp.polygamma(1, x), "erfinv": mp.erfinv,
        "i0": lambda x: mp.besseli(0, x),
    }


def measure_exact(name: str, n: int, exact: Callable) -> float:
    fn, _, sweep, _, floor = ROWS[name]
    x = sweep(n)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = rune.jit(fn)(x)
    want = np.array([_float(exact, v, ROWS[name][1]) for v in x])
    return ulps(got, want, np.dtype(np.float64), floor)


def _float(f: Callable, v: float, ref: Callable) -> float:
    """f(v) to double precision; at a pole or an end of the domain, where mpmath raises,
    the reference's value (±inf, nan)."""
    try:
        return float(f(v))
    except (ValueError, ZeroDivisionError, OverflowError):
        return float(ref(np.float64(v)))


def table(n: int, n_exact: int = 2000) -> str:
    try:
        exact = _exact()
    except ImportError:
        exact = {}
    lines = ["| function | float64 eager | float64 compiled | float32 eager | float32 "
             "compiled | float64 compiled against 50 digits | bound (f64, f32) |",
             "|---|---|---|---|---|---|---|"]
    for name in ROWS:
        cells = [measure(name, n, d, c) for d in (np.float64, np.float32) for c in (False, True)]
        shown = " | ".join(f"{c:.3g}" for c in cells)
        digits = f"{measure_exact(name, n_exact, exact[name]):.3g}" if name in exact else ""
        lines.append(f"| {name} | {shown} | {digits} | {BOUNDS[name][0]}, {BOUNDS[name][1]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000))
