"""erf and erfc of our own: a polynomial near 0, and exp(-a^2) g(a) past it, g a piecewise
polynomial and the product in double-double arithmetic.

The splitting is Cody's ("Rational Chebyshev approximations for the error function",
Math. Comp. 23, 1969; Hart et al., "Computer Approximations", 1968, ch. 6): for a = |x|
small, erf a = a + a Q(a^2) (Q a minimax fit on a <= 1: tools/minimax_cbrt_erf.py,
2^-62.7 relative); past it, erfc a = e^(-a^2) g(a) with g(a) = erfc(a) e^(a^2), smooth and
slowly varying, fitted piecewise (without divisions, where Cody's are rational) on [1/2, 1]
and [1, 2] in u = a - mid, and as t k(t), t = 1 / a, on [2, 4] and [4, 28] (past which
erfc underflows) in u = t - mid; each piece c0 + c1 u + u^2 P2(u) (relative errors 2^-59 to
2^-65), chosen lane by lane by selects. In float64 what the result's last bit depends on is
kept in double-double arithmetic (Muller et al., "Handbook of Floating-Point Arithmetic",
2nd ed., 2018, ch. 4): c0 (a double-double) + c1 u (an exact product), t (1 / a with the
division's remainder), a^2 (an exact product, its low part taken into exp's reduced
argument: exp.py's Cody–Waite reduction and polynomial), e^(-a^2) as 2^n (1 + r + p), and
their product; then

- erf a = a + a Q(a^2) below 1, 1 - erfc a past it (1 - H by Fast2Sum, the low parts
  after), and erf(-x) = -erf x;
- erfc x = 1 - erf x for |x| < 1/2 (1 - x by 2Sum first), e^(-a^2) g(a) past it (2^n in
  two factors, so that it goes subnormal and to 0 where erfc does), 2 - erfc a below -1/2.

float32 is computed in float64 with float64's polynomials but none of the double-double
steps, and rounded once (kit.in_float64). Special values as the interpreter's (Python's
math.erf and math.erfc): erf(±0) = ±0, erf(±inf) = ±1, erfc(-inf) = 2, erfc(inf) = 0, NaN
gives NaN.

    >>> x = np.array([-np.inf, -1.0, -0.0, 0.5, 3.0, 30.0, np.nan])
    >>> print(rune.jit(rune.scipy.special.erf)(x).round(6).tolist())
    [-1.0, -0.842701, -0.0, 0.5205, 0.999978, 1.0, nan]
    >>> print(rune.jit(rune.scipy.special.erfc)(x).tolist()[-3:])
    [2.209049699858544e-05, 0.0, nan]
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import llvmlite.ir as ir

from .. import arith as A
from . import exp, kit, outlined
from .kit import c, fma


class Piece(NamedTuple):
    """g (or g / t) = c0 + c1 u + u^2 P2(u) on one interval, u = a or t, less mid."""
    start: float  # the piece's first a
    mid: float
    c0: tuple[float, float]
    c1: float
    p2: Sequence[float]  # highest power first


class Coefficients(NamedTuple):
    q: Sequence[float]  # erf a = a + a Q(a^2), a <= 1
    exp: exp.Coefficients
    top: float  # erfc's argument clamped to it (erfc is 0 past it)


Q = (5.945255506213436e-11, -1.1365662212128456e-09, 1.4657878858539824e-08,
     -1.635002507471024e-07, 1.6460972802945865e-06, -1.492559350600707e-05,
     0.0001205533103686271, -0.0008548326978741189, 0.005223977624780849,
     -0.026866170645072893, 0.11283791670954857, -0.3761263890318375, 0.1283791670955126)  # tools/minimax_cbrt_erf.py: 2^-62.7
PIECES = (  # tools/minimax_cbrt_erf.py; the relative error of each
    Piece(0.5, 0.75, (0.5069376502931449, -5.335681035462232e-17), -0.3679726916557954,  # 2^-60.8
          (-2.9064496753290856e-06, 3.1723503623634776e-06, 5.3276287425617284e-06,
          -1.5169332685124151e-05, 4.2298992356751935e-05, -0.00012325298938841158,
          0.0003467541700859294, -0.0009385169006579122, 0.0024376372711413493,
          -0.006051532173567083, 0.014289198667111022, -0.03189726204130289,
          0.06679054252756193, -0.12983606199487174, 0.2309581315512983)),
    Piece(1.0, 1.5, (0.3215854164543175, 1.7007985607722196e-17), -0.16362291773256005,  # 2^-58.8
          (1.3408696025712225e-08, -4.972431599001579e-08, 1.6699262895636663e-07,
          -5.943367083514677e-07, 2.0671199127965505e-06, -6.975418869615612e-06,
          2.286428973934382e-05, -7.265886282820252e-05, 0.00022330994625771236,
          -0.0006619300710827273, 0.001886134876944713, -0.00514595754779036,
          0.013377340953068414, -0.03293090529956628, 0.07615103985547739)),
    Piece(2.0, 0.375, (0.530860349316975, 3.194630111311165e-17), -0.1515855295741559,  # 2^-62.6
          (3.3441922420521424, -3.699314592169412, 2.0545593823198205, -0.4249884412605295,
          -0.5351006053465066, 0.7810171362161192, -0.5550792080066491, 0.17028529264969963,
          0.13611579805994212, -0.25568450005791027, 0.19624233326850835,
          -0.03780807550502466, -0.11628192691539099, 0.17726803412601147,
          -0.09203998771159042)),
    Piece(4.0, 0.0, (0.5641895835477877, 0.0), -6.893475222221627e-12,  # 2^-61.7
          (619.7301709049168, -1630.62155441345, 1913.944109856998, -1277.854925250361,
          496.88958948483383, -91.5892780163341, -1.106068099309079, -2.033867812225382,
          3.9092728266155152, -0.016360759623226896, -1.0568545089772376,
          -4.6699080980648376e-05, 0.4231438109025941, -4.0501943269383185e-08,
          -0.2820947910920813)),
)
T_PIECES = 2  # the pieces from this one on are in t = 1 / a
FLOAT64 = Coefficients(Q, exp.FLOAT64, 28.0)
FLOAT32 = Coefficients(Q, exp.FLOAT32, 10.5)


def _choose(b: ir.IRBuilder, starts: Sequence[ir.Value], values: Sequence[float],
            like: ir.Value) -> ir.Value:
    """values[i] for the last i whose start mask is set (values[0] where none is)."""
    out = c(like, values[0])
    for mask, value in zip(starts, values[1:]):
        out = b.select(mask, c(like, value), out)
    return out


def _g(b: ir.IRBuilder, precise: bool, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """g(a) = erfc(a) e^(a^2) as hi + lo, for a in [1/2, top]."""
    starts = [b.fcmp_ordered(">=", a, c(a, p.start)) for p in PIECES[1:]]
    choose = lambda values: _choose(b, starts, values, a)  # noqa: E731
    in_t = starts[T_PIECES - 1]
    t = b.fdiv(c(a, 1.0), a)
    u = b.fsub(b.select(in_t, t, a), choose([p.mid for p in PIECES]))  # exact but past 4
    rest = choose([p.p2[0] for p in PIECES])
    for i in range(1, len(PIECES[0].p2)):
        rest = fma(b, rest, u, choose([p.p2[i] for p in PIECES]))
    c1 = choose([p.c1 for p in PIECES])
    c0 = choose([p.c0[0] for p in PIECES])
    rest = fma(b, b.fmul(u, u), rest, choose([p.c0[1] for p in PIECES]))
    if not precise:
        k = b.fadd(fma(b, c1, u, c0), rest)
        return b.select(in_t, b.fmul(t, k), k), c(a, 0.0)
    p, p_low = kit.two_prod(b, c1, u)
    hi, lo = kit.fast_two_sum(b, c0, p)
    hi, lo = kit.fast_two_sum(b, hi, b.fadd(lo, b.fadd(p_low, rest)))  # rest: up to g / 30
    t_low = b.fmul(fma(b, b.fneg(a), t, c(a, 1.0)), t)  # 1 / a = t + t_low
    th = b.fmul(t, hi)
    tl = b.fadd(fma(b, t, hi, b.fneg(th)), fma(b, t, lo, b.fmul(t_low, hi)))
    return b.select(in_t, th, hi), b.select(in_t, tl, lo)


class Scaled(NamedTuple):
    """(hi + lo) s1 s2."""
    hi: ir.Value
    lo: ir.Value
    s1: ir.Value
    s2: ir.Value


def _erfc_large(b: ir.IRBuilder, k: Coefficients, a: ir.Value) -> Scaled:
    """erfc(a) for a in [1/2, top]: e^(-a^2) g(a)."""
    precise = k.exp.precise
    z, z_low = kit.two_prod(b, a, a)
    red = exp.reduce(b, b.fneg(z), precise)
    if precise:
        r, r_low = kit.two_sum(b, red.r, b.fsub(red.c, z_low))
        red = exp.Reduced(red.n, r, r_low)
    p = exp.tail(b, k.exp, red)
    gh, gl = _g(b, precise, a)
    if not precise:
        e = b.fadd(c(a, 1.0), b.fadd(red.r, p))
        return Scaled(b.fmul(e, gh), c(a, 0.0), kit.pow2(b, red.n), c(a, 1.0))
    eh, el = kit.fast_two_sum(b, c(a, 1.0), red.r)
    eh, el = kit.fast_two_sum(b, eh, b.fadd(el, p))  # p: up to 1/16
    h = b.fmul(eh, gh)
    lo = b.fadd(fma(b, eh, gh, b.fneg(h)), fma(b, eh, gl, b.fmul(el, gh)))
    return Scaled(h, lo, *kit.split_exponent(b, red.n, exp.SPLIT))


def _minus(b: ir.IRBuilder, whole: float, v: Scaled) -> ir.Value:
    """whole - (hi + lo) s1 s2, for 0 <= that product <= whole / 2, rounded once."""
    big = b.fmul(b.fmul(v.hi, v.s1), v.s2)
    small = b.fmul(b.fmul(v.lo, v.s1), v.s2)
    s, e = kit.fast_two_sum(b, c(big, whole), b.fneg(big))
    return b.fadd(s, b.fsub(e, small))


def _erf(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    a = A.intrinsic(b, "fabs", x)
    z = b.fmul(a, a)
    near = fma(b, a, kit.horner(b, z, k.q), a)
    far = _minus(b, 1.0, _erfc_large(b, k, kit.clamp(b, a, 1.0, 6.0)))
    out = b.select(b.fcmp_ordered("<", a, c(a, 1.0)), near, far)
    return A.intrinsic(b, "copysign", out, x)


def _erfc(b: ir.IRBuilder, k: Coefficients, x: ir.Value) -> ir.Value:
    a = A.intrinsic(b, "fabs", x)
    xq = b.fmul(x, kit.horner(b, b.fmul(x, x), k.q))
    s, e = kit.two_sum(b, c(x, 1.0), b.fneg(x))
    near = b.fadd(s, b.fsub(e, xq))
    v = _erfc_large(b, k, kit.clamp(b, a, 0.5, k.top))
    right = b.fmul(fma(b, v.s1, v.hi, b.fmul(v.s1, v.lo)), v.s2)
    far = b.select(b.fcmp_ordered("<", x, c(x, 0.0)), _minus(b, 2.0, v), right)
    out = b.select(b.fcmp_ordered("<", a, c(a, 0.5)), near, far)
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


FUNCTIONS = {name: outlined.in_float64(name, body, FLOAT64, FLOAT32) for name, body in
             {"erf": _erf, "erfc": _erfc}.items()}
