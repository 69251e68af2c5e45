"""Polynomial coefficients of backend/cpu/codegen/vecmath/exp_log.py, and their errors.

    python tools/minimax_exp_log.py

Each polynomial is mpmath's Chebyshev approximation (`chebyfit`: within a few percent of
the minimax error) at 60 digits, of a function written as its Taylor series (so that the
nodes near 0 lose nothing to cancellation), with the coefficients rounded to float64. It
prints, per polynomial and precision, the coefficients (highest power first, as
exp_log.py lists them) and log2 of the largest error they add to the result, relative,
measured at 2,000 points of the interval with the rounded coefficients.

- q(r) = (e^r - 1 - r) / r^2 on |r| <= ln2 / 2: exp's reduced argument (Cody and Waite,
  "Software Manual for the Elementary Functions", 1980, ch. 6); e^r - 1 = r + r^2 q(r).
- Q(z) = (2 atanh(s) - 2 s) / s^3, z = s^2, s = f / (2 + f) for 1 + f in [sqrt(2)/2,
  sqrt(2)]: log(1 + f) = 2 s + s^3 Q(s^2) (Cody and Waite, ch. 5).
- Q1(z) = (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5: power's log, whose s^3 term is summed
  in double-double arithmetic.
- P(z) = (sinh(a) - a) / a^3, z = a^2, on |a| <= 1/2: sinh's small arguments, where
  (e^a - e^-a) / 2 cancels.
- q(r) on |r| <= ln2 / 512: exp_table.py's (Tang's table-driven exp, 256 entries).
- "float32 lanes": exp_float32.py's q(r) on |r| <= ln2 / 2 and log_float32.py's
  P(f) = (log(1 + f) - f) / f^2 on |f| <= 1/3, with coefficients rounded to float32.
"""

from __future__ import annotations

import struct

import mpmath as mp

mp.mp.dps = 60
TERMS = 60  # of each Taylor series: far past 60 digits on these intervals
S_MAX = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)  # s at f = sqrt(2) - 1: 0.1716


def q(r):
    return mp.fsum(r ** k / mp.factorial(k + 2) for k in range(TERMS))


def big_q(z):
    return mp.fsum(2 * z ** k / (2 * k + 3) for k in range(TERMS))


def big_q1(z):
    return mp.fsum(2 * z ** k / (2 * k + 5) for k in range(TERMS))


def log1p_p(f):
    return mp.fsum((-1) ** (k + 1) * f ** k / (k + 2) for k in range(TERMS))


def small_p(z):
    return mp.fsum(z ** k / mp.factorial(2 * k + 3) for k in range(TERMS))


# name -> (function, its interval, the size of its term relative to the result, at x)
POLYNOMIALS = {
    "exp": (q, (-mp.log(2) / 2, mp.log(2) / 2), lambda r: r * r / mp.exp(r)),
    "log": (big_q, (0, S_MAX ** 2), lambda z: z / 2),  # s^3 Q / (2 s)
    "sinh": (small_p, (0, mp.mpf(1) / 4), lambda z: z),
    "pow": (big_q1, (0, S_MAX ** 2), lambda z: z * z / 2),  # s^5 Q1 / (2 s)
    "exp table": (q, (-mp.log(2) / 512, mp.log(2) / 512), lambda r: r * r / mp.exp(r)),
    "log1p": (log1p_p, (-mp.mpf(1) / 3, mp.mpf(1) / 3),
              lambda f: f * f / abs(mp.log1p(f)) if f else 0),
}
DEGREES = {"float64": {"exp": 10, "log": 7, "sinh": 5, "pow": 7},
           "float64 table": {"exp table": 2},
           "float32": {"exp": 6, "log": 3, "sinh": 3},  # float32's computed in float64
           "float32 lanes": {"exp": 4, "log1p": 9}}
# where the intervals are widened (relative), so that rounded reduced arguments stay in
WIDEN = {"exp table": 1.001, "log1p": 1.0001, "float32 lanes": 1.01}


def fit(name: str, degree: int, single: bool = False,
        widen: float = 1.0) -> tuple[list[float], float]:
    """The rounded coefficients (to float32 if `single`), highest power first, and log2
    of the largest relative error they add to the result, on the interval widened by
    the factor `widen`."""
    fn, (a, b), weight = POLYNOMIALS[name]
    a, b = a * widen, b * widen
    poly = [float(c) for c in mp.chebyfit(fn, [a, b], degree + 1)]
    if single:
        poly = [struct.unpack("f", struct.pack("f", c))[0] for c in poly]
    points = [a + (b - a) * i / 1999 for i in range(2000)]
    worst = max(abs(mp.polyval(poly, x) - fn(x)) * weight(x) for x in points)
    return poly, float(mp.log(worst, 2)) if worst else float("-inf")


def main() -> None:
    for precision, degrees in DEGREES.items():
        for name, degree in degrees.items():
            widen = WIDEN.get(name, WIDEN.get(precision, 1.0))
            poly, err = fit(name, degree, precision == "float32 lanes", widen)
            print(f"{precision} {name} degree {degree}: error 2^{err:.1f}")
            print("    (" + ", ".join(repr(c) for c in poly) + ")")


if __name__ == "__main__":
    main()
