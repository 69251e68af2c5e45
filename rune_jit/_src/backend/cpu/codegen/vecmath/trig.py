"""sin, cos and tan of our own: straight-line arithmetic on a scalar or a vector alike.

x = q pi/2 + r with r as hi + lo (pio2.py), then sin r and cos r as unevaluated sums
(a head and a small tail) from minimax polynomials on |r| <= pi/4 (tools/minimax_trig.py:
relative errors 2e-21 and 6e-20), put together by q mod 4: sin x is ±sin r or ±cos r,
rounded once from head + tail, each lane computing the one it needs (one polynomial,
its coefficients chosen per lane; with pio2.py's shorter sums, sin of 10^6 elements
1.08 -> 0.78 ms); tan x is sin r / cos r or -cos r / sin r, a division of
the two sums with its remainder (a fused multiply-add) carried. float32 has kernels of
its own, computed in float64 (a shorter reduction, shorter polynomials, no tails) and
rounded once. Within 1 ulp in both (docs/accuracy.md has the measured figures); NaN and
±inf give NaN, ±0 and tiny x keep their value (cos: 1). Each kernel is called once per
vector (outlined.py), so that the slow reduction of huge arguments runs only for a
vector that has one. float64 registers whose lanes are all below SMALL skip the
reduction (a branch: it gives q = 0 and r = x there), and the polynomials are two
chains of half the length: a recurrence through sin waits for the kernel's latency
every step (bench W7: 17.5 -> 9.6 ms).

    >>> x = np.array([-0.0, 0.5, 3.0, 1e22, np.inf])
    >>> np.round(rune.jit(rnp.sin)(x), 6)
    array([-0.      ,  0.479426,  0.14112 , -0.852201,       nan])
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I1, I64
from . import outlined
from .kit import fast_two_sum, fma, horner, two_chains
from .pio2 import reduce_pio2

# minimax fits of the relative error on |r| <= pi/4 (tools/minimax_trig.py), highest
# power first
SIN = (-7.578540465572091e-13, 1.6058363168825448e-10, -2.5052104881886247e-08,
       2.7557319214065e-06, -0.000198412698412548, 0.008333333333333323,
       -0.16666666666666666)  # sin r = r + r^3 SIN(r^2), to 2e-21
COS = (-1.1358536310647773e-11, 2.0875700837909704e-09, -2.7557314179266596e-07,
       2.48015872888516e-05, -0.0013888888888873056,
       0.041666666666666595)  # cos r = 1 - r^2/2 + r^4 COS(r^2), to 6e-20
SIN_SHORT = (-2.4760454810822077e-08, 2.7555339661330374e-06, -0.00019841263728666408,
             0.008333333325077857, -0.1666666666663035)  # float32's, to 5e-15
COS_SHORT = (-2.717479018403001e-07, 2.4798960740543404e-05, -0.0013888880659470746,
             0.04166666655342846, -0.4999999999948939)  # cos r = 1 + r^2 COS_SHORT(r^2), to 7e-14
COS7 = (0.0,) + COS  # as long as SIN, for one polynomial of either
TINY = 2.0 ** -27  # below, sin x and tan x round to x
SMALL = 0.78  # below pi/4: x 2/pi rounds to q = 0 (_by_size)

Pair = tuple[ir.Value, ir.Value]  # head + tail


def _sin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _keep_tiny(b, x, _by_size(b, x, lambda q, hi, lo: _sin_or_cos(b, q, hi, lo)))


def _cos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    plus_one = lambda q: b.add(q, A.const_like(q, 1))  # noqa: E731  cos x = sin(x + pi/2)
    return _by_size(b, x, lambda q, hi, lo: _sin_or_cos(b, plus_one(q), hi, lo))


def _tan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """sin r / cos r for even q, -cos r / sin r for odd q."""
    def finish(q, hi, lo):
        s, c = _pairs(b, hi, lo)
        num, den = _quadrant_pick(b, q, c, s), _quadrant_pick(b, q, s, c)
        return _negated_if(b, _bit(b, q, 1), b.fadd(*_divide(b, num, den)))
    return _keep_tiny(b, x, _by_size(b, x, finish))


def _by_size(b: ir.IRBuilder, x: ir.Value, finish) -> ir.Value:
    """finish(q, hi, lo) for x = q pi/2 + hi + lo: where every lane is below SMALL, hi is
    x itself and q and lo are 0 (what the reduction gives there, bit for bit), so a
    branch skips the reduction, whose latency a recurrence through sin would wait for
    each step (W7); else x reduced."""
    small = b.fcmp_ordered("<", A.intrinsic(b, "fabs", x), A.const_like(x, SMALL))
    if A.lanes(x.type) is not None:
        small = A.intrinsic(b, "vector.reduce.and", small, ret=I1)
    near, reduce, join = (b.append_basic_block(name) for name in ("small", "reduce", "join"))
    b.cbranch(small, near, reduce)
    b.position_at_end(near)
    zero = A.constant(A.like(x.type, I64), 0)
    results = [(finish(zero, x, A.const_like(x, 0.0)), b.block)]
    b.branch(join)
    b.position_at_end(reduce)
    results.append((finish(*reduce_pio2(b, x)), b.block))
    b.branch(join)
    b.position_at_end(join)
    phi = b.phi(results[0][0].type)
    for value, block in results:
        phi.add_incoming(value, block)
    return phi


def _sin_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    q, s, c = _reduced_short(b, x)
    return _negated_if(b, _bit(b, q, 2), b.select(_bit(b, q, 1), c, s))


def _cos_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    q, s, c = _reduced_short(b, x)
    q = b.add(q, A.const_like(q, 1))
    return _negated_if(b, _bit(b, q, 2), b.select(_bit(b, q, 1), c, s))


def _tan_short(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    q, s, c = _reduced_short(b, x)
    odd = _bit(b, q, 1)
    return _negated_if(b, odd, b.fdiv(b.select(odd, c, s), b.select(odd, s, c)))


def _reduced_short(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """q, sin r and cos r for float32's x (in float64): 2^-43 of each is enough before
    the result is rounded to float32. r (1 + z SIN(z)) keeps -0."""
    one = A.const_like(x, 1.0)
    q, r, _ = reduce_pio2(b, x, short=True)
    z = b.fmul(r, r)
    return (q, b.fmul(r, fma(b, z, horner(b, z, SIN_SHORT), one)),
            fma(b, z, horner(b, z, COS_SHORT), one))


def _sin_or_cos(b: ir.IRBuilder, q: ir.Value, hi: ir.Value, lo: ir.Value) -> ir.Value:
    """sin x for x = q pi/2 + hi + lo: ±sin r or ±cos r, each lane computing only the one
    its quadrant needs (one polynomial, its coefficients chosen per lane, as SLEEF does),
    as head + tail rounded once: _sin_pair's and _cos_pair's."""
    c = lambda value: A.const_like(hi, value)  # noqa: E731
    odd = _bit(b, q, 1)
    z = b.fmul(hi, hi)
    w, cos_err = _cos_head(b, hi, z)
    # sin's lo w, or cos's -lo hi plus cos_err (-0 added keeps lo w's sign)
    corr = fma(b, lo, b.select(odd, b.fneg(hi), w), b.select(odd, cos_err, c(-0.0)))
    poly = two_chains(b, z, [b.select(odd, c(cos), c(sin)) for cos, sin in zip(COS7, SIN)])
    tail = fma(b, b.fmul(b.select(odd, z, hi), z), poly, corr)
    return _negated_if(b, _bit(b, q, 2), b.fadd(b.select(odd, w, hi), tail))


def _pairs(b: ir.IRBuilder, hi: ir.Value, lo: ir.Value) -> tuple[Pair, Pair]:
    """sin r and cos r for r = hi + lo."""
    z = b.fmul(hi, hi)
    return _sin_pair(b, hi, lo, z), _cos_pair(b, hi, lo, z)


def _sin_pair(b: ir.IRBuilder, hi: ir.Value, lo: ir.Value, z: ir.Value) -> Pair:
    """sin(hi + lo) = hi + (hi^3 SIN(z) + lo cos hi), cos hi taken as 1 - z/2."""
    c = lambda value: A.const_like(hi, value)  # noqa: E731
    lo_part = b.fmul(lo, fma(b, z, c(-0.5), c(1.0)))
    return hi, fma(b, b.fmul(hi, z), two_chains(b, z, SIN), lo_part)


def _cos_pair(b: ir.IRBuilder, hi: ir.Value, lo: ir.Value, z: ir.Value) -> Pair:
    """cos(hi + lo) = w + (z^2 COS(z) + the rest of 1 - hi^2/2 - lo sin hi), sin hi taken
    as hi."""
    w, rest = _cos_head(b, hi, z)
    return w, fma(b, b.fmul(z, z), two_chains(b, z, COS), fma(b, lo, b.fneg(hi), rest))


def _cos_head(b: ir.IRBuilder, hi: ir.Value, z: ir.Value) -> Pair:
    """1 - hi^2/2 as w + rest: w = 1 - z/2 rounded, rest its rounding error (exact) less
    half z's (hi^2 - z, exact by a fused multiply-add)."""
    c = lambda value: A.const_like(hi, value)  # noqa: E731
    half_z = b.fmul(z, c(0.5))
    w = b.fsub(c(1.0), half_z)
    w_err = b.fsub(b.fsub(c(1.0), w), half_z)
    return w, fma(b, fma(b, hi, hi, b.fneg(z)), c(-0.5), w_err)


def _divide(b: ir.IRBuilder, num: Pair, den: Pair) -> Pair:
    """(n + n') / (d + d') as q + q': q = n / d rounded, q' from its exact remainder (to
    first order in d' / d, so both are normalized first: |d'| <= ulp(d) / 2)."""
    num, den = fast_two_sum(b, *num), fast_two_sum(b, *den)
    q = b.fdiv(num[0], den[0])
    remainder = fma(b, b.fneg(q), den[0], num[0])  # exact
    q_err = b.fdiv(fma(b, b.fneg(q), den[1], b.fadd(remainder, num[1])), den[0])
    return q, q_err


def _quadrant_pick(b: ir.IRBuilder, q: ir.Value, odd: Pair, even: Pair) -> Pair:
    """`odd` where q is odd, else `even`."""
    is_odd = _bit(b, q, 1)
    return b.select(is_odd, odd[0], even[0]), b.select(is_odd, odd[1], even[1])


def _negated_if(b: ir.IRBuilder, condition: ir.Value, v: ir.Value) -> ir.Value:
    return b.select(condition, b.fneg(v), v)


def _bit(b: ir.IRBuilder, q: ir.Value, bit: int) -> ir.Value:
    return b.icmp_unsigned("!=", b.and_(q, A.constant(q.type, bit)), A.constant(q.type, 0))


def _keep_tiny(b: ir.IRBuilder, x: ir.Value, v: ir.Value) -> ir.Value:
    """x itself where |x| < TINY (sin and tan round to x there; -0 stays -0)."""
    tiny = b.fcmp_ordered("<", A.intrinsic(b, "fabs", x), A.const_like(x, TINY))
    return b.select(tiny, x, v)


FUNCTIONS = {"sin": outlined.apart("sin", _sin, _sin_short),
             "cos": outlined.apart("cos", _cos, _cos_short),
             "tan": outlined.apart("tan", _tan, _tan_short)}
