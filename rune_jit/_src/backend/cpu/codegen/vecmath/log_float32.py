"""log, log2 and log10 of float32 computed in float32 lanes (twice float64's per vector
register).

x = 2^k (1 + f) with 1 + f in [2/3, 4/3) (an offset subtracted from x's bits moves the
exponent's step to 2/3; a subnormal x is made normal from its bits first,
kit.subnormal_scaled), f exact, and log(1 + f) = f + f^2 P(f) with P a polynomial of
degree 9 (tools/minimax_exp_log.py: 2^-28.1 relative),
no division. log_b(x) = k log_b(2) + (f + f^2 P) / ln(b): k log_b(2)_hi (exact: 16 bits
or fewer) and f / ln(b) (f itself for log, else an exact product f m_hi, m = 1/ln(b) as
hi + lo) are summed exactly (the first is the larger where k is not 0: Fast2Sum), their
rounding errors, k log_b(2)_lo, f m_lo and f^2 P m added after: one sizeable rounding,
the last (docs/accuracy.md has the measured errors).
Zero, negatives, inf and NaN are found by one unsigned comparison of x's bits, and their
results selected (`log`).

    >>> x = np.array([0.0, 1e-40, 0.5, 1.0, 10.0, np.inf, -1.0], dtype=np.float32)
    >>> print(rune.jit(rnp.log)(x).tolist())
    [-inf, -92.10340881347656, -0.6931471824645996, 0.0, 2.3025851249694824, inf, nan]
"""

from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I32
from . import kit
from .kit import c, fma

P = (0.11612757295370102, -0.12726928293704987, 0.10853172838687897, -0.12221235036849976,
     0.14296185970306396, -0.16677981615066528, 0.19999852776527405, -0.24999840557575226,
     0.3333333432674408, -0.5)  # (log(1 + f) - f) / f^2 on |f| <= 1/3, highest power first
TWO_THIRDS_BITS = 0x3F2AAAAB  # 2/3 rounded up


class Base(NamedTuple):
    """log_b(x) = k log_b(2) + log(1 + f) m, m = 1 / ln(b)."""
    log2: tuple[float, float]  # log_b(2) as hi (16 bits or fewer) + lo
    scale: tuple[float, float] | None  # m as float32 hi + lo; None: 1


NATURAL = Base((0.693145751953125, 1.428606765330187e-06), None)
BINARY = Base((1.0, 0.0), (1.4426950216293335, 1.925963033500011e-08))
DECIMAL = Base((0.301025390625, 4.605039066518657e-06),
               (0.4342944920063019, -1.0103049952192578e-08))


def log_of(base: Base):
    """The body of log_b for float32 x (a scalar or a vector)."""
    return lambda b, x: log(b, x, base)


def log(b: ir.IRBuilder, x: ir.Value, base: Base = NATURAL) -> ir.Value:
    """log_b(x) for float32 x (a scalar or a vector): NumPy's -inf at ±0, NaN below, inf
    at inf and NaN at NaN, where the bits minus 1 are not below those of inf minus 1."""
    it = A.like(x.type, I32)
    bits = b.bitcast(x, it)
    odd = b.icmp_unsigned(">=", b.sub(bits, A.constant(it, 1)), A.constant(it, 0x7F7FFFFF))
    special = b.select(b.fcmp_ordered("<", x, c(x, 0.0)), c(x, float("nan")), x)
    special = b.select(b.fcmp_ordered("==", x, c(x, 0.0)), c(x, float("-inf")), special)
    return b.select(odd, special, _positive(b, x, base))


def _positive(b: ir.IRBuilder, x: ir.Value, base: Base) -> ir.Value:
    """log_b(x) for x > 0 finite."""
    it = A.like(x.type, I32)
    tiny = b.fcmp_ordered("<", x, c(x, 2.0 ** -126))
    scaled, shift = kit.subnormal_scaled(b, x)  # no arithmetic on a subnormal
    u = b.bitcast(b.select(tiny, scaled, x), it)
    offset = b.sub(u, A.constant(it, TWO_THIRDS_BITS))
    k = b.sitofp(b.ashr(offset, A.constant(it, 23)), x.type)
    k = b.fsub(k, b.select(tiny, c(x, float(shift)), c(x, 0.0)))
    mantissa = b.sub(u, b.and_(offset, A.constant(it, -1 << 23)))
    f = b.fsub(b.bitcast(mantissa, x.type), c(x, 1.0))
    tail = b.fmul(b.fmul(f, f), kit.estrin(b, f, P))  # log(1 + f) - f
    low = b.fmul(k, c(x, base.log2[1]))
    if base.scale is None:
        scaled = f
    else:
        m, m_low = c(x, base.scale[0]), c(x, base.scale[1])
        scaled = b.fmul(f, m)
        low = b.fadd(low, fma(b, f, m_low, fma(b, f, m, b.fneg(scaled))))
        tail = b.fmul(tail, m)
    s, err = kit.fast_two_sum(b, b.fmul(k, c(x, base.log2[0])), scaled)
    return b.fadd(s, b.fadd(tail, b.fadd(low, err)))
