"""tanh of our own: straight-line arithmetic, one internal function per module and type.

libmvec's tanh took 1.5 times as long an element as this code (bench ST, one thread), and
libm's scalar tanh, which the scalar remainder of a vectorized loop called, rounds
differently from it. This code is the same operations on a scalar, a loop vector or a
lane block, so an element gets the same bits whichever path computes it (parallel_maps.py
relies on that). It is emitted once per module and LLVM type, and called
(module_functions.py): LLVM inlines it where that pays. It is within 1 ulp in float64
and float32 (docs/accuracy.md has the measured figures).

tanh(x) = sign(x) m / (m + 2), with m = expm1(2a) (vecmath/exp.py's, float32 computed in
float64 and rounded once) and a = |x| clamped to where tanh rounds to 1 (so m is finite,
and ±inf give ±1). Nothing cancels: m keeps its relative precision down to the
subnormals, and the quotient is a double-double one, rounded once. A NaN fails the
clamp's comparison and stays NaN; the sign of x is put back last (-0 stays -0).

    >>> x = np.array([-np.inf, -0.0, 0.5, 1.0, 19.5, np.nan])
    >>> rune.jit(rnp.tanh)(x)
    array([-1.        , -0.        ,  0.46211716,  0.76159416,  1.        ,
                  nan])
"""

from __future__ import annotations

import llvmlite.ir as ir

from . import arith as A
from . import module_functions
from .vecmath import exp, kit

CLAMP = 20.0  # 1 - tanh(20) = 8.5e-18: tanh rounds to 1 from below here on (float32: 9.01)


def tanh(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """tanh of a float register, scalar or vector (float16: in float32, rounded once), as
    a call of the module's tanh for its type."""
    return A.in_float32(b, lambda v: module_functions.call(b, "tanh", _body, v), x)


def _tanh(b: ir.IRBuilder, k: exp.Coefficients, x: ir.Value) -> ir.Value:
    """m / (m + 2) in double-double arithmetic: m = mh + ml, m + 2 = dh + dl, the quotient
    q0 = mh / dh corrected by the exact remainder mh - q0 dh (one fused multiply-add)."""
    a = kit.clamp(b, A.intrinsic(b, "fabs", x), 0.0, CLAMP)
    mh, ml = kit.fast_two_sum(b, *exp.expm1_parts(b, k, b.fadd(a, a))[:2])
    dh, dl = kit.two_sum(b, kit.c(a, 2.0), mh)
    dl = b.fadd(dl, ml)
    inv = b.fdiv(kit.c(a, 1.0), dh)
    q0 = b.fmul(mh, inv)
    rem = b.fadd(kit.fma(b, b.fneg(q0), dh, mh), kit.fma(b, b.fneg(q0), dl, ml))
    return A.intrinsic(b, "copysign", kit.fma(b, rem, inv, q0), x)


_body = kit.in_float64(_tanh, exp.FLOAT64, exp.FLOAT32)
