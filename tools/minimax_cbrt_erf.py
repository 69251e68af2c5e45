"""Polynomial coefficients of backend/cpu/codegen/vecmath/cbrt.py and erf.py, and their
errors.

    python tools/minimax_cbrt_erf.py

Each is a minimax fit of the relative error by Lawson's algorithm (tools/minimax_trig.py's
`lawson`: iteratively reweighted least squares on Chebyshev nodes, 50 digits), printed
highest power first with its largest error on the nodes.

- cbrt.P(m) ~ m^(1/3) on [1, 2]: the first guess of Newton's iterations.
- erf.Q(z) = erf(a) / a - 1, z = a^2 on [0, 1] (erf a = a + a Q(a^2)), relative to
  erf(a) / a.
- erf.PIECES: g(a) = erfc(a) e^(a^2) on [1/2, 1] and [1, 2] in u = a - mid, and g(a) / t
  (t = 1 / a) on [2, 4] and [4, 28] in u = t - mid (mid 3/8 and 0), each as c0 + c1 u +
  u^2 P2(u): the whole polynomial fitted first, c0 then kept as a double-double and c1
  rounded, and P2 fitted again to what they leave, (g - c0 - c1 u) / u^2 (relative to g).
"""

from __future__ import annotations

import mpmath as mp

from minimax_trig import lawson


def powers(degree: int, at=lambda t: t):
    """The basis (at(t)^k for k = 0 .. degree)."""
    return [(lambda k: (lambda t: at(t) ** k))(k) for k in range(degree + 1)]


def show(name: str, coefficients, err) -> None:
    print(f"{name} = {tuple(reversed(coefficients))!r}  # max relative error "
          f"2^{float(mp.log(err, 2)):.1f}")


def cbrt() -> None:
    c, err = lawson(mp.cbrt, lambda m: 1 / mp.cbrt(m), powers(4), mp.mpf(1), mp.mpf(2),
                    iterations=30)
    show("cbrt P", c, err)


def erf_small(degree: int) -> None:
    def q(z):
        a = mp.sqrt(z)
        return mp.erf(a) / a - 1
    c, err = lawson(q, lambda z: 1 / (1 + q(z)), powers(degree), mp.mpf(0), mp.mpf(1),
                    iterations=30)
    show(f"erf Q degree {degree}", c, err)


def g(a):
    return mp.erfc(a) * mp.exp(a * a)


# (g's argument of u, the interval of u, what multiplies g)
PIECES = [(lambda u: mp.mpf("0.75") + u, (-0.25, 0.25)),
          (lambda u: mp.mpf("1.5") + u, (-0.5, 0.5)),
          (lambda u: 1 / (mp.mpf("0.375") + u), (-0.125, 0.125)),
          (lambda u: 1 / u, (1 / mp.mpf(28), 0.25))]


def erf_piece(index: int, degree: int) -> None:
    """c0 (a double-double), c1 and P2 (highest power first) of one piece."""
    a_of, (lo, hi) = PIECES[index]
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    f = (lambda u: g(a_of(u))) if index < 2 else (lambda u: g(a_of(u)) * a_of(u))
    c, _ = lawson(f, lambda u: 1 / f(u), powers(degree), lo, hi, iterations=30)
    with mp.workdps(50):
        exact0 = mp.mpf(c[0]) if index == 3 else f(mp.mpf(0))
    c0 = (float(exact0), float(exact0 - float(exact0)))
    c1 = c[1]
    rest = lambda u: (f(u) - exact0 - c1 * u) / (u * u)
    p2, err = lawson(rest, lambda u: u * u / f(u), powers(degree - 2), lo, hi, iterations=30)
    print(f"piece {index}: c0 = {c0!r}, c1 = {c1!r}")
    show(f"    P2 degree {degree - 2}", p2, err)


if __name__ == "__main__":
    cbrt()
    erf_small(12)
    for i in range(4):
        erf_piece(i, 16)
