"""arctan of our own: straight-line arithmetic on a scalar or a vector alike, inlined.

Tang's table-driven method (P. T. P. Tang, "Table-driven implementation of the
exponential function...", ACM TOMS 15, 1989, applied to arctan as in Muller, "Elementary
Functions", 3rd ed., 2016, sec. 6.2), with a table small enough to be selects (no
memory access, no branch):

- a = |x|, t = a up to 1 and 1/a past it (atan a = pi/2 - atan t there);
- c = k/4, the quarter nearest t (k = 0 .. 4), and atan t = atan c + atan u with
  u = (t - c) / (1 + t c), |u| <= 1/8, computed from a with one division (`_reduced`)
  and carried as a head and a tail (the quotient's remainder by a fused multiply-add);
- atan u = u + u^3 ATAN(u^2), a minimax fit (tools/minimax_trig.py: 7e-21 relative);
- the sum atan c + u by 2Sum, pi/2 minus it by 2Sum, the small parts added last and
  the result rounded once, its sign x's (-0 stays -0).

float32 computes in float64 with a shorter polynomial and no tails, rounded once. Within
1 ulp in both (docs/accuracy.md); NaN gives NaN and ±inf ±pi/2.

    >>> x = np.array([-np.inf, -1.0, -0.0, 0.5, 3.0])
    >>> np.round(rune.jit(rnp.arctan)(x), 6)
    array([-1.570796, -0.785398, -0.      ,  0.463648,  1.249046])
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from .. import module_functions
from ..emit import F64
from .fp import fast_two_sum, fma, horner, two_prod, two_sum

ATAN = (-0.06313826117860687, 0.07683546672189466, -0.09090795730972963,
        0.11111110303272428, -0.1428571428263213, 0.19999999999994422,
        -0.3333333333333333)  # atan u = u + u^3 ATAN(u^2) on |u| <= 1/8, to 7e-21
ATAN_SHORT = (0.10771685123423744, -0.14281283345755896, 0.1999997712306074,
              -0.3333333329656873)  # float32's, to 2e-13
# atan(k/4) for k = 1 .. 4 as head and tail
ATAN_OF_QUARTERS = ((0.24497866312686414, 1.0698755618734451e-17),
                    (0.4636476090008061, 2.2698777452961687e-17),
                    (0.6435011087932844, 1.5834785051444286e-17),
                    (0.7853981633974483, 3.061616997868383e-17))
PIO2 = (1.5707963267948966, 6.123233995736766e-17)
CLAMP = 2.0 ** 1000  # |x| above rounds atan to pi/2; keeps 1/a normal


def arctan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    if A.element(x.type) == F64:
        return module_functions.call(b, "arctan_kernel", _arctan, x)
    wide = b.fpext(x, A.like(x.type, F64))
    return b.fptrunc(module_functions.call(b, "arctan_kernel_short", _arctan_short, wide),
                     x.type)


def _arctan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, k, (num, num_tail), (den, den_tail) = _reduced(b, x)
    u = b.fdiv(num, den)
    remainder = fma(b, b.fneg(u), den, num)  # exact
    u_tail = b.fdiv(fma(b, b.fneg(u), den_tail, b.fadd(remainder, num_tail)), den)
    z = b.fmul(u, u)
    head, tail = _table(b, k)
    s, s_err = two_sum(b, head, u)
    tail = b.fadd(b.fadd(s_err, tail), fma(b, b.fmul(u, z), horner(b, z, ATAN), u_tail))
    # past 1: pi/2 - (s + tail)
    sign = b.select(big, c(-1.0), c(1.0))
    v, v_err = two_sum(b, b.select(big, c(PIO2[0]), c(0.0)), b.fmul(sign, s))
    rest = fma(b, sign, tail, b.fadd(v_err, b.select(big, c(PIO2[1]), c(0.0))))
    return A.intrinsic(b, "copysign", b.fadd(v, rest), x)


def _reduced(b: ir.IRBuilder, x: ir.Value):
    """(a > 1, k, numerator, denominator) of u = atan's reduced argument for a = |x|
    (clamped below 2^1000, past which atan rounds to pi/2), each of the last two as
    head + tail: u = (a - c) / (1 + a c) up to 1, (1 - c a) / (a + c) past
    it (= (1/a - c) / (1 + c/a)), with c = k/4 nearest a or 1/a; k of 1/a from
    comparisons of a, so that one division (u's own) is left. a - c and 1 - c a are
    exact (Sterbenz: a is within 1/8 of c, c a within [2/3, 2] where c > 0)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    a = A.intrinsic(b, "fabs", x)
    a = b.select(b.fcmp_ordered(">", a, c(CLAMP)), c(CLAMP), a)  # keeps a NaN
    big = b.fcmp_ordered(">", a, c(1.0))
    k = A.intrinsic(b, "rint", b.fmul(a, c(4.0)))
    k_big = c(0.0)
    for bound in (8.0, 8.0 / 3.0, 1.6, 8.0 / 7.0):  # 4/a rounds up past each
        k_big = b.fadd(k_big, b.select(b.fcmp_ordered("<=", a, c(bound)), c(1.0), c(0.0)))
    k = b.select(big, k_big, k)
    quarter = b.fmul(k, c(0.25))
    p, p_err = two_prod(b, a, quarter)
    one_plus, one_plus_err = fast_two_sum(b, c(1.0), p)  # small: p <= 1.25 / 4 ... 1
    a_plus, a_plus_err = two_sum(b, a, quarter)
    num = (b.select(big, b.fsub(c(1.0), p), b.fsub(a, quarter)),
           b.select(big, b.fneg(p_err), c(0.0)))
    den = (b.select(big, a_plus, one_plus),
           b.select(big, a_plus_err, b.fadd(one_plus_err, p_err)))
    return big, k, num, den


def _arctan_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """float32's, in float64 (2^-50 at worst before rounding to float32)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, k, num, den = _reduced(b, x)
    u = b.fdiv(num[0], den[0])
    z = b.fmul(u, u)
    atan_t = b.fadd(_table(b, k)[0], fma(b, b.fmul(u, z), horner(b, z, ATAN_SHORT), u))
    v = b.select(big, b.fsub(c(PIO2[0]), atan_t), atan_t)
    return A.intrinsic(b, "copysign", v, x)


def _table(b: ir.IRBuilder, k: ir.Value) -> tuple[ir.Value, ir.Value]:
    """atan(k/4) as head and tail, for k = 0 .. 4 (a double), by selects."""
    head, tail = A.const_like(k, 0.0), A.const_like(k, 0.0)
    for i, (h, t) in enumerate(ATAN_OF_QUARTERS, start=1):
        here = b.fcmp_ordered("==", k, A.const_like(k, float(i)))
        head = b.select(here, A.const_like(k, h), head)
        tail = b.select(here, A.const_like(k, t), tail)
    return head, tail


FUNCTIONS = {"arctan": arctan}
