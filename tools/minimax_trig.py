"""Coefficients of the trigonometric vector math (rune_jit/backend/cpu/codegen/vecmath/trig.py,
inverse_trig.py).

Each polynomial is a minimax fit of the relative error on the reduced interval, found by
Lawson's algorithm (iteratively reweighted least squares, which converges to the discrete
minimax polynomial: Rice, "The Approximation of Functions", vol. 1, 1964, ch. 3) on 400
Chebyshev nodes in 50 digits (mpmath), then rounded to double. Prints each polynomial as
Python tuples (highest power first, as trig.py's Horner evaluation takes them) with the
fit's maximum relative error, the 2/pi table of the Payne–Hanek reduction, and arctan's
atan(k/4) as double pairs.

    python tools/minimax_trig.py
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 50
NODES = 400


def lawson(g, weight, basis, lo, hi, iterations: int = 60):
    """Coefficients c of sum c_k basis_k(t) minimizing max |weight(t) (g(t) - sum)| over
    Chebyshev nodes of [lo, hi]; returns (c, the maximum weighted error)."""
    ts = [lo + (hi - lo) * (1 - mp.cos(mp.pi * (i + 0.5) / NODES)) / 2 for i in range(NODES)]
    gs, ws = [g(t) for t in ts], [weight(t) for t in ts]
    rows = [[bk(t) for bk in basis] for t in ts]
    u = [mp.mpf(1)] * NODES
    for _ in range(iterations):
        a = mp.matrix([[mp.sqrt(u[i]) * ws[i] * v for v in rows[i]] for i in range(NODES)])
        y = mp.matrix([mp.sqrt(u[i]) * ws[i] * gs[i] for i in range(NODES)])
        c = mp.qr_solve(a, y)[0]
        err = [abs(ws[i] * (gs[i] - sum(c[k] * rows[i][k] for k in range(len(basis)))))
               for i in range(NODES)]
        total = sum(u[i] * err[i] for i in range(NODES))
        u = [u[i] * err[i] / total for i in range(NODES)]
    return [float(ck) for ck in c], max(err)


def fit_in_z(name, g, weight, degree, rmax):
    """A polynomial in z = r^2 of `degree` for g(r), on 0 < r <= rmax."""
    basis = [(lambda k: (lambda r: (r * r) ** k))(k) for k in range(degree + 1)]
    c, err = lawson(g, weight, basis, mp.mpf(rmax) * 1e-6, mp.mpf(rmax))
    print(f"{name} = {tuple(reversed(c))!r}  # max relative error {mp.nstr(err, 3)}")


def two_over_pi_table(chunks: int, lead: int = 3) -> list[float]:
    """T[i] = bits 8j+1 .. 8j+48 of 2/pi (j = i - lead; bit k weighs 2^-k, and the bits
    before the point are 0), as an integer over 2^48 (in [0, 1))."""
    with mp.workprec(8 * chunks + 200):
        bits = int(mp.floor(2 / mp.pi * mp.mpf(2) ** (8 * chunks + 48)))
    return [((bits >> (8 * (chunks - j))) & ((1 << 48) - 1)) / 2.0 ** 48
            for j in range(-lead, chunks - lead)]


if __name__ == "__main__":
    R = mp.pi / 4 * (1 + mp.mpf(2) ** -20)  # |r| after either reduction, with a margin
    fit_in_z("SIN", lambda r: (mp.sin(r) - r) / r ** 3, lambda r: r ** 3 / mp.sin(r), 6, R)
    fit_in_z("COS", lambda r: (mp.cos(r) - 1 + r * r / 2) / r ** 4,
             lambda r: r ** 4 / mp.cos(r), 5, R)
    # float32's kernels, computed in float64: 2^-38 is plenty before rounding to float32
    fit_in_z("SIN_SHORT", lambda r: (mp.sin(r) - r) / r ** 3, lambda r: r ** 3 / mp.sin(r), 4, R)
    fit_in_z("COS_SHORT", lambda r: (mp.cos(r) - 1) / r ** 2, lambda r: r ** 2 / mp.cos(r), 4, R)
    # arctan on |u| <= 1/8 (inverse_trig.py): atan u = u + u^3 ATAN(u^2)
    U = mp.mpf("0.1251")
    fit_in_z("ATAN", lambda r: (mp.atan(r) - r) / r ** 3, lambda r: r ** 3 / mp.atan(r), 6, U)
    fit_in_z("ATAN_SHORT", lambda r: (mp.atan(r) - r) / r ** 3, lambda r: r ** 3 / mp.atan(r),
             3, U)
    # arcsin on |r| <= 1/2 (inverse_trig.py): asin r = r + r^3 ASIN(r^2)
    H = mp.mpf("0.5")
    fit_in_z("ASIN", lambda r: (mp.asin(r) - r) / r ** 3, lambda r: r ** 3 / mp.asin(r), 12, H)
    fit_in_z("ASIN_SHORT", lambda r: (mp.asin(r) - r) / r ** 3, lambda r: r ** 3 / mp.asin(r),
             6, H)
    print("ATAN_OF_QUARTERS =", tuple((float(v), float(v - float(v)))
                                      for v in (mp.atan(mp.mpf(k) / 4) for k in range(1, 5))))
    print("TWO_OVER_PI =", tuple(two_over_pi_table(147)))
