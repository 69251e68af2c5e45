"""exp and exp2 of float32 computed in float32 lanes (twice float64's per vector register).

Cody and Waite's reduction ("Software Manual for the Elementary Functions", 1980, ch. 6)
in float32 with fused multiply-adds: n = round(x / ln2) from the low bits of x / ln2 +
1.5 2^23, x = n ln2 + h + l with h = x - n ln2_hi exact (ln2_hi has 12 trailing zero
bits and |n| <= 150) and l = -n ln2_lo; e^x = 2^n (1 + p), p = h + (l + r^2 q(r)), r = h
+ l, q of degree 4 (tools/minimax_exp_log.py: 2^-26.5 relative). p rounds once, and the
result s + s p once (s = 2^n): within 1 ulp (docs/accuracy.md has the measured errors).
2^n is split into 2^ceil(n/2) 2^floor(n/2) from the exponent bits, so that results
overflow and go subnormal where e^x does; x is clamped to [-104, 89] first (inf and
-inf give inf and 0, a NaN passes).

    >>> x = np.array([-104.0, -1.0, 0.0, 1.0, 88.0, 89.0], dtype=np.float32)
    >>> print(rune.jit(rnp.exp)(x).tolist())
    [0.0, 0.3678794503211975, 1.0, 2.7182817459106445, 1.6516362661361307e+38, inf]
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I32
from . import kit
from .kit import c, fma

SHIFT = 1.5 * 2.0 ** 23  # x / ln2 + SHIFT holds round(x / ln2) in its low bits
INV_LN2 = 1.4426950216293335
LN2 = (0.693145751953125, 1.428606765330187e-06)  # hi (12 trailing zero bits) + lo
Q = (0.0013926926767453551, 0.008363774046301842, 0.04166654869914055,
     0.16666573286056519, 0.5)  # (e^r - 1 - r) / r^2, highest power first
LN2_ROUNDED = (0.6931471824645996, -1.9046542121259336e-09)  # ln2 to float32 + the rest
CLAMP = (-104.0, 89.0)
CLAMP2 = (-151.0, 129.0)  # exp2's


def exp(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """e^x for float32 x (a scalar or a vector)."""
    x = kit.without_tiny(b, x, kit.clamp(b, x, *CLAMP))[1]  # e^x rounds to 1 there
    z = fma(b, x, c(x, INV_LN2), c(x, SHIFT))
    n = b.fsub(z, c(x, SHIFT))
    h = fma(b, n, c(x, -LN2[0]), x)
    return scale(b, z, expm1_of_sum(b, h, b.fmul(n, c(x, -LN2[1]))))


def exp2(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """2^x for float32 x: x = n + d exactly, d ln2 = h + low (an exact product and the
    rest of ln2), then exp's polynomial and scale."""
    x = kit.without_tiny(b, x, kit.clamp(b, x, *CLAMP2))[1]  # 2^x rounds to 1 there
    z = b.fadd(x, c(x, SHIFT))
    d = b.fsub(x, b.fsub(z, c(x, SHIFT)))
    h = b.fmul(d, c(x, LN2_ROUNDED[0]))
    low = fma(b, d, c(x, LN2_ROUNDED[1]), fma(b, d, c(x, LN2_ROUNDED[0]), b.fneg(h)))
    return scale(b, z, expm1_of_sum(b, h, low))


def expm1_of_sum(b: ir.IRBuilder, h: ir.Value, low: ir.Value) -> ir.Value:
    """e^(h + low) - 1 = h + (low + r^2 q(r)), r = h + low, |low| far below |h|."""
    r = b.fadd(h, low)
    return b.fadd(h, fma(b, b.fmul(r, r), kit.estrin(b, r, Q), low))


def scale(b: ir.IRBuilder, z: ir.Value, p: ir.Value) -> ir.Value:
    """2^n (1 + p) for n in the low bits of z (|n| < 256), rounded once where normal."""
    it = A.like(z.type, I32)
    top = b.shl(b.bitcast(z, it), A.constant(it, 23))  # n in the exponent field
    half = b.shl(b.ashr(top, A.constant(it, 24)), A.constant(it, 23))  # floor(n/2) there
    one = A.constant(it, 127 << 23)
    s1 = b.bitcast(b.add(b.sub(top, half), one), p.type)
    s2 = b.bitcast(b.add(half, one), p.type)
    # n <= -127 (not for a NaN): the result is below 2^-126 (1 + p < sqrt(2))
    low = b.fcmp_ordered("<", z, c(z, SHIFT - 126))
    return kit.times_scale(b, fma(b, s1, p, s1), s2, low)
