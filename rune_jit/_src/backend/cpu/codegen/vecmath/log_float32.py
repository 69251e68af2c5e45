"""log of float32 computed in float32 lanes (twice float64's per vector register).

x = 2^k (1 + f) with 1 + f in [2/3, 4/3) (an offset subtracted from x's bits moves the
exponent's step to 2/3; a subnormal x is scaled by 2^23 first), f exact, and log(1 + f)
= f + f^2 P(f) with P a polynomial of degree 8 (tools/minimax_exp_log.py: 2^-26.7 relative),
no division. k ln2 + f is summed exactly (k ln2_hi is exact, with 16 bits, and larger
than |f| where k is not 0: Fast2Sum), its rounding error, k ln2_lo and f^2 P added
after: one sizeable rounding, the last (docs/accuracy.md has the measured errors).
Zero, negatives, inf and NaN are found by one unsigned comparison of x's bits, and their
results selected (`log`).

    >>> x = np.array([0.0, 1e-40, 0.5, 1.0, 10.0, np.inf, -1.0], dtype=np.float32)
    >>> print(rune.jit(rnp.log)(x).tolist())
    [-inf, -92.10340881347656, -0.6931471824645996, 0.0, 2.3025851249694824, inf, nan]
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I32
from . import kit
from .kit import c, fma

P = (-0.1242276206612587, 0.1374891996383667, -0.1228862851858139, 0.14055711030960083,
     -0.16673320531845093, 0.20007239282131195, -0.24999944865703583, 0.33333271741867065,
     -0.5)  # (log(1 + f) - f) / f^2 on |f| <= 1/3, highest power first
TWO_THIRDS_BITS = 0x3F2AAAAB  # 2/3 rounded up
LN2 = (0.693145751953125, 1.428606765330187e-06)  # hi (16 bits) + lo


def log(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(x) for float32 x (a scalar or a vector): NumPy's -inf at ±0, NaN below, inf
    at inf and NaN at NaN, where the bits minus 1 are not below those of inf minus 1."""
    it = A.like(x.type, I32)
    bits = b.bitcast(x, it)
    odd = b.icmp_unsigned(">=", b.sub(bits, A.constant(it, 1)), A.constant(it, 0x7F7FFFFF))
    special = b.select(b.fcmp_ordered("<", x, c(x, 0.0)), c(x, float("nan")), x)
    special = b.select(b.fcmp_ordered("==", x, c(x, 0.0)), c(x, float("-inf")), special)
    return b.select(odd, special, _positive(b, x))


def _positive(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(x) for x > 0 finite."""
    it = A.like(x.type, I32)
    tiny = b.fcmp_ordered("<", x, c(x, 2.0 ** -126))
    u = b.bitcast(b.select(tiny, b.fmul(x, c(x, 2.0 ** 23)), x), it)
    offset = b.sub(u, A.constant(it, TWO_THIRDS_BITS))
    k = b.sitofp(b.ashr(offset, A.constant(it, 23)), x.type)
    k = b.fsub(k, b.select(tiny, c(x, 23.0), c(x, 0.0)))
    mantissa = b.sub(u, b.and_(offset, A.constant(it, -1 << 23)))
    f = b.fsub(b.bitcast(mantissa, x.type), c(x, 1.0))
    high = b.fmul(k, c(x, LN2[0]))
    s, err = kit.fast_two_sum(b, high, f)
    rest = fma(b, b.fmul(f, f), kit.estrin(b, f, P), fma(b, k, c(x, LN2[1]), err))
    return b.fadd(s, rest)
