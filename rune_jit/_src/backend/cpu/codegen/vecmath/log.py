"""log, log2, log10 and log1p of our own: one reduction, one polynomial, a double-double
result.

Cody and Waite's method ("Software Manual for the Elementary Functions", 1980, ch. 5):
x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)) (found by adding an offset to x's
bits, so that the exponent field steps at sqrt(2)), and log(1 + f) = 2 atanh(s) = 2 s +
s^3 Q(s^2) with s = f / (2 + f), |s| <= 0.1716, Q a Chebyshev approximation
(tools/minimax_exp_log.py: 2^-60 in float64). s is kept as a double-double (s + t, t from
the division's exact remainder), so log(1 + f) = 2 s + (2 t + s^3 Q) has an error far
below float64's; log_b(x) = k log_b(2) + log(1 + f) / ln(b) is then summed in
double-double arithmetic (Muller et al., "Handbook of Floating-Point Arithmetic", ch. 4),
with log_b(2) as hi + lo (hi with 32 bits, so that k hi is exact), and rounded once
(docs/accuracy.md has the measured errors). log1p takes 1 + x rounded, u, and adds
log(1 + x) - log(u) = (x - (u - 1)) / u, the sum's exact error over u.

float32 is computed in float64 with a shorter polynomial, without the double-doubles, and
rounded once
(kit.in_float64). No branches: zero, negatives, inf and NaN are selected at the end (a
subnormal x is made normal from its bits first, kit.subnormal_scaled; log1p of a
subnormal is x itself).

    >>> x = np.array([0.0, 1e-300, 0.5, 1.0, 10.0, np.inf, -1.0, np.nan])
    >>> print(rune.jit(rnp.log)(x).round(4))
    [     -inf -690.7755   -0.6931    0.        2.3026       inf       nan
           nan]
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F64, I64
from . import kit, log_float32
from .kit import c, fma

class Coefficients(NamedTuple):
    q: Sequence[float]  # Q(z), highest power first: tools/minimax_exp_log.py
    precise: bool  # double-doubles for float64's results; float32's need none


FLOAT64 = Coefficients((0.13086626147840102, 0.13268773138656886, 0.15386239702814658,
                        0.18181795640132906, 0.22222222391713917, 0.28571428570803614,
                        0.4000000000000088, 0.6666666666666666), precise=True)
FLOAT32 = Coefficients((0.23330467216303835, 0.28550820815960665, 0.40000121839806124,
                        0.6666666655449709), precise=False)

SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # sqrt(2)/2's bits
ONE_BITS = 0x3FF0000000000000
MANTISSA = (1 << 52) - 1


class Base(NamedTuple):
    """log_b(x) = k log_b(2) + log(1 + f) / ln(b)."""
    log2: tuple[float, float]  # log_b(2) as hi + lo, hi with 32 bits
    scale: tuple[float, float] | None  # 1 / ln(b) as a double-double; None: 1


NATURAL = Base((0.6931471803691238, 1.9082149292705877e-10), None)
BINARY = Base((1.0, 0.0), (1.4426950408889634, 2.0355273740931033e-17))
DECIMAL = Base((0.3010299955494702, 1.1451100898021838e-10),
               (0.4342944819032518, 1.098319650216765e-17))


def split(b: ir.IRBuilder, u: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(k, f) with u = 2^k (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)), for u > 0 finite; k
    an integer-valued float."""
    tiny = b.fcmp_ordered("<", u, c(u, 2.0 ** -1022))
    scaled, shift = kit.subnormal_scaled(b, u)  # no arithmetic on a subnormal
    u = b.select(tiny, scaled, u)
    it = A.like(u.type, I64)
    bits = b.add(b.bitcast(u, it), A.constant(it, ONE_BITS - SQRT_HALF_BITS))
    mantissa = b.add(b.and_(bits, A.constant(it, MANTISSA)), A.constant(it, SQRT_HALF_BITS))
    # the exponent field as a float: its bits under 2^52's exponent, less 2^52 and the bias
    exponent = b.or_(b.lshr(bits, A.constant(it, 52)), A.constant(it, ONE_BITS + (52 << 52)))
    k = b.fsub(b.bitcast(exponent, u.type), c(u, 2.0 ** 52 + 1023))
    k = b.fsub(k, b.select(tiny, c(u, float(shift)), c(u, 0.0)))
    return k, b.fsub(b.bitcast(mantissa, u.type), c(u, 1.0))


def log1p_f(b: ir.IRBuilder, k: Coefficients, f: ir.Value) -> tuple[ir.Value, ir.Value]:
    """log(1 + f) as hi + lo: 2 s + (2 t + s^3 Q(s^2)), s + t = f / (2 + f) (t = 0 where
    not `precise`)."""
    if k.precise:
        d, d_low = kit.fast_two_sum(b, c(f, 2.0), f)
        inv = b.fdiv(c(f, 1.0), d)
        s = b.fmul(f, inv)
        t2 = b.fmul(b.fsub(fma(b, b.fneg(s), d, f), b.fmul(s, d_low)), b.fadd(inv, inv))
    else:
        s, t2 = b.fdiv(f, b.fadd(c(f, 2.0), f)), c(f, 0.0)
    z = b.fmul(s, s)
    return b.fadd(s, s), fma(b, b.fmul(s, z), kit.estrin(b, z, k.q), t2)


def combine(b: ir.IRBuilder, base: Base, k: ir.Value, hi: ir.Value, lo: ir.Value,
             precise: bool) -> ir.Value:
    """k log_b(2) + (hi + lo) / ln(b), rounded once. |k log_b 2| >= |the rest| where k is
    not 0: Fast2Sum suffices. Not `precise`: in plain float64 arithmetic."""
    if not precise:
        scale = 1.0 if base.scale is None else base.scale[0]
        return fma(b, k, c(k, sum(base.log2)), b.fmul(b.fadd(hi, lo), c(hi, scale)))
    if base.scale is not None:
        big, small = c(hi, base.scale[0]), c(hi, base.scale[1])
        m = b.fmul(hi, big)
        lo = b.fadd(fma(b, hi, big, b.fneg(m)), fma(b, lo, big, b.fmul(hi, small)))
        hi = m
    s, e = kit.fast_two_sum(b, b.fmul(k, c(k, base.log2[0])), hi)
    return b.fadd(s, b.fadd(e, fma(b, k, c(k, base.log2[1]), lo)))


def _special(b: ir.IRBuilder, x: ir.Value, edge: float, out: ir.Value) -> ir.Value:
    """`out` for x in (edge, inf); -inf at edge, NaN below it, x itself at inf and NaN."""
    inside = b.and_(b.fcmp_ordered(">", x, c(x, edge)), b.fcmp_ordered("<", x, c(x, float("inf"))))
    at_edge = b.select(b.fcmp_ordered("==", x, c(x, edge)), c(x, float("-inf")), x)
    below = b.select(b.fcmp_ordered("<", x, c(x, edge)), c(x, float("nan")), at_edge)
    return b.select(inside, out, below)


def _log_of(base: Base):
    def body(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
        e, f = split(b, x)
        return _special(b, x, 0.0, combine(b, base, e, *log1p_f(b, k, f), k.precise))
    return body


def log_of_sum(b: ir.IRBuilder, k: Coefficients, u: ir.Value, error: ir.Value,
               doubled: ir.Value | None = None) -> ir.Value:
    """log(u + error) rounded once, for u > 0 finite and |error| <= u 2^-50: log(u) +
    error / u (the next term, (error / u)^2 / 2, is below 2^-100). Where the mask
    `doubled` is set, log(2 u): one more ln2 (for u too large to double)."""
    e, f = split(b, u)
    if doubled is not None:
        e = b.fadd(e, b.select(doubled, c(u, 1.0), c(u, 0.0)))
    hi, lo = log1p_f(b, k, f)
    return combine(b, NATURAL, e, hi, b.fadd(lo, b.fdiv(error, u)), k.precise)


def _log1p(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    """log(u) + (x - (u - 1)) / u for u = 1 + x rounded (the correction's subtractions
    are exact: Fast2Sum, the larger of 1 and x first); ±0 and subnormals give themselves
    (and are kept out of the arithmetic: kit.without_tiny)."""
    small, x0 = kit.without_tiny(b, x)
    one = c(x, 1.0)
    u = b.fadd(one, x0)
    big = b.fcmp_ordered(">", A.intrinsic(b, "fabs", x0), one)
    error = b.select(big, b.fsub(one, b.fsub(u, x0)), b.fsub(x0, b.fsub(u, one)))
    out = log_of_sum(b, k, u, error)
    return _special(b, x, -1.0, b.select(small, x, out))


def _in_lanes(base: Base, single: log_float32.Base):
    """log_b: this module's in float64, log_float32.py's in float32 lanes for float32."""
    wide, narrow = kit.in_float64(_log_of(base), FLOAT64, FLOAT32), log_float32.log_of(single)
    return lambda b, x: (wide if A.element(x.type) == F64 else narrow)(b, x)


FUNCTIONS = {"log": _in_lanes(NATURAL, log_float32.NATURAL),
             "log2": _in_lanes(BINARY, log_float32.BINARY),
             "log10": _in_lanes(DECIMAL, log_float32.DECIMAL),
             "log1p": kit.in_float64(_log1p, FLOAT64, FLOAT32)}
