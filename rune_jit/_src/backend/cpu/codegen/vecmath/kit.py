"""What the vector math's bodies share: float32 computed in float64, error-free sums and
products (double-double arithmetic: Muller et al., "Handbook of Floating-Point
Arithmetic", 2nd ed., 2018, ch. 4), powers of two built from their exponent bits, and
Estrin's and Horner's schemes with fused multiply-adds.

Every helper takes and returns float registers, a scalar or a vector alike.
"""

from __future__ import annotations

import struct
from typing import Callable, NamedTuple, Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F32, F64, I32, I64

MAGIC = 1.5 * 2.0 ** 52  # x + MAGIC rounds x to an integer held in the sum's low bits


def in_float64(body: Callable, float64, float32) -> Callable:
    """A `Body` that computes `body(b, coefficients, *xs)` in float64: float64 operands
    with `float64`'s coefficients, float32 ones widened (exactly), with `float32`'s
    shorter polynomials, and the result rounded once to float32 (the float64 result is
    within 2^-35 of exact: the rounding to float32 is then correct but for the rare
    value within 2^-11 of its ulp of a tie)."""
    def run(b: ir.IRBuilder, *xs: ir.Value) -> ir.Value:
        if A.element(xs[0].type) == F64:
            return body(b, float64, *xs)
        wide = [b.fpext(x, A.like(x.type, F64)) for x in xs]
        return b.fptrunc(body(b, float32, *wide), xs[0].type)
    return run


def c(x: ir.Value, value: float | ir.Value) -> ir.Value:
    """`value` in x's type (every lane); a value (a coefficient chosen per lane) as it is."""
    return value if isinstance(value, ir.Value) else A.const_like(x, value)


def fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """x y + z rounded once: the same bits on every CPU (one without FMA computes it in
    libm, slowly)."""
    return A.intrinsic(b, "fma", x, y, z)


def estrin(b: ir.IRBuilder, v: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    """The polynomial of `coefficients` (highest power first) at v, by Estrin's scheme:
    pairs c0 + c1 v, then pairs of those with v^2, v^4...: a chain of about log2(degree)
    fused multiply-adds where Horner's is `degree` long, so that a loop's iterations
    overlap less to hide it (Knuth, TAOCP vol. 2, 4.6.4)."""
    terms = [c(v, coef) for coef in reversed(coefficients)]  # lowest power first
    power = v
    while len(terms) > 1:
        pairs = [fma(b, hi, power, lo) for lo, hi in zip(terms[::2], terms[1::2])]
        terms = pairs + terms[len(pairs) * 2:]
        power = b.fmul(power, power) if len(terms) > 1 else power
    return terms[0]


def horner(b: ir.IRBuilder, v: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    """The polynomial of `coefficients` (highest power first) at v, by Horner's rule: one
    chain of fused multiply-adds, the fewest operations (short polynomials, and where the
    last terms' rounding matters)."""
    acc = c(v, coefficients[0])
    for coef in coefficients[1:]:
        acc = fma(b, acc, v, c(v, coef))
    return acc


def two_chains(b: ir.IRBuilder, v: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    """The polynomial of `coefficients` (highest power first) at v as two Horner chains
    in v^2, of its even and of its odd powers, joined by one fused multiply-add: half
    Horner's latency for one product more (Estrin's scheme, shorter still, made sin's
    throughput a third lower: more values live at once)."""
    v2 = b.fmul(v, v)
    lowest_first = coefficients[::-1]
    even = horner(b, v2, lowest_first[0::2][::-1])
    odd = horner(b, v2, lowest_first[1::2][::-1])
    return fma(b, odd, v, even)


def two_prod(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(p, e) with p = x y rounded and p + e = x y exactly (barring underflow)."""
    p = b.fmul(x, y)
    return p, fma(b, x, y, b.fneg(p))


def fast_two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(s, e) with s = x + y rounded and s + e = x + y exactly, for |x| >= |y| (or x = 0)."""
    s = b.fadd(x, y)
    return s, b.fsub(y, b.fsub(s, x))


def two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(s, e) with s = x + y rounded and s + e = x + y exactly, whatever their order."""
    s = b.fadd(x, y)
    y_part = b.fsub(s, x)
    x_part = b.fsub(s, y_part)
    return s, b.fadd(b.fsub(x, x_part), b.fsub(y, y_part))


def clamp(b: ir.IRBuilder, x: ir.Value, low: float, high: float) -> ir.Value:
    """x limited to [low, high]; a NaN fails both comparisons and stays NaN."""
    x = b.select(b.fcmp_ordered("<", x, c(x, low)), c(x, low), x)
    return b.select(b.fcmp_ordered(">", x, c(x, high)), c(x, high), x)


def round_to_integer(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x rounded to the nearest integer (ties to even), for |x| < 2^51: no conversion to
    an integer register (which AVX2 lacks for 64 bits)."""
    return b.fsub(b.fadd(x, c(x, MAGIC)), c(x, MAGIC))


def pow2(b: ir.IRBuilder, n: ir.Value) -> ir.Value:
    """2^n for float64 n an integer in [-1022, 1023], built from its exponent bits: the
    low bits of n + MAGIC hold n, which a shift moves into the exponent field."""
    it = A.like(n.type, I64)
    bits = b.shl(b.bitcast(b.fadd(n, c(n, MAGIC)), it), A.constant(it, 52))
    return b.bitcast(b.add(bits, A.constant(it, 1023 << 52)), n.type)


def split_exponent(b: ir.IRBuilder, n: ir.Value, limit: float) -> tuple[ir.Value, ir.Value]:
    """(2^n1, 2^n2) with n1 + n2 = n and n1 = n clamped to [-limit, limit]: 2^n in two
    factors, for n past the normal exponents. 2^n1 y is exact, and the multiplication by
    2^n2 (1 but past `limit`) rounds a result that overflows or is subnormal: that second
    rounding adds at most 2^-53 relative (y's own) to the half ulp of a subnormal."""
    n1 = clamp(b, n, -limit, limit)
    return pow2(b, n1), pow2(b, b.fsub(n, n1))


# Arithmetic that reads or makes a subnormal takes a microcode assist on x86-64 cores
# (about 150 cycles on Intel's, for each such instruction of a vector): the helpers below
# keep subnormals out of the arithmetic, so that every input range runs at the core
# range's speed (bench/math_ranges.py) and still gives NumPy's values (no flush to zero).
class Format(NamedTuple):
    """A float format's fields: the smallest normal is 2^-bias+1, the smallest subnormal
    2^-(bias - 1 + mantissa)."""
    integer: ir.IntType
    mantissa: int
    bias: int


FORMATS = {F64: Format(I64, 52, 1023), F32: Format(I32, 23, 127)}


def tiny(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The mask of x's lanes that are subnormal or zero (a comparison reads a subnormal
    without an assist)."""
    k = FORMATS[A.element(x.type)]
    it = A.like(x.type, k.integer)
    field = A.constant(it, ((1 << (k.integer.width - 1 - k.mantissa)) - 1) << k.mantissa)
    return b.icmp_unsigned("==", b.and_(b.bitcast(x, it), field), A.constant(it, 0))


def without_tiny(b: ir.IRBuilder, x: ir.Value,
                 v: ir.Value | None = None) -> tuple[ir.Value, ir.Value]:
    """(mask of x's subnormal and zero lanes, x with those lanes 0): for functions whose
    result there is f(0) or x itself, selected after (a polynomial in a subnormal makes
    subnormals and underflows: exp2 of subnormals took 160 ns an element, 1.2 after).
    Given v (x clamped, say), v with those lanes 0: the selection then rides on v's
    last operation (a zero-masked vminpd on AVX-512) instead of costing one more."""
    small = tiny(b, x)
    return small, b.select(small, c(x, 0.0), x if v is None else v)


def times_scale(b: ir.IRBuilder, y: ir.Value, scale: ir.Value, low: ir.Value) -> ir.Value:
    """y scale rounded once, subnormals included, for y and scale normal; `low`: the lanes
    where y scale is below the smallest normal t (or rounds to it), never a NaN's. There
    y scale + t in one fused multiply-add is normal (no assist), its ulp the subnormals'
    spacing, so it is y scale rounded as a subnormal, plus t: its bits less t's are the
    result's. Elsewhere the addend is 0 (y scale itself); callers leave a sliver of
    results subnormal outside `low` (correct, at an assist's cost). Three operations more
    than a product: selecting every lane's way exactly cost fourteen (exp's time 1.5x)."""
    k = FORMATS[A.element(y.type)]
    it = A.like(y.type, k.integer)
    t = b.select(low, c(y, 2.0 ** (1 - k.bias)), c(y, 0.0))
    v = fma(b, y, scale, t)
    return b.bitcast(b.sub(b.bitcast(v, it), b.bitcast(t, it)), y.type)


def subnormal_scaled(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, int]:
    """(x 2^m, m) for x subnormal, m = bias - 1 + mantissa: x's bits are the integer x 2^m,
    made a float by putting them under 2^mantissa's exponent and subtracting 2^mantissa
    (exact; other lanes give a normal value, or inf or NaN, to be selected away)."""
    k = FORMATS[A.element(x.type)]
    magic = c(x, 2.0 ** k.mantissa)
    it = A.like(x.type, k.integer)
    bits = b.or_(b.bitcast(x, it), b.bitcast(magic, it))
    return b.fsub(b.bitcast(bits, x.type), magic), k.bias - 1 + k.mantissa


def bits(v: float) -> int:
    """A float64's bits as a signed integer."""
    return struct.unpack("<q", struct.pack("<d", v))[0]
