"""exp, exp2, expm1, sinh and cosh of our own: one reduction, one polynomial.

exp and exp2 are exp_table.py's (float64: Tang's table-driven method, on targets that
gather: AVX2, AVX-512) and exp_float32.py's (float32 in float32 lanes); expm1, sinh and
cosh, power's and erf's exponentials, and float64 exp and exp2 where the target does not
gather (aarch64, SSE) are this module's (exp2 reduces x = n + d exactly and takes
r + c = d ln2 as a double-double product):

Cody and Waite's reduction ("Software Manual for the Elementary Functions", 1980, ch. 6):
x = n ln2 + r with n = round(x / ln2), |r| <= ln2/2, ln2 as hi + lo (hi with 32 bits, so
that n hi and x - n hi are exact) and r's rounding error kept as c (Fast2Sum): e^x = 2^n
(1 + r + p), p = r^2 q(r) + c, where q approximates (e^r - 1 - r) / r^2 (a Chebyshev
approximation, tools/minimax_exp_log.py: 2^-60 relative in float64). Adding p to r last
makes 1 + r + p a sum whose only sizeable rounding is the final one (docs/accuracy.md
has the measured errors). expm1 sums 2^n - 1 and 2^n r exactly (Fast2Sum) before adding
2^n p, so that nothing cancels near x = 0 or -ln2. sinh and cosh take e^|x| as a
double-double and 1/e^|x| from its Newton correction; sinh of |x| < 1/2 is x + x^3 P(x^2).

float32 is computed in float64 with shorter polynomials and rounded once (kit.in_float64),
without what only float64's results need (`Coefficients.precise`): c, the double-doubles
and 2^n in two factors (a float32 argument's 2^n is a normal float64).
The scale 2^n is built from exponent bits in two factors (kit.split_exponent), so the
result overflows to inf and goes subnormal (and to 0) where exp does. No branches: special
values come out of the same arithmetic (±inf are clamped to finite arguments that give
inf or 0; a NaN passes the clamps and gives NaN).

    >>> x = np.array([-np.inf, -1.0, -0.0, 1.0, 10.0, np.inf, np.nan])
    >>> print(rune.jit(rnp.exp)(x).round(4).tolist())
    [0.0, 0.3679, 1.0, 2.7183, 22026.4658, inf, nan]
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F64
from ...runtime import llvm as engine
from . import exp_float32, exp_table, kit
from .kit import c, fma


class Ranges(NamedTuple):
    """Where the arguments are clamped: the result is already inf or 0 (or -1) there, and
    the exponents stay small."""
    exp: tuple[float, float]
    exp2: tuple[float, float]
    expm1: tuple[float, float]
    cosh: float


class Coefficients(NamedTuple):
    exp: Sequence[float]  # q(r) = (e^r - 1 - r) / r^2, highest power first
    sinh: Sequence[float]  # P(z) = (sinh(a) - a) / a^3, z = a^2, a <= 1/2
    # float64's results need the extra precision (c, double-doubles) and exponents past
    # the normal ones; float32's, computed in float64, neither (module docstring)
    precise: bool
    ranges: Ranges


FLOAT64 = Coefficients(  # tools/minimax_exp_log.py
    exp=(2.0914679376583935e-09, 2.510520637395701e-08, 2.7557273661348637e-07,
         2.7557255425746435e-06, 2.4801587325533363e-05, 0.00019841269874800493,
         0.0013888888888883752, 0.008333333333326141, 0.04166666666666667,
         0.1666666666666667, 0.5),
    sinh=(1.6116496514371548e-10, 2.505194670972162e-08, 2.755731943362024e-06,
          0.00019841269841146993, 0.00833333333333336, 0.16666666666666666),
    precise=True,
    ranges=Ranges(exp=(-746.0, 710.0), exp2=(-1076.0, 1025.0), expm1=(-40.0, 710.0),
                  cosh=711.0))
FLOAT32 = Coefficients(
    exp=(2.4859578222625295e-05, 0.0001989927395864936, 0.001388885404961482,
         0.008333298483754886, 0.041666666718980845, 0.16666666718997508, 0.5),
    sinh=(2.7682856169452262e-06, 0.00019841073556216572, 0.008333333431502386,
          0.1666666666658997),
    precise=False,  # float32's range: 2^n is a normal float64
    ranges=Ranges(exp=(-110.0, 100.0), exp2=(-160.0, 140.0), expm1=(-20.0, 100.0),
                  cosh=100.0))

LOG2E = 1.4426950408889634
LN2 = (0.6931471805599453, 2.3190468138462996e-17)  # as a double-double
LN2_CW = (0.6931471803691238, 1.9082149292705877e-10)  # hi with 32 bits: n hi is exact
SPLIT = 1000.0  # 2^n in two factors where |n| > SPLIT (kit.split_exponent)


class Reduced(NamedTuple):
    """x = n ln2 + r + c, with c smaller than half an ulp of r."""
    n: ir.Value
    r: ir.Value
    c: ir.Value


def reduce(b: ir.IRBuilder, x: ir.Value, precise: bool = True) -> Reduced:
    """Cody and Waite's reduction of x (within the clamps' ranges); not `precise`, r = x -
    n ln2 in one fused multiply-add (an error under 2^-46 for float32's arguments)."""
    n = kit.round_to_integer(b, b.fmul(x, c(x, LOG2E)))
    if not precise:
        return Reduced(n, fma(b, b.fneg(n), c(x, LN2[0]), x), c(x, 0.0))
    high = fma(b, b.fneg(n), c(x, LN2_CW[0]), x)  # exact
    low = b.fmul(n, c(x, LN2_CW[1]))
    r = b.fsub(high, low)
    return Reduced(n, r, b.fsub(b.fsub(high, r), low))


def tail(b: ir.IRBuilder, k: Coefficients, red: Reduced) -> ir.Value:
    """p with e^(r + c) = 1 + r + p (to 2^-60 relative in float64)."""
    r = red.r
    return fma(b, b.fmul(r, r), kit.estrin(b, r, k.exp), red.c)


def scaled(b: ir.IRBuilder, k: Coefficients, red: Reduced) -> ir.Value:
    """2^n (1 + r + p), rounded once where it is normal."""
    e = b.fadd(red.r, tail(b, k, red))
    if not k.precise:
        s = kit.pow2(b, red.n)
        return fma(b, s, e, s)
    s1, s2 = kit.split_exponent(b, red.n, SPLIT)
    low = b.fcmp_ordered("<", red.n, c(e, -1022.0))  # below 2^-1022: 1 + e < 2
    return kit.times_scale(b, fma(b, s1, e, s1), s2, low)


def expm1_parts(b: ir.IRBuilder, k: Coefficients, red: Reduced, s1: ir.Value,
                inv_s2: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(hi, lo) with e^x - 1 = (hi + lo) s2, |lo| < |hi| / 2, for x = n ln2 + r + c and
    2^n = s1 s2 (s2 = 1 below x = 693): (s1 - 1/s2) + s1 r summed exactly (Fast2Sum:
    |s1 - 1/s2| >= |s1 r| for every n), then s1 p added."""
    hi, lo = kit.fast_two_sum(b, b.fsub(s1, inv_s2), b.fmul(s1, red.r))
    return hi, fma(b, s1, tail(b, k, red), lo)


def _expm1(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    """e^x - 1 with x's sign (which expm1 has: -0 gives -0); ±0 and subnormals give
    themselves (kept out of the arithmetic: kit.without_tiny)."""
    small, x0 = kit.without_tiny(b, x, kit.clamp(b, x, *k.ranges.expm1))
    red = reduce(b, x0, k.precise)
    if not k.precise:
        hi, lo = expm1_parts(b, k, red, kit.pow2(b, red.n), c(x, 1.0))
        return b.select(small, x, b.fadd(hi, lo))
    s1, s2 = kit.split_exponent(b, red.n, SPLIT)
    inv_s2 = kit.pow2(b, b.fsub(kit.clamp(b, red.n, -SPLIT, SPLIT), red.n))
    hi, lo = expm1_parts(b, k, red, s1, inv_s2)
    return b.select(small, x, b.fmul(b.fadd(hi, lo), s2))


def _hyperbolic(b: ir.IRBuilder, k: Coefficients, x: ir.Value, sign: float) -> ir.Value:
    """(e^a + sign e^-a) / 2 for a = |x|, each term a double-double: e^a = 2^n (h + l)
    with (h, l) = 1 + r + p (l within h's ulp), 1 / (h + l) = i + j with i = 1/h and j
    its Newton correction. e^-a matters below a = 40 only (it is < 2^-115 e^a past
    that), where its scale 2^(-n-1) is normal; past SPLIT, 2^n is in two factors. Not
    `precise`: e^a / 2 ± 1 / (2 e^a), relative errors of 2^-51 (and 0 <= a <= 100)."""
    a = kit.clamp(b, A.intrinsic(b, "fabs", x), 0.0, k.ranges.cosh)
    red = reduce(b, a, k.precise)
    if not k.precise:
        half = b.fmul(scaled(b, k, red), c(a, 0.5))
        quarter_over = b.fdiv(c(a, 0.25), half)
        return (b.fadd if sign > 0 else b.fsub)(half, quarter_over)
    one, low = kit.fast_two_sum(b, c(a, 1.0), red.r)
    h, l_ = kit.fast_two_sum(b, one, b.fadd(low, tail(b, k, red)))  # l_ within h's ulp
    i = b.fdiv(c(a, 1.0), h)
    j = b.fmul(i, b.fsub(fma(b, b.fneg(i), h, c(a, 1.0)), b.fmul(i, l_)))
    half_up, s2 = kit.split_exponent(b, b.fsub(red.n, c(a, 1.0)), SPLIT)
    half_down = kit.pow2(b, b.fsub(c(a, -1.0), kit.clamp(b, red.n, 0.0, 60.0)))
    if sign < 0:
        i, j = b.fneg(i), b.fneg(j)
    s, e = kit.two_sum(b, b.fmul(half_up, h), b.fmul(half_down, i))
    rest = b.fadd(e, fma(b, half_up, l_, b.fmul(half_down, j)))
    return b.fmul(b.fadd(s, rest), s2)


def _cosh(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    return _hyperbolic(b, k, x, 1.0)


def _sinh(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    """sinh(|x|) with its sign put back (-0 stays -0); below |x| = 1/2, where e^a - e^-a
    cancels, a + a^3 P(a^2)."""
    a = A.intrinsic(b, "fabs", x)
    z = b.fmul(a, a)
    small = fma(b, a, b.fmul(z, kit.estrin(b, z, k.sinh)), a)
    large = _hyperbolic(b, k, x, -1.0)
    out = b.select(b.fcmp_ordered("<", a, c(a, 0.5)), small, large)
    return A.intrinsic(b, "copysign", out, x)


def reduce_exp2(b: ir.IRBuilder, x: ir.Value) -> Reduced:
    """x = n + d exactly; r + c = d ln2 as a double-double product."""
    n = kit.round_to_integer(b, x)
    d = b.fsub(x, n)
    r = b.fmul(d, c(x, LN2[0]))
    return Reduced(n, r, fma(b, d, c(x, LN2[1]), fma(b, d, c(x, LN2[0]), b.fneg(r))))


def _exp_of(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Tang's table-driven exp in float64 where the target gathers, else Cody–Waite and
    the degree-12 polynomial; float32's own in float32 lanes."""
    if A.element(x.type) != F64:
        return exp_float32.exp(b, x)
    if _gathers():
        return exp_table.exp(b, x)
    x = kit.without_tiny(b, x, kit.clamp(b, x, *FLOAT64.ranges.exp))[1]  # e^x rounds to 1
    return scaled(b, FLOAT64, reduce(b, x))


def _exp2_of(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    if A.element(x.type) != F64:
        return exp_float32.exp2(b, x)
    if _gathers():
        return exp_table.exp2(b, x)
    x = kit.without_tiny(b, x, kit.clamp(b, x, *FLOAT64.ranges.exp2))[1]
    return scaled(b, FLOAT64, reduce_exp2(b, x))


def _gathers() -> bool:
    """Whether the target reads a table by vector gathers (AVX2, AVX-512). Without them
    (aarch64's NEON, SSE) a table read is a load per lane, and LLVM leaves exp's loop
    scalar: there the polynomial, which needs no table, is the faster."""
    return "avx2" in engine.target_features()


FUNCTIONS = {"exp": _exp_of, "exp2": _exp2_of}
FUNCTIONS |= {name: kit.in_float64(body, FLOAT64, FLOAT32) for name, body in
             {"expm1": _expm1, "sinh": _sinh, "cosh": _cosh}.items()}
