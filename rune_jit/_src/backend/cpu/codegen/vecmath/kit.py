"""What the vector math's bodies share: float32 computed in float64, error-free sums and
products (double-double arithmetic: Muller et al., "Handbook of Floating-Point
Arithmetic", 2nd ed., 2018, ch. 4), powers of two built from their exponent bits, and
Estrin's and Horner's schemes with fused multiply-adds.

Every helper takes and returns float registers, a scalar or a vector alike.
"""

from __future__ import annotations

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


def c(x: ir.Value, value: float) -> ir.Constant:
    """`value` in x's type (every lane)."""
    return A.const_like(x, value)


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
    field = exponent_field(b, n)
    return b.bitcast(b.add(field, A.constant(field.type, 1023 << 52)), n.type)


def exponent_field(b: ir.IRBuilder, n: ir.Value) -> ir.Value:
    """n << 52 as an integer register, for float64 n an integer with |n| < 2^51."""
    it = A.like(n.type, I64)
    return b.shl(b.bitcast(b.fadd(n, c(n, MAGIC)), it), A.constant(it, 52))


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
    return b.fcmp_ordered("<", A.intrinsic(b, "fabs", x), c(x, 2.0 ** (1 - k.bias)))


def without_tiny(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(mask of x's subnormal and zero lanes, x with those lanes 0): for functions whose
    result there is f(0) or x itself, selected after."""
    small = tiny(b, x)
    return small, b.select(small, c(x, 0.0), x)


def times_pow2(b: ir.IRBuilder, y: ir.Value, field: ir.Value, low: ir.Value) -> ir.Value:
    """y 2^e rounded once, subnormals included, for y normal (or inf, NaN) and `field` = e
    in the exponent field (e << mantissa bits, an integer register); `low`: the lanes where
    y 2^e may be below the smallest normal (there e < 1 - mantissa, so that 2^(e + m)
    below is normal). There y 2^(e + m) with m = bias - 1 + mantissa is a normal v, exact,
    and v < 2^mantissa rounds to the integer whose bits are the subnormal's by adding
    2^mantissa (the grid of subnormals is that of integers after the scaling: the same
    rounding as y 2^e's); v >= 2^mantissa gives v 2^-m, normal."""
    k = FORMATS[A.element(y.type)]
    it = field.type
    shift = (k.bias - 1 + k.mantissa) << k.mantissa
    bias = b.add(field, A.constant(it, k.bias << k.mantissa))
    scale = b.select(low, b.add(bias, A.constant(it, shift)), bias)
    v = b.fmul(y, b.bitcast(scale, y.type))
    magic = c(y, 2.0 ** k.mantissa)
    subnormal = b.and_(low, b.fcmp_ordered("<", v, magic))
    bits = b.sub(b.bitcast(b.fadd(v, magic), it), b.bitcast(magic, it))
    back = b.select(b.and_(low, b.not_(subnormal)), c(y, 2.0 ** -(k.bias - 1 + k.mantissa)),
                    c(y, 1.0))
    return b.select(subnormal, b.bitcast(bits, y.type), b.fmul(v, back))


def subnormal_scaled(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, int]:
    """(x 2^m, m) for x subnormal, m = bias - 1 + mantissa: x's bits are the integer x 2^m,
    made a float by putting them under 2^mantissa's exponent and subtracting 2^mantissa
    (exact; other lanes give a normal value, or inf or NaN, to be selected away)."""
    k = FORMATS[A.element(x.type)]
    magic = c(x, 2.0 ** k.mantissa)
    it = A.like(x.type, k.integer)
    bits = b.or_(b.bitcast(x, it), b.bitcast(magic, it))
    return b.fsub(b.bitcast(bits, x.type), magic), k.bias - 1 + k.mantissa
