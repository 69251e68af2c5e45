"""exp by Tang's table-driven method (ACM TOMS 15(2), 1989), float64.

x = (256 m + j) ln2/256 + r, |r| <= ln2/512: n = 256 m + j = round(256 x / ln2) is read
from the low bits of x 256/ln2 + 1.5 2^52 (one fused multiply-add), r = x - n ln2/256
by two fused multiply-adds (ln2/256 as hi + lo). e^x = 2^m 2^(j/256) e^r, with 2^(j/256)
= h_j (1 + t_j) from two tables of 256 (h_j rounded to float64, t_j the relative rest,
read by two gathers) and e^r = 1 + r + r^2 q(r), q of degree 2 (2^-56.5 relative:
tools/minimax_exp_log.py). The result s + s (t_j + r + r^2 q) rounds once, s = 2^m h_j
built by adding m to h_j's exponent bits (the table holds h_j's bits less j 2^44, so
that adding n 2^44, the low bits of the rounding sum shifted, adds m to the exponent).
2^m is split into two factors 2^ceil(m/2) 2^floor(m/2) so that results overflow to inf
and go subnormal (and to 0) where e^x does; x is clamped to [-746, 710] first (inf and
-inf give inf and 0, a NaN passes). Measured (docs/accuracy.md): one gather and t_j
packed into the top bits of h_j's entry cost more than the second gather (5 integer
operations more); a table of 128 needs q of degree 3 (one fused multiply-add more).

    >>> print(rune.jit(rnp.exp)(np.array([-745.0, -1.0, 0.0, 709.0, 710.0])).tolist())
    [5e-324, 0.36787944117144233, 1.0, 8.218407461554972e+307, inf]
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from functools import lru_cache

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F64, I64
from . import kit, tables
from .kit import c, fma

BITS = 8  # the table has 2^BITS entries
SIZE = 1 << BITS
SHIFT = 1.5 * 2.0 ** 52  # x SIZE/ln2 + SHIFT holds round(x SIZE/ln2) in its low bits
INV_LN2_N = 369.3299304675746  # SIZE / ln2
LN2_N = (0.0027076061740622863, 9.058776616587108e-20)  # ln2 / SIZE as hi + lo
Q = (0.04166666857963567, 0.16666667814448077, 0.5)
CLAMP = (-746.0, 710.0)
CLAMP2 = (-1076.0, 1025.0)  # exp2's
LN2 = (0.6931471805599453, 2.3190468138462996e-17)  # as hi + lo


@lru_cache(maxsize=None)
def table_values() -> tuple[list[int], list[float]]:
    """(h_j's bits less j 2^44, t_j) for j < SIZE: 2^(j/SIZE) = h_j (1 + t_j), by the
    decimal module at 50 digits: powers of 2^(1/SIZE) by repeated products (each rounding
    10^-50 relative, 256 of them far below float64's 10^-16; a fractional power each
    would cost 20 ms, in the first compile of a process that uses exp)."""
    bits, rests = [], []
    with localcontext() as ctx:
        ctx.prec = 50
        root, exact = Decimal(2) ** (Decimal(1) / SIZE), Decimal(1)
        for j in range(SIZE):
            exact = exact * root if j else exact
            h = float(exact)
            bits.append(kit.bits(h) - (j << (52 - BITS)))
            rests.append(float((exact - Decimal(h)) / Decimal(h)))
    return bits, rests


def exp(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """e^x for float64 x (a scalar or a vector)."""
    x = kit.without_tiny(b, x, kit.clamp(b, x, *CLAMP))[1]  # e^x rounds to 1 there
    z = fma(b, x, c(x, INV_LN2_N), c(x, SHIFT))
    n = b.fsub(z, c(x, SHIFT))
    r = fma(b, n, c(x, -LN2_N[0]), x)
    return scaled(b, z, fma(b, n, c(x, -LN2_N[1]), r), None)


def exp2(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """2^x for float64 x: x = n/SIZE + d exactly (d = x - n/SIZE, Sterbenz), d ln2 as a
    double-double r + low, then exp's table, polynomial and scale."""
    x = kit.without_tiny(b, x, kit.clamp(b, x, *CLAMP2))[1]  # 2^x rounds to 1 there
    z = fma(b, x, c(x, float(SIZE)), c(x, SHIFT))
    d = fma(b, b.fsub(z, c(x, SHIFT)), c(x, -1.0 / SIZE), x)
    r = b.fmul(d, c(x, LN2[0]))
    low = fma(b, d, c(x, LN2[1]), fma(b, d, c(x, LN2[0]), b.fneg(r)))
    return scaled(b, z, r, low)


def scaled(b: ir.IRBuilder, z: ir.Value, r: ir.Value, low: ir.Value | None) -> ir.Value:
    """2^m 2^(j/SIZE) e^(r + low) for n = SIZE m + j in the low bits of z, |r| <= ln2 /
    (2 SIZE) and low far below r (None: 0)."""
    it = A.like(r.type, I64)
    k = b.bitcast(z, it)
    j = b.and_(k, A.constant(it, SIZE - 1))
    bits, rests = table_values()
    h = tables.lookup(b, tables.table(b.module, "table_exp_f64", I64, bits), j)
    t = tables.lookup(b, tables.table(b.module, "table_exp_rest_f64", F64, rests), j)
    r2 = b.fmul(r, r)
    p = fma(b, r2, kit.horner(b, r, Q), b.fadd(t if low is None else b.fadd(t, low), r))
    top = b.shl(k, A.constant(it, 52 - BITS))
    half = b.shl(b.ashr(top, A.constant(it, 53)), A.constant(it, 52))
    s1 = b.bitcast(b.sub(b.add(h, top), half), r.type)
    s2 = b.bitcast(b.add(half, A.constant(it, 1023 << 52)), r.type)
    # m <= -1023 (not for a NaN): the result is below 2^-1022 (2^(j/SIZE) e^r < 2)
    low = b.fcmp_ordered("<", z, c(z, SHIFT - 1022 * SIZE))
    return kit.times_scale(b, fma(b, s1, p, s1), s2, low)
