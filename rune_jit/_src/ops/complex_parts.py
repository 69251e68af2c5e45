"""The parts of complex numbers: real, imag, conj, and complex (a number from its parts).

Their derivatives and transposes are JAX's (lax.real_p, imag_p, conj_p, complex_p). All
four are linear over the reals; a transpose is taken with respect to the real pairing
<a, b> = Re(sum(a * b)), without conjugation, as every other transpose of rune_jit's
(`mul`'s is ct * b). So the cotangent of real(z) is complex(ct, 0), of imag(z) is
complex(0, -ct), of conj(z) is conj(ct), and complex(x, y) sends ct to (Re ct, -Im ct).
With these, grad of a real function f of z = x + iy is df/dx - i df/dy, JAX's convention
(docs/semantics.md).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ad_util import Zero
from ..dtypes import complex_dtype, real_dtype
from ..primitive import Primitive
from ..trace import bind1, type_of_value
from . import elementwise as ew


def _define(name: str, np_fn: Callable, kind: str, out: Callable,
            jvp: Callable, transpose: Callable) -> Primitive:
    prim = Primitive(name, traits=frozenset({"elementwise"}))
    prim.def_rule("shape", ew.shape_rule(name, kind, False, out=out))
    prim.def_rule("impl", lambda *xs: [np.asarray(np_fn(*xs))])
    prim.def_rule("batch", ew.elementwise_batch(prim))
    # linear: the tangent is the function of the tangents (a zero one a zero constant)
    ew.defjvp(prim, *jvp)
    prim.def_rule("transpose", ew.linear_transpose(*transpose))
    return prim


def _zero_like(x: Any) -> np.ndarray:
    return ew.const(0.0, x)


real_p = _define("real", np.real, ew.COMPLEX, real_dtype,
                 (lambda t, z, ans: real(t),),
                 (lambda ct, z: complex_(ct, _zero_like(ct)),))
imag_p = _define("imag", np.imag, ew.COMPLEX, real_dtype,
                 (lambda t, z, ans: imag(t),),
                 (lambda ct, z: complex_(_zero_like(ct), ew.neg(ct)),))
conj_p = _define("conj", np.conj, ew.COMPLEX, None,
                 (lambda t, z, ans: conj(t),),
                 (lambda ct, z: conj(ct),))


def _complex_values(x, y):
    """x + iy of float arrays, exactly (x + 1j*y would turn inf * 0j into nan)."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    out = np.empty(x.shape, complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


complex_p = _define("complex", _complex_values, "f", complex_dtype,
                    (lambda t, x, y, ans: complex_(t, _zero_like(t)),
                     lambda t, x, y, ans: complex_(_zero_like(t), t)),
                    (lambda ct, x, y: real(ct), lambda ct, x, y: ew.neg(imag(ct))))


def real(z: Any) -> Any:
    """The real part of a complex value (a float value of its parts' width)."""
    return bind1(real_p, z)


def imag(z: Any) -> Any:
    """The imaginary part of a complex value."""
    return bind1(imag_p, z)


def conj(z: Any) -> Any:
    """The complex conjugate of a complex value."""
    return bind1(conj_p, z)


def complex_(x: Any, y: Any) -> Any:
    """x + iy from two float values of one dtype (float32 parts make complex64)."""
    return bind1(complex_p, *ew.coerce((x, y)))


def parts(z: Any) -> tuple[Any, Any]:
    """(real(z), imag(z)) of a complex value; (x, 0) of a real one."""
    if type_of_value(z).dtype.kind != ew.COMPLEX:
        return z, ew.const(0.0, z)
    return real(z), imag(z)


def _sign_jvp(primals, tangents):
    """sign is piecewise constant on the reals; on complex values it is z / |z|, whose
    derivative is i sign(z) Im(conj(sign z) dz) / |z| (0 at z = 0). JAX's sign has a zero
    derivative on complex values too, which finite differences refute: here it is the
    derivative (and slogdet's sign, which JAX differentiates on its own, agrees)."""
    (z,), (t,) = primals, tangents
    ans = ew.sign(z)
    if type_of_value(z).dtype.kind != ew.COMPLEX or isinstance(t, Zero):
        return [ans], [Zero(type_of_value(ans))]
    r = ew.abs(z)
    at_zero = ew.eq(r, ew.const(0.0, r))
    d = ew.select(at_zero, ew.const(0.0, r),
                  ew.div(imag(ew.mul(conj(ans), t)), ew.select(at_zero, ew.const(1.0, r), r)))
    return [ans], [ew.mul(ans, complex_(ew.mul(d, ew.const(0.0, d)), d))]


ew.P["sign"].def_rule("jvp", _sign_jvp)  # after elementwise.py's zero rule, which it refines
