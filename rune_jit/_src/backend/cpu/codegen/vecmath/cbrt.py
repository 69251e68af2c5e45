"""cbrt of our own: a polynomial first guess and Newton's iterations, the last one on a
residual computed exactly.

|x| = 2^(3q + j) m with m in [1, 2) and j in {0, 1, 2} (the exponent field read from
the bits, q = floor(e / 3); a subnormal scaled by 2^54 first), so cbrt|x| = 2^q
cbrt(z), z = 2^j m in [1, 8) (Muller, "Elementary Functions", 3rd ed., 2016, ch. 5 and
9; W. Kahan, "Computing a real cube root", 1991). y0 = P(m) cbrt(2^j), P a minimax fit of
m^(1/3) on [1, 2] (tools/minimax_cbrt_erf.py: 2^-16.7 relative), cbrt(2^j) by selects;
Newton's step for y^3 = z, y + (z - y^3) / (3 y^2), squares the relative error: 2^-33
after the first. The second takes the residual z - y^3 exactly (y^2 and y^2 y as exact
products by fused multiply-adds; z - t exact, t being within 2^-32 of z), so its result
is within 2^-66 of cbrt(z) before its one rounding (Muller et al., "Handbook of
Floating-Point Arithmetic", 2nd ed., 2018, ch. 4 and 5). The scale 2^q is exact (the
result is normal for every x).

float32 is computed in float64 with the second step in plain arithmetic (2^-52) and
rounded once (kit.in_float64). Special values as NumPy's: ±0, ±inf and NaN give
themselves; the sign of x is kept.

    >>> print(rune.jit(rnp.cbrt)(np.array([-27.0, -0.0, 1e-300, 2.0, 8.0, np.inf])).tolist())
    [-3.0, -0.0, 1e-100, 1.2599210498948732, 2.0, inf]
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I64
from . import kit
from .kit import c, fma

P = (-0.010603508924186074, 0.08608904391074251, -0.30060652564325574, 0.7181491461524883,
     0.5069810545125126)  # m^(1/3) on [1, 2], to 2^-16.7 relative: tools/minimax_cbrt_erf.py
CBRT_2 = (1.2599210498948732, 1.5874010519681996)  # 2^(1/3), 2^(2/3)
ONE_BITS = 0x3FF0000000000000
MANTISSA = (1 << 52) - 1


def _split(b: ir.IRBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(q, j, m) with a = 2^(3q + j) m, m in [1, 2), j in {0, 1, 2}: integer-valued floats,
    for a > 0 finite."""
    tiny = b.fcmp_ordered("<", a, c(a, 2.0 ** -1022))
    a = b.select(tiny, b.fmul(a, c(a, 2.0 ** 54)), a)
    it = A.like(a.type, I64)
    bits = b.bitcast(a, it)
    m = b.bitcast(b.or_(b.and_(bits, A.constant(it, MANTISSA)), A.constant(it, ONE_BITS)),
                  a.type)
    # the exponent field as a float: its bits under 2^52's exponent, less 2^52 and the bias
    field = b.or_(b.lshr(bits, A.constant(it, 52)), A.constant(it, ONE_BITS + (52 << 52)))
    e = b.fsub(b.bitcast(field, a.type), c(a, 2.0 ** 52 + 1023))
    e = b.fsub(e, b.select(tiny, c(a, 54.0), c(a, 0.0)))
    q = A.intrinsic(b, "floor", b.fdiv(e, c(a, 3.0)))  # e / 3 exact where e is a multiple
    return q, fma(b, q, c(a, -3.0), e), m


def _newton(b: ir.IRBuilder, y: ir.Value, z: ir.Value, precise: bool) -> ir.Value:
    """y + (z - y^3) / (3 y^2), the residual exact where `precise`."""
    s, s_low = kit.two_prod(b, y, y)
    if precise:
        t, t_low = kit.two_prod(b, s, y)
        residual = b.fsub(b.fsub(z, t), fma(b, s_low, y, t_low))
    else:
        residual = fma(b, b.fneg(s), y, z)
    return fma(b, residual, b.fdiv(c(y, 1.0 / 3.0), s), y)


def _cbrt(b: ir.IRBuilder, precise: bool, x: ir.Value) -> ir.Value:
    a = A.intrinsic(b, "fabs", x)
    q, j, m = _split(b, a)
    one, two = b.fcmp_ordered("==", j, c(j, 1.0)), b.fcmp_ordered("==", j, c(j, 2.0))
    scale = b.select(one, c(m, CBRT_2[0]), b.select(two, c(m, CBRT_2[1]), c(m, 1.0)))
    z = b.fmul(m, kit.pow2(b, j))
    y = b.fmul(kit.horner(b, m, P), scale)
    y = _newton(b, _newton(b, y, z, False), z, precise)
    out = A.intrinsic(b, "copysign", b.fmul(y, kit.pow2(b, q)), x)
    ordinary = b.and_(b.fcmp_ordered(">", a, c(a, 0.0)),
                      b.fcmp_ordered("<", a, c(a, float("inf"))))
    return b.select(ordinary, out, x)


FUNCTIONS = {"cbrt": kit.in_float64(_cbrt, True, False)}
