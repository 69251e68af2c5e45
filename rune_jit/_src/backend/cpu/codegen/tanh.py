"""tanh of our own: straight-line arithmetic, one internal function per module and type.

libmvec's tanh took 1.5 times as long an element as this code (bench ST, one thread), and
libm's scalar tanh, which the scalar remainder of a vectorized loop called, rounds
differently from it. This code is the same operations on a scalar, a loop vector or a
lane block, so an element gets the same bits whichever path computes it (parallel_maps.py
relies on that). It is emitted once per module and LLVM type, and called
(module_functions.py): LLVM inlines it where that pays. It is within 4 ulp in float64
and float32 (docs/accuracy.md has the measured figures).

tanh(x) = sign(x) m / (m + 2), with m = expm1(2a) and a = |x| clamped to where tanh rounds
to 1 (so m is finite, and ±inf give ±1). Nothing cancels: m keeps its relative precision
down to the subnormals (it is built as 2r plus a smaller term), and the division is the
only one. A NaN fails the clamp's comparison and stays NaN; the sign of x is put back last
(-0 stays -0).

    >>> x = np.array([-np.inf, -0.0, 0.5, 1.0, 19.5, np.nan])
    >>> rune.jit(rnp.tanh)(x)
    array([-1.        , -0.        ,  0.46211716,  0.76159416,  1.        ,
                  nan])
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import llvmlite.ir as ir

from . import arith as A
from . import module_functions
from .emit import F64, I32, I64
from .vecmath import kit


class Coefficients(NamedTuple):
    clamp: float  # tanh(x) rounds to 1 from below here on
    exp: Sequence[float]  # exp(s)'s of s^d .. s^2 on |s| <= ln2/2 (1 + s + the rest)
    ln2: tuple[float, float]  # ln 2 as hi + lo, hi with trailing zeros so that n hi is exact
    int_type: ir.IntType
    mantissa_bits: int
    bias: int


LOG2E = 1.4426950408889634
FLOAT64 = Coefficients(
    clamp=20.0,  # 1 - tanh(20) = 8.5e-18, below half an ulp of 1
    # fitted by least squares on 200 Chebyshev nodes in 50 digits (mpmath): exp's relative
    # error 4e-18; one degree less is 3 ulp
    exp=(2.5024639266311035e-08, 2.7631140150201755e-07, 2.7557507361975543e-06,
         2.4801490307638598e-05, 0.00019841269596971038, 0.0013888888946713305,
         0.008333333333451529, 0.0416666666665162, 0.16666666666666483, 0.5000000000000012),
    ln2=(6.93145751953125e-1, 1.42860682030941723212e-6),
    int_type=I64, mantissa_bits=52, bias=1023)
FLOAT32 = Coefficients(  # Cephes' expf
    clamp=10.0,  # 1 - tanh(10) = 4.1e-9, below half an ulp of 1
    exp=(1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
         1.6666665459e-1, 5.0000001201e-1),
    ln2=(0.693359375, -2.12194440e-4),
    int_type=I32, mantissa_bits=23, bias=127)


def tanh(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """tanh of a float register, scalar or vector (float16: in float32, rounded once), as
    a call of the module's tanh for its type."""
    return A.in_float32(b, lambda v: module_functions.call(b, "tanh", _body, v), x)


def _body(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _tanh(b, x, FLOAT64 if A.element(x.type) == F64 else FLOAT32)


def _tanh(b: ir.IRBuilder, x: ir.Value, k: Coefficients) -> ir.Value:
    c = lambda value: A.const_like(x, value)  # noqa: E731
    a = A.intrinsic(b, "fabs", x)
    clamped = b.select(b.fcmp_ordered(">", a, c(k.clamp)), c(k.clamp), a)  # keeps a NaN
    small, clamped = kit.without_tiny(b, x, clamped)  # subnormals: x itself
    m = _expm1_twice(b, clamped, k)
    return b.select(small, x, A.intrinsic(b, "copysign", b.fdiv(m, b.fadd(m, c(2.0))), x))


def _expm1_twice(b: ir.IRBuilder, a: ir.Value, k: Coefficients) -> ir.Value:
    """expm1(2a) for 0 <= a <= clamp: 2^n (1 + e) - 1 in one rounding, where n = round(2a /
    ln2), r = a - n ln2 / 2 and e = expm1(2r) = 2r + r (r H(r)), H being exp's series in
    2r written in r (each coefficient scaled by a power of 2: no rounding). Adding
    1.5 * 2^mantissa_bits rounds 2a / ln2 to an integer held in the low bits of the sum,
    which a shift moves into an exponent field: 2^n with no conversion to integer (which
    AVX2 lacks for 64 bits)."""
    c = lambda value: A.const_like(a, value)  # noqa: E731
    magic = c(1.5 * 2.0 ** k.mantissa_bits)
    t = _fma(b, a, c(2 * LOG2E), magic)
    n = b.fsub(t, magic)
    r = _fma(b, n, c(-k.ln2[1] / 2), _fma(b, n, c(-k.ln2[0] / 2), a))
    it = A.like(a.type, k.int_type)
    bits = b.shl(b.bitcast(t, it), A.constant(it, k.mantissa_bits))
    scale = b.bitcast(b.add(bits, A.constant(it, k.bias << k.mantissa_bits)), a.type)
    top = len(k.exp) + 1  # the power of the first coefficient
    h = _horner(b, r, [coef * 2.0 ** (top - i) for i, coef in enumerate(k.exp)])
    e = _fma(b, r, b.fmul(r, h), b.fadd(r, r))
    return _fma(b, scale, e, b.fsub(scale, c(1.0)))  # 2^n - 1 is exact


def _horner(b: ir.IRBuilder, v: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    acc = A.const_like(v, coefficients[0])
    for coef in coefficients[1:]:
        acc = _fma(b, acc, v, A.const_like(v, coef))
    return acc


def _fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """x y + z rounded once: half the instructions of a product and a sum, and the same
    bits on every CPU (one without FMA computes it in libm, slowly)."""
    return A.intrinsic(b, "fma", x, y, z)
