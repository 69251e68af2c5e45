"""arctan, arcsin and arccos of our own: straight-line arithmetic on a scalar or a
vector alike; float64's compiled apart (outlined.py, vecmath's FLOAT64_APART), float32's
inlined.

arctan: a table-driven method (P. T. P. Tang, "Table-lookup algorithms for elementary
functions and their error analysis", Proc. 10th IEEE Symposium on Computer Arithmetic,
1991; Muller, "Elementary Functions", 3rd ed., 2016, ch. 6), with a table small enough
to be selects (no memory access, no branch):

- a = |x|, t = a up to 1 and 1/a past it (atan a = pi/2 - atan t there);
- c = k/4, the quarter nearest t (k = 0 .. 4), and atan t = atan c + atan u with
  u = (t - c) / (1 + t c), |u| <= 1/8, computed from a with one division (`_reduced`)
  and carried as a head and a tail (the quotient's remainder by a fused multiply-add);
- atan u = u + u^3 ATAN(u^2), a minimax fit (tools/minimax_trig.py: 7e-21 relative);
- the sum atan c + u by 2Sum, pi/2 minus it by 2Sum, the small parts added last and
  the result rounded once, its sign x's (-0 stays -0).

arcsin and arccos (Cody & Waite's reduction, "Software Manual for the Elementary
Functions", 1980, ch. ASIN/ACOS): r = |x| up to
1/2 and s = sqrt((1 - |x|)/2) past it (1 - |x| exact; the square root's rounding error
by a fused multiply-add), asin r = r + r^3 ASIN(r^2) (minimax, 1e-18 relative), and
asin |x| = asin r or pi/2 - 2 asin s; acos x = pi/2 - asin x, 2 asin s past 1/2,
pi - 2 asin s below -1/2; each a 2Sum of the constant and the head, rounded once.

float32 computes in float64 with shorter polynomials and no tails, rounded once. Within
1 ulp in both (docs/accuracy.md); NaN gives NaN, arctan(±inf) ±pi/2, and arcsin and
arccos NaN outside [-1, 1].

    >>> x = np.array([-np.inf, -1.0, -0.0, 0.5, 3.0])
    >>> np.round(rune.jit(rnp.arctan)(x), 6)
    array([-1.570796, -0.785398, -0.      ,  0.463648,  1.249046])
    >>> np.round(rune.jit(rnp.arccos)(np.array([-1.0, -0.5, 0.0, 0.75, 1.0])), 6)
    array([3.141593, 2.094395, 1.570796, 0.722734, 0.      ])
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from .. import module_functions
from ..emit import F64
from ..module_functions import Body
from .kit import fast_two_sum, fma, horner, two_prod, two_sum

ATAN = (-0.06313826117860687, 0.07683546672189466, -0.09090795730972963,
        0.11111110303272428, -0.1428571428263213, 0.19999999999994422,
        -0.3333333333333333)  # atan u = u + u^3 ATAN(u^2) on |u| <= 1/8, to 7e-21
ATAN_SHORT = (0.10771685123423744, -0.14281283345755896, 0.1999997712306074,
              -0.3333333329656873)  # float32's, to 2e-13
ASIN = (0.0326284685591157, -0.020998809406383313, 0.021707265079771255,
        0.0037064845379881414, 0.010780232622314173, 0.011398915785478731,
        0.013980820126534125, 0.017351612046701593, 0.02237221498596087,
        0.030381942707836795, 0.04464285717461093, 0.07499999999970801,
        0.1666666666666676)  # asin r = r + r^3 ASIN(r^2) on |r| <= 1/2, to 1e-18
ASIN_SHORT = (0.034646165966200904, 0.007509616088574208, 0.02460466283554509,
              0.030112533768008785, 0.044659971435429296, 0.0749994890052355,
              0.16666667180219583)  # float32's, to 2e-11
# atan(k/4) for k = 1 .. 4 as head and tail
ATAN_OF_QUARTERS = ((0.24497866312686414, 1.0698755618734451e-17),
                    (0.4636476090008061, 2.2698777452961687e-17),
                    (0.6435011087932844, 1.5834785051444286e-17),
                    (0.7853981633974483, 3.061616997868383e-17))
PIO2 = (1.5707963267948966, 6.123233995736766e-17)
PI = (3.141592653589793, 1.2246467991473532e-16)
CLAMP = 2.0 ** 1000  # |x| above rounds atan to pi/2; keeps 1/a normal


def arctan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _in_float64(b, "arctan_body", _arctan, _arctan_short, x)


def arctan2(b: ir.IRBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    return _in_float64(b, "arctan2_body", _arctan2, _arctan2_short, y, x)


def arcsin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _in_float64(b, "arcsin_body", _arcsin, _arcsin_short, x)


def arccos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _in_float64(b, "arccos_body", _arccos, _arccos_short, x)


def _in_float64(b: ir.IRBuilder, name: str, kernel: Body, short: Body,
                *xs: ir.Value) -> ir.Value:
    """The float64 kernel of the arguments, or for float32 the short one in float64,
    rounded once; each an inlined internal function (module_functions.py)."""
    t = xs[0].type
    if A.element(t) == F64:
        return module_functions.call(b, name, kernel, *xs)
    wide = [b.fpext(v, A.like(t, F64)) for v in xs]
    return b.fptrunc(module_functions.call(b, name + "_short", short, *wide), t)


def _arctan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, k, (num, num_tail), (den, den_tail) = _reduced(b, x)
    u, u_tail = _quotient(b, (num, num_tail), (den, den_tail))
    s, tail = _atan_sum(b, k, u, u_tail)
    # past 1: pi/2 - (s + tail)
    base = [b.select(big, c(part), c(0.0)) for part in PIO2]
    v = _combined(b, base, b.select(big, c(-1.0), c(1.0)), s, tail)
    return A.intrinsic(b, "copysign", v, x)


def _quotient(b: ir.IRBuilder, num: tuple[ir.Value, ir.Value],
              den: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
    """(n + n') / (d + d') as head + tail, for 1 <= d < 2^1001: one division (1/d, a
    normal number); the head n (1/d) is within an ulp and a half, its remainder
    n - head d exact (a fused multiply-add), and the tail carries it."""
    inverse = b.fdiv(A.const_like(den[0], 1.0), den[0])
    u = b.fmul(num[0], inverse)
    remainder = fma(b, b.fneg(u), den[0], num[0])
    return u, b.fmul(fma(b, b.fneg(u), den[1], b.fadd(remainder, num[1])), inverse)


def _atan_sum(b: ir.IRBuilder, k: ir.Value, u: ir.Value,
              u_tail: ir.Value) -> tuple[ir.Value, ir.Value]:
    """atan(k/4) + atan(u + u_tail) as head + tail (2Sum of the table's head and u)."""
    z = b.fmul(u, u)
    head, tail = _table(b, k)
    s, s_err = two_sum(b, head, u)
    return s, b.fadd(b.fadd(s_err, tail), fma(b, b.fmul(u, z), horner(b, z, ATAN), u_tail))


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


def _arctan2(b: ir.IRBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    """atan t, t = min(|x|, |y|) / max(|x|, |y|) with its remainder as a tail, then
    pi/2 - it where |y| > |x|, pi - that where x < 0 (-0 too), y's sign."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    swap, left, t, t_tail = _ratio(b, y, x)
    k = A.intrinsic(b, "rint", b.fmul(t, c(4.0)))
    quarter = b.fmul(k, c(0.25))
    num = b.fsub(t, quarter)  # exact: t within 1/8 of c, and c = 0 or t >= c / 2
    p, p_err = two_prod(b, t, quarter)
    den, den_err = fast_two_sum(b, c(1.0), p)
    den_tail = fma(b, t_tail, quarter, b.fadd(den_err, p_err))
    u, u_tail = _quotient(b, (num, t_tail), (den, den_tail))
    s, tail = _atan_sum(b, k, u, u_tail)
    base, factor = _quadrant(b, swap, left)
    return A.intrinsic(b, "copysign", _combined(b, base, factor, s, tail), y)


def _ratio(b: ir.IRBuilder, y: ir.Value, x: ir.Value):
    """(|y| > |x|, x's sign bit, t, t's tail): t = the smaller of |x|, |y| over the
    larger, 0 for two zeros and 1 for two infinities (IEEE's atan2 of those)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    ax, ay = A.intrinsic(b, "fabs", x), A.intrinsic(b, "fabs", y)
    swap = b.fcmp_ordered(">", ay, ax)
    small, large = b.select(swap, ax, ay), b.select(swap, ay, ax)
    t = b.fdiv(small, large)
    t_tail = b.fdiv(fma(b, b.fneg(t), large, small), large)
    same = b.fcmp_ordered("==", ax, ay)
    zeros = b.and_(same, b.fcmp_ordered("==", ax, c(0.0)))
    infinities = b.and_(same, b.fcmp_ordered("==", ax, c(float("inf"))))
    special = b.or_(zeros, infinities)
    t = b.select(special, b.select(zeros, c(0.0), c(1.0)), t)
    t_tail = b.select(b.or_(special, b.fcmp_ordered("==", t, c(0.0))), c(0.0), t_tail)
    left = b.fcmp_ordered("<", A.intrinsic(b, "copysign", c(1.0), x), c(0.0))
    return swap, left, t, t_tail


def _quadrant(b: ir.IRBuilder, swap: ir.Value, left: ir.Value):
    """(base as head and tail, factor) of |atan2| = base + factor atan t: t's angle
    (0, 1), pi/2 minus it where swapped (pi/2, -1), pi minus those where x < 0."""
    c = lambda value: A.constant(A.like(swap.type, F64), value)  # noqa: E731
    factor = b.select(swap, b.select(left, c(1.0), c(-1.0)),
                      b.select(left, c(-1.0), c(1.0)))
    base = [b.select(swap, c(half), b.select(left, c(pi), c(0.0)))
            for pi, half in zip(PI, PIO2)]
    return base, factor


def _arctan2_short(b: ir.IRBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    """float32's, in float64 (2^-50 at worst before rounding to float32)."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    swap, left, t, _ = _ratio(b, y, x)
    k = A.intrinsic(b, "rint", b.fmul(t, c(4.0)))
    quarter = b.fmul(k, c(0.25))
    u = b.fdiv(b.fsub(t, quarter), fma(b, t, quarter, c(1.0)))
    z = b.fmul(u, u)
    atan_t = b.fadd(_table(b, k)[0], fma(b, b.fmul(u, z), horner(b, z, ATAN_SHORT), u))
    base, factor = _quadrant(b, swap, left)
    return A.intrinsic(b, "copysign", fma(b, factor, atan_t, base[0]), y)


def _arcsin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """asin a = asin r up to 1/2, pi/2 - 2 asin s past it; the sign of x put back."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, r, tail = _asin_reduced(b, A.intrinsic(b, "fabs", x))
    factor = b.select(big, c(-2.0), c(1.0))
    base = [b.select(big, c(part), c(0.0)) for part in PIO2]
    return A.intrinsic(b, "copysign", _combined(b, base, factor, r, tail), x)


def _arccos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """acos x = pi/2 - asin x up to 1/2 in size, 2 asin s past 1/2, pi - 2 asin s
    below -1/2."""
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, r, tail = _asin_reduced(b, A.intrinsic(b, "fabs", x))
    negative = b.fcmp_ordered("<", x, c(0.0))
    factor = b.select(big, b.select(negative, c(-2.0), c(2.0)),
                      b.select(negative, c(1.0), c(-1.0)))
    base = [b.select(big, b.select(negative, c(pi), c(0.0)), c(half))
            for pi, half in zip(PI, PIO2)]
    return _combined(b, base, factor, r, tail)


def _asin_reduced(b: ir.IRBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(a > 1/2, r, tail): asin r = r + tail, with r = a up to 1/2 and s = sqrt((1 - a)/2)
    past it (1 - a exact: Sterbenz), s's rounding error carried (by a fused multiply-add)
    as d asin = ds (1 + s^2/2). Past 1 s is NaN, and so is the result."""
    c = lambda value: A.const_like(a, value)  # noqa: E731
    big = b.fcmp_ordered(">", a, c(0.5))
    w = b.fmul(b.fsub(c(1.0), a), c(0.5))
    s = A.intrinsic(b, "sqrt", w)
    s_err = b.fdiv(fma(b, b.fneg(s), s, w), b.fadd(s, s))
    s_err = b.select(b.fcmp_ordered("==", s, c(0.0)), c(0.0), s_err)  # asin(±1)
    r = b.select(big, s, a)
    z = b.fmul(r, r)
    r_err = b.select(big, s_err, c(0.0))
    tail = fma(b, b.fmul(r, z), horner(b, z, ASIN), fma(b, b.fmul(z, c(0.5)), r_err, r_err))
    return big, r, tail


def _combined(b: ir.IRBuilder, base: list[ir.Value], factor: ir.Value, r: ir.Value,
              tail: ir.Value) -> ir.Value:
    """base + factor (r + tail), rounded once (factor ±1 or ±2: factor r is exact)."""
    v, v_err = two_sum(b, base[0], b.fmul(factor, r))
    return b.fadd(v, fma(b, factor, tail, b.fadd(v_err, base[1])))


def _arcsin_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, asin_r = _asin_short(b, A.intrinsic(b, "fabs", x))
    v = b.select(big, fma(b, c(-2.0), asin_r, c(PIO2[0])), asin_r)
    return A.intrinsic(b, "copysign", v, x)


def _arccos_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    c = lambda value: A.const_like(x, value)  # noqa: E731
    big, asin_r = _asin_short(b, A.intrinsic(b, "fabs", x))
    negative = b.fcmp_ordered("<", x, c(0.0))
    factor = b.select(big, b.select(negative, c(-2.0), c(2.0)),
                      b.select(negative, c(1.0), c(-1.0)))
    base = b.select(big, b.select(negative, c(PI[0]), c(0.0)), c(PIO2[0]))
    return fma(b, factor, asin_r, base)


def _asin_short(b: ir.IRBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """float32's (a > 1/2, asin r), in float64: 2^-40 at worst before rounding."""
    c = lambda value: A.const_like(a, value)  # noqa: E731
    big = b.fcmp_ordered(">", a, c(0.5))
    r = b.select(big, A.intrinsic(b, "sqrt", b.fmul(b.fsub(c(1.0), a), c(0.5))), a)
    z = b.fmul(r, r)
    return big, fma(b, b.fmul(r, z), horner(b, z, ASIN_SHORT), r)


def _table(b: ir.IRBuilder, k: ir.Value) -> tuple[ir.Value, ir.Value]:
    """atan(k/4) as head and tail, for k = 0 .. 4 (a double), by selects."""
    head, tail = A.const_like(k, 0.0), A.const_like(k, 0.0)
    for i, (h, t) in enumerate(ATAN_OF_QUARTERS, start=1):
        here = b.fcmp_ordered("==", k, A.const_like(k, float(i)))
        head = b.select(here, A.const_like(k, h), head)
        tail = b.select(here, A.const_like(k, t), tail)
    return head, tail


FUNCTIONS = {"arctan": arctan, "arctan2": arctan2, "arcsin": arcsin, "arccos": arccos}
