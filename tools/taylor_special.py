"""Polynomial coefficients of rune_jit.scipy.special's erfinv, digamma and gammaln
(rune_jit/_src/scipy/special.py): Taylor series, computed in 50 digits (mpmath) and
rounded to double, with the size of the first term left out at the interval's end.

    python tools/taylor_special.py

- ERFINV_Q(z) = erf(a) / a - 1, z = a^2 on [0, 1/4] (a < 1/2): the residual of erfinv's
  Newton step, s - erf a = (s - a) - a Q(a^2). erf a / a = 2/sqrt(pi) sum_n (-z)^n /
  (n! (2n + 1)) (Abramowitz and Stegun 7.1.5).
- DIGAMMA_ROOT(t): psi(x0 + t) = t psi'(x0) + t^2 P(t), x0 the positive zero of psi
  (1.4616...), P's coefficients psi^(n)(x0) / n! for n >= 2 (A&S 6.4), |t| <= 0.29.
- LGAMMA_MIN(t): lgamma(x0 + t) = lgamma(x0) + t^2 P(t) (lgamma' = psi is 0 at x0), P's
  coefficients psi^(n-1)(x0) / n! for n >= 2, |t| <= 0.29.
- LGAMMA_CENTERS: for c = 1.5, 2, 2.5, 3, lgamma(c + t) = lgamma(c) + psi(c) t + t^2 P_c(t)
  for |t| <= 1/4 (rune_jit/_src/scipy/lgamma.py), lgamma(c) and psi(c) as double-doubles,
  P_c's coefficients psi^(n-1)(c) / n! for n = 2 .. 22 (A&S 6.1.33's form around c; the
  first left out is below 2^-60 of lgamma(c + t) on the interval).
- DIGAMMA_CENTERS: for c = 2, 2.5, 3, psi(c + t) = psi(c) + psi'(c) t + t^2 P_c(t) for
  |t| <= 1/4, psi(c) and psi'(c) double-doubles, P_c's coefficients psi^(n)(c) / n!.
- ZETA2: zeta(2) = pi^2 / 6 as a double-double (psi(1 + z) = -γ + zeta(2) z - ...).
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 50
ROOT = mp.findroot(mp.digamma, mp.mpf("1.4616321449683623"))
REACH = mp.mpf("0.29")  # x0 + [-1/4, 0.29] reaches 1.75, where gammaln's series around 2 starts


def double_double(v) -> str:
    hi = float(v)
    return f"({hi!r}, {float(v - hi)!r})"


def show(name: str, coefficients, first_left_out) -> None:
    """Highest power first, as special.py's Horner's rule takes them."""
    print(f"{name} = {tuple(float(c) for c in reversed(coefficients))!r}  # next term "
          f"2^{float(mp.log(abs(first_left_out), 2)):.1f}")


def erfinv_q(terms: int = 12) -> None:
    c = [2 / mp.sqrt(mp.pi) * (-1) ** n / (mp.factorial(n) * (2 * n + 1))
         for n in range(terms + 1)]
    c[0] -= 1
    show("ERFINV_Q", c, c[terms] / 4 ** terms)  # the last kept, at z = 1/4, as a bound


def around_root(name: str, derivative, first: int, terms: int) -> None:
    """Coefficients derivative(n) / n! for n = first .., as P(t)'s from t^0."""
    c = [derivative(n) / mp.factorial(n) for n in range(first, first + terms + 1)]
    show(name, c[:-1], c[-1] * REACH ** (terms + first))


LGAMMA_TERMS = 21  # t^2 .. t^22


def lgamma_centers() -> None:
    """Each center's (lgamma(c), psi(c), P_c highest power first), and the largest first
    term left out relative to the smallest |lgamma| on c + [-1/4, 1/4] (|psi(2)| t at 2)."""
    rows, worst = [], 0
    for c in (mp.mpf(3) / 2, mp.mpf(2), mp.mpf(5) / 2, mp.mpf(3)):
        coefs = [mp.polygamma(n - 1, c) / mp.factorial(n) for n in range(2, LGAMMA_TERMS + 3)]
        quarter = mp.mpf(1) / 4
        smallest = (abs(mp.digamma(c)) * quarter if c == 2 else
                    min(abs(mp.loggamma(c + d)) for d in (-quarter, 0, quarter)))
        worst = max(worst, abs(coefs[-1]) * quarter ** (LGAMMA_TERMS + 2) / smallest)
        rows.append(f"    ({double_double(mp.loggamma(c))}, {double_double(mp.digamma(c))},\n"
                    f"     {tuple(float(a) for a in reversed(coefs[:-1]))!r}),")
    print(f"LGAMMA_CENTERS = (  # next term 2^{float(mp.log(worst, 2)):.1f} relative\n"
          + "\n".join(rows) + "\n)")


def digamma_centers(terms: int = 19) -> None:
    """As lgamma_centers, for psi around 2, 2.5 and 3 (psi >= 0.2 on each interval)."""
    rows, worst = [], 0
    quarter = mp.mpf(1) / 4
    for c in (mp.mpf(2), mp.mpf(5) / 2, mp.mpf(3)):
        coefs = [mp.polygamma(n, c) / mp.factorial(n) for n in range(2, terms + 3)]
        worst = max(worst, abs(coefs[-1]) * quarter ** (terms + 2) / mp.digamma(c - quarter))
        rows.append(f"    ({double_double(mp.digamma(c))}, {double_double(mp.polygamma(1, c))},\n"
                    f"     {tuple(float(a) for a in reversed(coefs[:-1]))!r}),")
    print(f"DIGAMMA_CENTERS = (  # next term 2^{float(mp.log(worst, 2)):.1f} relative\n"
          + "\n".join(rows) + "\n)")
    print(f"ZETA2 = {double_double(mp.zeta(2))}")


def main() -> None:
    erfinv_q()
    print(f"ROOT = {double_double(ROOT)}")
    print(f"TRIGAMMA_ROOT = {double_double(mp.polygamma(1, ROOT))}")
    print(f"LGAMMA_AT_ROOT = {double_double(mp.loggamma(ROOT))}")
    around_root("DIGAMMA_ROOT", lambda n: mp.polygamma(n, ROOT), 2, 25)
    around_root("LGAMMA_MIN", lambda n: mp.polygamma(n - 1, ROOT), 2, 23)
    lgamma_centers()
    digamma_centers()


if __name__ == "__main__":
    main()
