"""arcsinh, arccosh and arctanh of our own: the logarithm of an argument carried as a
double-double, by log.py's reduction and polynomial.

asinh a = log(a + sqrt(a^2 + 1)), acosh x = log(x + sqrt(x^2 - 1)) and atanh a =
log((1 + a) / (1 - a)) / 2 (W. Kahan, "Branch cuts for complex elementary functions",
1987; Muller, "Elementary Functions", 3rd ed., 2016, ch. 11; Cody and Waite, "Software
Manual for the Elementary Functions", 1980). In float64 the argument u + error of the
logarithm is computed in double-double arithmetic (Muller et al., "Handbook of
Floating-Point Arithmetic", 2nd ed., 2018, ch. 4): a^2 and x^2 exact products, the sums
exact (2Sum), the square root's remainder by a fused multiply-add, the quotient's too;
log(u + error) = log(u) + error / u (log.log_of_sum), rounded once. So nothing cancels
near 0 (asinh, whose u - 1 is about a) or near 1 (acosh, whose x^2 - 1 is 2 (x - 1)
exactly kept): the argument's error, about 2^-104 absolute, stays far below the result's
ulp. Where the formulas lose:

- asinh a below 2^-26 rounds to a (a^3 / 6 is under a quarter of a's ulp): a itself;
- asinh and acosh past 2^28 are log(2 a) to 2^-58 (a^2 would overflow): log a + ln2;
- atanh a below 0.1716 is a + (a^3 / 2) Q(a^2) with log.py's Q (log(1 + f) = 2 atanh(s)
  = 2 s + s^3 Q(s^2)), where the quotient's logarithm would cancel.

float32 is computed in float64 without the double-doubles (a float32's square is exact
in float64, and the roundings of the argument are 2^-53 of it) and rounded once
(kit.in_float64). Special values as NumPy's (C99 Annex F): ±0 and ±inf give themselves
(arccosh(inf) = inf), acosh(1) = 0, atanh(±1) = ±inf, NaN outside the domain and for NaN.

    >>> x = np.array([-np.inf, -1.0, -0.0, 0.5, 1e300, np.nan])
    >>> print(rune.jit(rnp.arcsinh)(x).round(4).tolist())
    [-inf, -0.8814, -0.0, 0.4812, 691.4687, nan]
    >>> print(rune.jit(rnp.arctanh)(np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])).round(4))
    [   -inf -0.5493  0.      0.5493     inf     nan]
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from . import kit, log
from .kit import c, fma

HUGE = 2.0 ** 28  # log(2 a) past it: 1 / (4 a^2) < 2^-58
TINY = 2.0 ** -26  # asinh a rounds to a below it
SMALL = 0.1716  # atanh's polynomial below it: sqrt(2) - 1 over sqrt(2) + 1, log.py's s


def _square_root(b: ir.IRBuilder, q: ir.Value, q_low: ir.Value) -> tuple[ir.Value, ir.Value]:
    """sqrt(q + q_low) as r + r_low: r rounded, r_low from its exact remainder q - r^2."""
    r = A.intrinsic(b, "sqrt", q)
    rest = b.fadd(fma(b, b.fneg(r), r, q), q_low)
    return r, b.fdiv(rest, b.fadd(r, r))


def _root_sum(b: ir.IRBuilder, k: log.Coefficients, a: ir.Value,
              one: float) -> tuple[ir.Value, ir.Value]:
    """a + sqrt(a^2 + one) as u + error (one = ±1, a >= 1 where it is -1)."""
    if not k.precise:
        return b.fadd(a, A.intrinsic(b, "sqrt", fma(b, a, a, c(a, one)))), c(a, 0.0)
    p, p_low = kit.two_prod(b, a, a)
    q, q_low = kit.two_sum(b, p, c(a, one))
    r, r_low = _square_root(b, q, b.fadd(q_low, p_low))
    u, u_low = kit.fast_two_sum(b, r, a) if one > 0 else kit.fast_two_sum(b, a, r)
    return u, b.fadd(u_low, r_low)


def _log_root_sum(b: ir.IRBuilder, k: log.Coefficients, a: ir.Value, one: float) -> ir.Value:
    """log(a + sqrt(a^2 + one)), and log(2 a) past HUGE."""
    huge = b.fcmp_ordered(">", a, c(a, HUGE))
    u, error = _root_sum(b, k, a, one)
    u = b.select(huge, a, u)
    error = b.select(huge, c(a, 0.0), error)
    return log.log_of_sum(b, k, u, error, doubled=huge)


def _special(b: ir.IRBuilder, x: ir.Value, a: ir.Value, out: ir.Value) -> ir.Value:
    """out, but x itself where a is +inf or NaN."""
    ordinary = b.fcmp_ordered("<", a, c(a, float("inf")))
    return b.select(ordinary, out, x)


def _arcsinh(b: ir.IRBuilder, k: log.Coefficients, x: ir.Value) -> ir.Value:
    a = A.intrinsic(b, "fabs", x)
    out = _log_root_sum(b, k, a, 1.0)
    out = b.select(b.fcmp_ordered("<", a, c(a, TINY)), a, out)
    return _special(b, x, a, A.intrinsic(b, "copysign", out, x))


def _arccosh(b: ir.IRBuilder, k: log.Coefficients, x: ir.Value) -> ir.Value:
    """NaN below 1 (and -inf), 0 at 1 (where x^2 - 1's root is 0: its remainder 0/0)."""
    out = _log_root_sum(b, k, x, -1.0)
    out = b.select(b.fcmp_ordered("==", x, c(x, 1.0)), c(x, 0.0), out)
    out = b.select(b.fcmp_ordered("<", x, c(x, 1.0)), c(x, float("nan")), out)
    return _special(b, x, x, out)


def _quotient(b: ir.IRBuilder, k: log.Coefficients, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(1 + a) / (1 - a) as v + error, for 0 <= a < 1 (1 - a exact past 1/2)."""
    one = c(a, 1.0)
    if not k.precise:
        return b.fdiv(b.fadd(one, a), b.fsub(one, a)), c(a, 0.0)
    p, p_low = kit.fast_two_sum(b, one, a)
    m, m_low = kit.fast_two_sum(b, one, b.fneg(a))
    v = b.fdiv(p, m)
    rest = b.fsub(b.fadd(fma(b, b.fneg(v), m, p), p_low), b.fmul(v, m_low))
    return v, b.fdiv(rest, m)


def _arctanh(b: ir.IRBuilder, k: log.Coefficients, x: ir.Value) -> ir.Value:
    """±inf at ±1, NaN past them."""
    a = A.intrinsic(b, "fabs", x)
    z = b.fmul(a, a)
    small = fma(b, b.fmul(b.fmul(a, z), kit.estrin(b, z, k.q)), c(a, 0.5), a)
    v, error = _quotient(b, k, a)
    out = b.select(b.fcmp_ordered("<", a, c(a, SMALL)), small,
                   b.fmul(log.log_of_sum(b, k, v, error), c(a, 0.5)))
    out = b.select(b.fcmp_ordered("==", a, c(a, 1.0)), c(a, float("inf")), out)
    out = b.select(b.fcmp_unordered("ugt", a, c(a, 1.0)), c(a, float("nan")), out)
    return A.intrinsic(b, "copysign", out, x)


FUNCTIONS = {name: kit.in_float64(body, log.FLOAT64, log.FLOAT32) for name, body in
             {"arcsinh": _arcsinh, "arccosh": _arccosh, "arctanh": _arctanh}.items()}
