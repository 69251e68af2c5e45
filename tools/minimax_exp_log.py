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
"""

from __future__ import annotations

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


def small_p(z):
    return mp.fsum(z ** k / mp.factorial(2 * k + 3) for k in range(TERMS))


# name -> (function, its interval, the size of its term relative to the result, at x)
POLYNOMIALS = {
    "exp": (q, (-mp.log(2) / 2, mp.log(2) / 2), lambda r: r * r / mp.exp(r)),
    "log": (big_q, (0, S_MAX ** 2), lambda z: z / 2),  # s^3 Q / (2 s)
    "sinh": (small_p, (0, mp.mpf(1) / 4), lambda z: z),
    "pow": (big_q1, (0, S_MAX ** 2), lambda z: z * z / 2),  # s^5 Q1 / (2 s)
}
DEGREES = {"float64": {"exp": 10, "log": 7, "sinh": 5, "pow": 7},
           "float32": {"exp": 6, "log": 3, "sinh": 3}}  # float32's computed in float64


def fit(name: str, degree: int) -> tuple[list[float], float]:
    """The rounded coefficients, highest power first, and log2 of the largest relative
    error they add to the result."""
    fn, (a, b), weight = POLYNOMIALS[name]
    poly = [float(c) for c in mp.chebyfit(fn, [a, b], degree + 1)]
    points = [a + (b - a) * i / 1999 for i in range(2000)]
    worst = max(abs(mp.polyval(poly, x) - fn(x)) * weight(x) for x in points)
    return poly, float(mp.log(worst, 2)) if worst else float("-inf")


def main() -> None:
    for precision, degrees in DEGREES.items():
        for name, degree in degrees.items():
            poly, err = fit(name, degree)
            print(f"{precision} {name} degree {degree}: error 2^{err:.1f}")
            print("    (" + ", ".join(repr(c) for c in poly) + ")")


if __name__ == "__main__":
    main()
