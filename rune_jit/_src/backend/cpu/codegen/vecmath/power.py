"""x ** y of our own for floats (NumPy's power, C's pow): 2^(y log2|x|) with log2|x| and
the product as double-doubles, and C99's special values by selects.

log2|x| = k + log(1 + f) / ln2 (log.py's reduction): log(1 + f) = 2 s + (2/3) s^3 + s^5
Q1(s^2) with s = f / (2 + f) a double-double, its first two terms summed in double-double
arithmetic (Muller et al., "Handbook of Floating-Point Arithmetic", ch. 4) so that only
s^5 Q1, under 2^-12 of the result, is rounded: log2|x| to about 2^-66 relative. Then t =
y log2|x| = th + tl (a fused multiply-add keeps the product's rounding error), and
2^t = 2^n 2^d with n = round(th), d = th - n exact, and (d + tl) ln2 renormalized into
r + c for exp.py's polynomial. An error e in t is an error e ln2 in x ** y relative: with
|t| < 1075 wherever the result is finite and not 0, 2^-66 |t| stays far below an ulp.
float32 is computed in float64 (log.py's float32 log2, exp.py's float32 2^t) and rounded
once.

    >>> x = np.array([2.0, 2.0, -2.0, -8.0, 0.0, -0.0, 10.0])
    >>> y = np.array([0.5, -1.0, 3.0, 1 / 3, -1.0, -3.0, 300.0])
    >>> print(rune.jit(rnp.power)(x, y).round(4).tolist())
    [1.4142, 0.5, -8.0, nan, inf, -inf, 1e+300]
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I64
from . import exp, kit, log, outlined
from .kit import c, fma


class Coefficients(NamedTuple):
    log: Sequence[float]  # Q1(z) = (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5, z = s^2
    exp: exp.Coefficients


FLOAT64 = Coefficients(  # tools/minimax_exp_log.py
    log=(0.11723051028097753, 0.11706248540922386, 0.13334804238225345, 0.15384594970895457,
         0.18181818335314404, 0.22222222221656232, 0.28571428571429364, 0.4),
    exp=exp.FLOAT64)
FLOAT32 = Coefficients(log=(), exp=exp.FLOAT32)  # log.py's float32 log2 instead
TWO_THIRDS = (0.6666666666666666, 3.700743415417188e-17)
LOG2E = (1.4426950408889634, 2.0355273740931033e-17)


def _product(b: ir.IRBuilder, xh: ir.Value, xl: ir.Value,
             y: tuple[float, float] | tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
    """(xh + xl)(yh + yl) as a double-double (the terms of order xl yl dropped)."""
    yh, yl = (c(xh, v) for v in y) if isinstance(y[0], float) else y
    h = b.fmul(xh, yh)
    return h, b.fadd(fma(b, xh, yh, b.fneg(h)), fma(b, xl, yh, b.fmul(xh, yl)))


def log2_double(b: ir.IRBuilder, q1: Sequence[float], ax: ir.Value) -> tuple[ir.Value,
                                                                            ir.Value]:
    """log2(ax) as hi + lo, for ax > 0 finite."""
    k, f = log.split(b, ax)
    d, d_low = kit.fast_two_sum(b, c(f, 2.0), f)
    inv = b.fdiv(c(f, 1.0), d)
    s = b.fmul(f, inv)
    t = b.fmul(b.fsub(fma(b, b.fneg(s), d, f), b.fmul(s, d_low)), inv)  # s + t = f / d
    z = b.fmul(s, s)
    z_low = fma(b, s, s, b.fneg(z))
    cube_h, cube_l = _product(b, z, z_low, (s, t))
    cube_l = fma(b, c(f, 2.0), b.fmul(z, t), cube_l)  # (s + t)^3 = s^3 + 3 s^2 t + ...
    third_h, third_l = _product(b, cube_h, cube_l, TWO_THIRDS)
    rest = b.fmul(b.fmul(cube_h, z), kit.estrin(b, z, q1))
    hi, e = kit.fast_two_sum(b, b.fadd(s, s), third_h)
    lo = b.fadd(e, b.fadd(b.fadd(b.fadd(t, t), third_l), rest))
    mh, ml = _product(b, hi, lo, LOG2E)
    th, tl = kit.fast_two_sum(b, k, mh)
    return th, b.fadd(tl, ml)


def _magnitude(b: ir.IRBuilder, k: Coefficients, ax: ir.Value, y: ir.Value) -> ir.Value:
    """ax ** y for ax > 0 finite, y finite. float32's (in float64) takes log2 in plain
    float64 arithmetic: its error, under 2^-50 |t| for |t| < 160, is far below theirs."""
    if k.exp.precise:
        lh, ll = log2_double(b, k.log, ax)
        th, tl = _product(b, lh, ll, (y, c(y, 0.0)))
    else:
        e, f = log.split(b, ax)
        th, tl = b.fmul(y, log.combine(b, log.BINARY, e, *log.log1p_f(b, log.FLOAT32, f),
                                       False)), c(y, 0.0)
    low, high = k.exp.ranges.exp2
    inside = b.and_(b.fcmp_ordered(">", th, c(th, low)), b.fcmp_ordered("<", th, c(th, high)))
    tl = b.select(inside, tl, c(tl, 0.0))  # else NaN where y log2|x| overflows
    th = kit.clamp(b, th, low, high)
    n = kit.round_to_integer(b, th)
    d = b.fsub(th, n)
    rh = b.fmul(d, c(d, exp.LN2[0]))
    rc = fma(b, d, c(d, exp.LN2[0]), b.fneg(rh))
    rc = b.fadd(rc, fma(b, tl, c(d, exp.LN2[0]), b.fmul(d, c(d, exp.LN2[1]))))
    r, rc = kit.two_sum(b, rh, rc)  # rc below r's ulp: e^(r + rc) = e^r (1 + rc)
    return exp.scaled(b, k.exp, exp.Reduced(n, r, rc))


def _is_integer(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", A.intrinsic(b, "floor", v), v)


def _power(b: ir.IRBuilder, k: Coefficients, x: ir.Value, y: ir.Value) -> ir.Value:
    """C99's pow (Annex F.10.4.4), NumPy's: y = ±0 or x = 1 give 1 (even with a NaN); a
    NaN otherwise gives NaN, as does x < 0 (finite) to a non-integer y; (-1) ** ±inf is
    1; a zero, an
    infinite x or y give 0 or inf by whether y log|x| is negative or positive, negative
    where x is negative (or -0) and y an odd integer."""
    one = c(x, 1.0)
    ax = A.intrinsic(b, "fabs", x)
    inf = c(x, float("inf"))
    ordinary = b.and_(b.and_(b.fcmp_ordered(">", ax, c(x, 0.0)), b.fcmp_ordered("<", ax, inf)),
                      b.fcmp_ordered("<", A.intrinsic(b, "fabs", y), inf))
    grows = b.xor(b.fcmp_ordered(">", y, c(y, 0.0)), b.fcmp_ordered("<", ax, one))
    out = b.select(ordinary, _magnitude(b, k, ax, y), b.select(grows, inf, c(x, 0.0)))
    half = b.fmul(y, c(y, 0.5))
    odd = b.and_(_is_integer(b, y), b.not_(_is_integer(b, half)))
    it = A.like(x.type, I64)
    negative = b.icmp_signed("<", b.bitcast(x, it), A.constant(it, 0))  # -0 too
    out = b.select(b.and_(negative, odd), b.fneg(out), out)
    bad = b.and_(b.fcmp_ordered("<", x, c(x, 0.0)),
                 b.and_(b.fcmp_ordered("<", ax, inf), b.not_(_is_integer(b, y))))
    out = b.select(bad, c(x, float("nan")), out)
    out = b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), out)
    unit = b.or_(b.fcmp_ordered("==", x, one),  # and (-1) ** ±inf
                 b.and_(b.fcmp_ordered("==", ax, one), b.fcmp_ordered("==", A.intrinsic(
                     b, "fabs", y), inf)))
    return b.select(b.or_(b.fcmp_ordered("==", y, c(y, 0.0)), unit), one, out)


FUNCTIONS = {"pow": outlined.in_float64("pow", _power, FLOAT64, FLOAT32, nargs=2)}
