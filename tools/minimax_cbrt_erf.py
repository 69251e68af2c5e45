"""Polynomial coefficients of backend/cpu/codegen/vecmath/cbrt.py and erf.py, and their
errors.

    python tools/minimax_cbrt_erf.py

Each is a minimax fit of the relative error by Lawson's algorithm (tools/minimax_trig.py's
`lawson`: iteratively reweighted least squares on Chebyshev nodes, 50 digits), printed
highest power first with its largest error on the nodes.

- cbrt.P(m) ~ m^(1/3) on [1, 2]: the first guess of Newton's iterations.
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


if __name__ == "__main__":
    cbrt()
