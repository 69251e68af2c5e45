"""Elementwise primitives, one table row each, with the rule families they share.

Operands of an elementwise equation have one dtype and either one shape or
shape () (a scalar operand broadcasts, so `x * 2.0` needs no broadcast
equation); the NumPy layer makes everything else explicit. The functions
exported here (`add`, `sin`, ...) are the strict IR-level operations the rules
are written in; Python numbers among their operands take the other operands'
dtype.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..ad_util import Zero, is_undefined
from ..dtypes import is_inexact, real_dtype
from .tangents import add_tangents
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import Tracer, bind1, type_of_value
from .jvp_rules import zero_jvp

FLOAT, INT, BOOL, COMPLEX = "f", "iu", "b", "c"  # integers signed and unsigned
NUMERIC = FLOAT + INT
INEXACT = FLOAT + COMPLEX

# ------------------------------------------------------------- rule families


def _common_shape(types: list[Type], name: str) -> tuple[int, ...]:
    shapes = {t.shape for t in types if t.shape != ()}
    if len(shapes) > 1:
        raise ValueError(f"{name}: operand shapes {sorted(shapes)} differ")
    return shapes.pop() if shapes else ()


def shape_rule(name: str, kinds: str, out_bool: bool, n_pred: int = 0,
                out: Callable | None = None) -> Callable:
    """The shape rule of an elementwise primitive: one dtype of `kinds` among its values
    (after `n_pred` bool predicates); the result bool, `out(dtype)`, or that dtype."""
    def shape(*types: Type) -> list[Type]:
        preds, vals = types[:n_pred], types[n_pred:]
        if any(p.dtype.kind != BOOL for p in preds):
            raise TypeError(f"{name}: the predicate must be bool, got {preds[0].dtype}")
        dtypes = {t.dtype for t in vals}
        if len(dtypes) != 1:
            raise TypeError(f"{name}: operand dtypes {sorted(map(str, dtypes))} differ")
        dtype = dtypes.pop()
        if dtype.kind not in kinds:
            raise TypeError(f"{name} does not accept {dtype}")
        shape = _common_shape(list(types), name)
        if out_bool:
            return [Type(np.dtype(bool), shape)]
        return [Type(np.dtype(out(dtype)) if out else dtype, shape)]

    return shape


def broadcast_operand(x: Any, per_example: tuple, size: int, batched: bool, full: tuple):
    """Bring one operand of a batched elementwise op to the form the op accepts."""
    from .shape import broadcast_in_dim

    if (batched and per_example == full) or (not batched and per_example == ()):
        return x
    if batched:  # a batched scalar among non-scalar operands
        return broadcast_in_dim(x, (size,) + full, (0,))
    return broadcast_in_dim(x, (size,) + full, tuple(range(1, 1 + len(full))))


def elementwise_batch(prim: Primitive) -> Callable:
    def batch(size, args, dims, **params):
        per = [
            type_of_value(a).shape[1:] if d is not None else type_of_value(a).shape
            for a, d in zip(args, dims)
        ]
        full = next((s for s in per if s != ()), ())
        args = [broadcast_operand(a, s, size, d is not None, full)
                for a, s, d in zip(args, per, dims)]
        return [bind1(prim, *args, **params)], [0]

    return batch


def unbroadcast(ct: Any, type: Type) -> Any:
    """Sum a full-shape cotangent down to a scalar operand's shape."""
    if type.shape == () and type_of_value(ct).shape != ():
        from .reduce import reduce_sum

        return reduce_sum(ct, tuple(range(type_of_value(ct).ndim)))
    return ct


def broadcast_to_shape(x: Any, shape: tuple) -> Any:
    if type_of_value(x).shape == shape:
        return x
    from .shape import broadcast_in_dim

    return broadcast_in_dim(x, shape, ())


def defjvp(prim: Primitive, *derivs: Callable | None) -> None:
    """jvp from one function per operand: deriv(t, *primals, ans) -> contribution."""

    def jvp(primals, tangents, **params):
        ans = bind1(prim, *primals, **params)
        shape = type_of_value(ans).shape
        out = Zero(type_of_value(ans))
        for d, t in zip(derivs, tangents):
            if d is not None and not isinstance(t, Zero):
                out = add_tangents(out, broadcast_to_shape(d(t, *primals, ans), shape))
        return [ans], [out]

    prim.def_rule("jvp", jvp)


def linear_transpose(*parts: Callable | None) -> Callable:
    """transpose from one function per operand: part(ct, *args) -> cotangent."""

    def transpose(cts, *args, **params):
        (ct,) = cts
        return [
            unbroadcast(p(ct, *args), a.type) if is_undefined(a) and p is not None else None
            for p, a in zip(parts, args)
        ]

    return transpose


# ------------------------------------------------------------- the table

_FUNCS: dict[str, Callable] = {}
# calls to libm (vector or scalar): work a loop should not repeat when it need not
COSTLY = ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arctan",
          "arctan2", "pow", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "cbrt", "log2",
          "log10", "exp2", "erfc", "hypot")
QUIET = ("div", "log", "log1p", "sqrt", "pow", "floor_divide", "remainder", "tan", "arctan2",
         "exp", "expm1", "sinh", "cosh")


# name -> (the NumPy computation of its impl, the operand kinds it accepts): what
# rune_jit.numpy's concrete-array fast path calls (numpy/fast.py)
NUMPY: dict[str, tuple[Callable, str]] = {}


def _quiet(np_fn: Callable) -> Callable:
    def f(*args):
        with np.errstate(all="ignore"):
            return np_fn(*args)

    return f


def _define(name: str, np_fn: Callable, kinds: str, out_bool: bool = False,
            n_pred: int = 0, out: Callable | None = None) -> Primitive:
    traits = {"elementwise", "costly"} if name in COSTLY else {"elementwise"}
    prim = Primitive(name, traits=frozenset(traits))
    prim.def_rule("shape", shape_rule(name, kinds, out_bool, n_pred, out))
    compute = _quiet(np_fn) if name in QUIET else np_fn
    NUMPY[name] = (compute, kinds)

    def impl(*args, **params):
        return [compute(*args)]

    prim.def_rule("impl", impl)
    prim.def_rule("batch", elementwise_batch(prim))
    prim.def_rule("transpose", NOT_LINEAR)

    def apply(*xs):
        return bind1(prim, *coerce(xs, n_pred))

    apply.__name__ = name
    _FUNCS[name] = apply
    return prim


def coerce(xs: tuple, n_pred: int = 0) -> list:
    """Python numbers among operands take the dtype of the array operands."""
    dtype = next((type_of_value(x).dtype for x in xs[n_pred:]
                  if isinstance(x, (Tracer, np.ndarray, np.generic))), None)
    return [np.asarray(x, dtype) if isinstance(x, (int, float, bool, complex)) and dtype else x
            for x in xs]


def const(value: float, like: Any) -> np.ndarray:
    """A scalar constant of `like`'s dtype."""
    return np.asarray(value, type_of_value(like).dtype)


UNARY_FLOAT = {
    "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "arctan": np.arctan,
}
# Complex operands: where NumPy defines the function for them. Ordering (lt, max, ...) is
# real only: rune_jit.numpy orders complex numbers lexicographically over their parts.
for _n, _f in UNARY_FLOAT.items():
    _define(_n, _f, INEXACT)
for _n, _f in {"neg": np.negative, "sign": np.sign}.items():
    _define(_n, _f, NUMERIC + COMPLEX)
_define("abs", np.abs, NUMERIC + COMPLEX, out=real_dtype)  # |z| is real
for _n, _f in {"isnan": np.isnan, "isfinite": np.isfinite}.items():
    _define(_n, _f, INEXACT, out_bool=True)
_define("logical_not", np.logical_not, BOOL)
for _n, _f in {"add": np.add, "mul": np.multiply}.items():
    _define(_n, _f, NUMERIC + BOOL + COMPLEX)
for _n, _f in {"max": np.maximum, "min": np.minimum}.items():
    _define(_n, _f, NUMERIC + BOOL)
for _n, _f in {"sub": np.subtract, "pow": np.power}.items():
    _define(_n, _f, NUMERIC + COMPLEX)
for _n, _f in {"floor_divide": np.floor_divide, "remainder": np.remainder}.items():
    _define(_n, _f, NUMERIC)
_define("div", np.true_divide, INEXACT)
_define("arctan2", np.arctan2, FLOAT)
COMPARISONS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}
for _n, _f in COMPARISONS.items():
    _define(_n, _f, NUMERIC + BOOL + (COMPLEX if _n in ("eq", "ne") else ""), out_bool=True)
for _n, _f in {"logical_and": np.logical_and, "logical_or": np.logical_or,
               "logical_xor": np.logical_xor}.items():
    _define(_n, _f, BOOL)
_define("select", np.where, NUMERIC + BOOL + COMPLEX, n_pred=1)
# Bits of integers (bools have the logical_* primitives). Shifts are NumPy's: arithmetic
# right shifts of signed integers, logical of unsigned ones, and a count past the bit
# width (or negative) shifts every bit out: 0, or -1 for a negative x shifted right.
for _n, _f in {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
               "bitwise_xor": np.bitwise_xor, "shift_left": np.left_shift,
               "shift_right": np.right_shift}.items():
    _define(_n, _f, INT)
_define("bitwise_not", np.invert, INT)

P = Primitive.registry
add_p = P["add"]
(sqrt, exp, expm1, log, log1p, sin, cos, tan, tanh, sinh, cosh, arctan, neg, abs, sign,
 isnan, isfinite, logical_not, add, mul, max, min, sub, pow, floor_divide, remainder, div,
 arctan2, lt, le, gt, ge, eq, ne, logical_and, logical_or, logical_xor, select, bitwise_and,
 bitwise_or, bitwise_xor, bitwise_not, shift_left, shift_right) = (
    _FUNCS[n] for n in (
        "sqrt exp expm1 log log1p sin cos tan tanh sinh cosh arctan neg abs sign isnan "
        "isfinite logical_not add mul max min sub pow floor_divide remainder div arctan2 "
        "lt le gt ge eq ne logical_and logical_or logical_xor select bitwise_and bitwise_or "
        "bitwise_xor bitwise_not shift_left shift_right").split())


def square(x):
    return mul(x, x)


# ------------------------------------------------------------- derivatives

defjvp(P["sqrt"], lambda t, x, ans: div(t, mul(2.0, ans)))
defjvp(P["exp"], lambda t, x, ans: mul(t, ans))
defjvp(P["expm1"], lambda t, x, ans: mul(t, add(ans, 1.0)))
defjvp(P["log"], lambda t, x, ans: div(t, x))
defjvp(P["log1p"], lambda t, x, ans: div(t, add(x, 1.0)))
defjvp(P["sin"], lambda t, x, ans: mul(t, cos(x)))
defjvp(P["cos"], lambda t, x, ans: neg(mul(t, sin(x))))
defjvp(P["tan"], lambda t, x, ans: mul(t, add(1.0, square(ans))))
defjvp(P["tanh"], lambda t, x, ans: mul(t, sub(1.0, square(ans))))
defjvp(P["sinh"], lambda t, x, ans: mul(t, cosh(x)))
defjvp(P["cosh"], lambda t, x, ans: mul(t, sinh(x)))
defjvp(P["arctan"], lambda t, x, ans: div(t, add(1.0, square(x))))
defjvp(P["abs"], lambda t, x, ans: _abs_tangent(t, x, ans))
defjvp(P["neg"], lambda t, x, ans: neg(t))
defjvp(P["add"], lambda t, a, b, ans: t, lambda t, a, b, ans: t)
defjvp(P["sub"], lambda t, a, b, ans: t, lambda t, a, b, ans: neg(t))
defjvp(P["mul"], lambda t, a, b, ans: mul(t, b), lambda t, a, b, ans: mul(a, t))
defjvp(P["div"], lambda t, a, b, ans: div(t, b), lambda t, a, b, ans: neg(mul(t, div(ans, b))))
defjvp(P["arctan2"],
       lambda t, y, x, ans: mul(t, div(x, add(square(x), square(y)))),
       lambda t, y, x, ans: mul(t, div(neg(y), add(square(x), square(y)))))
defjvp(P["remainder"],
       lambda t, a, b, ans: t,
       lambda t, a, b, ans: neg(mul(t, floor_divide(a, b))))


def _abs_tangent(t, x, ans):
    """d|x| = sign(x) dx for real x; for complex z, Re(conj(z) dz) / |z| (0 at z = 0, as
    JAX takes it)."""
    if type_of_value(x).dtype.kind != COMPLEX:
        return mul(t, sign(x))
    from .complex_parts import conj, real

    return real(mul(conj(x), mul(t, convert(_safe_inverse(ans), type_of_value(x).dtype))))


def _safe_inverse(r):
    zero = eq(r, 0.0)
    return select(zero, const(0.0, r), div(const(1.0, r), select(zero, const(1.0, r), r)))


def _pow_base(t, x, y, ans):
    # y * x**(y-1), taken as 0 where y == 0 (so 0**0 has derivative 0, not nan)
    coef = select(eq(y, 0.0), const(0.0, y), mul(y, pow(x, sub(y, 1.0))))
    return mul(t, coef)


def _pow_exponent(t, x, y, ans):
    # ans * log(x), with log taken at 1 where x == 0 (0**y is flat in y for y > 0)
    safe = select(eq(x, 0.0), const(1.0, x), x)
    return mul(t, mul(ans, log(safe)))


defjvp(P["pow"], _pow_base, _pow_exponent)


def _pick(which: float) -> Callable:
    """max/min: the tangent of the winner; half of each at a tie, as JAX does."""

    def deriv(t, a, b, ans):
        mine, other = (a, b) if which == 0 else (b, a)
        half, one, zero = (const(v, ans) for v in (0.5, 1.0, 0.0))
        weight = select(eq(mine, ans), select(eq(other, ans), half, one), zero)
        return mul(t, weight)

    return deriv


defjvp(P["max"], _pick(0), _pick(1))
defjvp(P["min"], _pick(0), _pick(1))
for _n in ("sign", "isnan", "isfinite", "logical_not", "floor_divide", "logical_and",
           "logical_or", "logical_xor", *COMPARISONS, "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "shift_left", "shift_right"):
    zero_jvp(P[_n])


def _select_jvp(primals, tangents):
    p, a, b = primals
    ans = select(p, a, b)
    _, ta, tb = tangents
    if isinstance(ta, Zero) and isinstance(tb, Zero):
        return [ans], [Zero(type_of_value(ans))]
    ta = const(0.0, a) if isinstance(ta, Zero) else ta
    tb = const(0.0, b) if isinstance(tb, Zero) else tb
    # a zero branch is a scalar constant, so the tangent takes ans's shape explicitly
    return [ans], [broadcast_to_shape(select(p, ta, tb), type_of_value(ans).shape)]


P["select"].def_rule("jvp", _select_jvp)

# ------------------------------------------------------------- transposes

P["neg"].def_rule("transpose", linear_transpose(lambda ct, x: neg(ct)))
P["add"].def_rule("transpose", linear_transpose(lambda ct, a, b: ct, lambda ct, a, b: ct))
P["sub"].def_rule("transpose", linear_transpose(lambda ct, a, b: ct, lambda ct, a, b: neg(ct)))
P["mul"].def_rule("transpose", linear_transpose(lambda ct, a, b: mul(ct, b),
                                                 lambda ct, a, b: mul(a, ct)))
P["div"].def_rule("transpose", linear_transpose(lambda ct, a, b: div(ct, b), None))
P["select"].def_rule("transpose", linear_transpose(
    None,
    lambda ct, p, a, b: select(p, ct, const(0.0, ct)),
    lambda ct, p, a, b: select(p, const(0.0, ct), ct),
))


# ------------------------------------------------------------- dtype conversion

convert_p = Primitive("convert", traits=frozenset({"elementwise"}))


@convert_p.def_rule("shape")
def _convert_shape(x: Type, *, dtype: np.dtype) -> list[Type]:
    return [Type(np.dtype(dtype), x.shape)]


@convert_p.def_rule("impl")
def _convert_impl(x, *, dtype):
    # complex to real keeps the real part, silently: rune_jit.numpy warns where NumPy does
    # (complex to complex keeps both parts)
    x = np.asarray(x)
    to_real = x.dtype.kind == COMPLEX and np.dtype(dtype).kind != COMPLEX
    return [(x.real if to_real else x).astype(dtype)]


@convert_p.def_rule("jvp")
def _convert_jvp(primals, tangents, *, dtype):
    (x,), (t,) = primals, tangents
    ans = convert(x, dtype)
    if isinstance(t, Zero) or not is_inexact(dtype):
        return [ans], [Zero(type_of_value(ans))]
    return [ans], [convert(t, dtype)]


@convert_p.def_rule("transpose")
def _convert_transpose(cts, x, *, dtype):
    return [convert(cts[0], x.type.dtype)]


convert_p.def_rule("batch", lambda size, args, dims, *, dtype: ([convert(args[0], dtype)], dims))


def convert(x: Any, dtype: np.dtype) -> Any:
    dtype = np.dtype(dtype)
    if type_of_value(x).dtype == dtype:
        return x
    return bind1(convert_p, x, dtype=dtype)


# ------------------------------------------------------------- bits as other dtypes

UINT8 = np.dtype(np.uint8)
bitwise_count_p = Primitive("bitwise_count", traits=frozenset({"elementwise"}))


@bitwise_count_p.def_rule("shape")
def _bitwise_count_shape(x: Type) -> list[Type]:
    if x.dtype.kind not in INT:
        raise TypeError(f"bitwise_count does not accept {x.dtype}")
    return [Type(UINT8, x.shape)]


# NumPy's: the one bits of |x| (so -1 has one), as uint8
bitwise_count_p.def_rule("impl", lambda x: [np.bitwise_count(x)])
bitwise_count_p.def_rule("batch", elementwise_batch(bitwise_count_p))
bitwise_count_p.def_rule("transpose", NOT_LINEAR)
zero_jvp(bitwise_count_p)


def bitwise_count(x: Any) -> Any:
    """The number of one bits of |x|, as uint8 (NumPy's bitwise_count)."""
    return bind1(bitwise_count_p, x)


bitcast_convert_p = Primitive("bitcast_convert", traits=frozenset({"elementwise"}))


@bitcast_convert_p.def_rule("shape")
def _bitcast_shape(x: Type, *, dtype: np.dtype) -> list[Type]:
    dtype = np.dtype(dtype)
    if BOOL in (x.dtype.kind, dtype.kind) or x.dtype.itemsize != dtype.itemsize:
        raise TypeError(f"bitcast_convert: cannot read the bits of {x.dtype} as {dtype}; "
                        "both must be numbers of one width (uint32 and float32, ...)")
    return [Type(dtype, x.shape)]


@bitcast_convert_p.def_rule("impl")
def _bitcast_impl(x, *, dtype):
    x = np.asarray(x)
    _bitcast_shape(Type(x.dtype, x.shape), dtype=dtype)  # the same TypeError, eagerly
    return [x.view(dtype)]

bitcast_convert_p.def_rule("batch", lambda size, args, dims, *, dtype: (
    [bitcast_convert(args[0], dtype)], dims))
bitcast_convert_p.def_rule("transpose", NOT_LINEAR)
zero_jvp(bitcast_convert_p)  # bits reinterpreted: a step function of x, not a smooth one


def bitcast_convert(x: Any, dtype: np.dtype) -> Any:
    """x's bits read as `dtype`, of the same width (as JAX's lax.bitcast_convert_type):
    `bitcast_convert(np.float32(1.0), np.uint32)` is 0x3f800000."""
    dtype = np.dtype(dtype)
    if type_of_value(x).dtype == dtype:
        return x
    return bind1(bitcast_convert_p, x, dtype=dtype)


# ------------------------------------------------------------- erf and its inverse

class _NumPyElements:
    """NumPy's ufuncs under the names of the portable element rules' `e`: an element rule
    run on arrays, which makes it the primitive's impl too (one sequence of roundings)."""

    log1p, mul, neg, sqrt, abs, add, sub = (np.log1p, np.multiply, np.negative, np.sqrt,
                                           np.abs, np.add, np.subtract)
    fma = staticmethod(lambda a, b, c: _fma_impl(a, b, c))
    lt, eq, select = np.less, np.equal, np.where

    @staticmethod
    def const(like, value):
        return np.asarray(value, np.asarray(like).dtype)

    @staticmethod
    def convert(x, *, dtype):
        return np.asarray(x).astype(dtype)

    @staticmethod
    def dtype(x) -> np.dtype:
        return np.asarray(x).dtype


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): w = -log(1 - x²),
# then a polynomial in w (or sqrt(w)) per range, times x. XLA's, and so JAX's, erf_inv
# evaluates it in this order (Horner's rule, c + p * w fused), which is what makes
# rune_jit.random.normal follow JAX's to the last bits of log1p.
GILES_32 = ((5.0, 2.5, False, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                               -4.39150654e-06, 0.00021858087, -0.00125372503,
                               -0.00417768164, 0.246640727, 1.50140941)),
            (None, 3.0, True, (-0.000200214257, 0.000100950558, 0.00134934322,
                               -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                               1.00167406, 2.83297682)))
GILES_64 = ((6.25, 3.125, False, (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)),
    (16.0, 3.25, True, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (None, 5.0, True, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)))


def _erfinv_element(e, x):
    """One element of erfinv(x), in `e`'s operations: a portable element rule (and, with
    NumPy's ufuncs, the impl). float16 computes in float32, as XLA's does."""
    half = e.dtype(x) == np.float16
    if half:
        x = e.convert(x, dtype=np.dtype(np.float32))
    w = e.neg(e.log1p(e.mul(x, e.neg(x))))
    root = e.sqrt(w)
    ranges = GILES_64 if e.dtype(x) == np.float64 else GILES_32
    # One Horner's rule for every range: each lane selects its range's argument and
    # coefficients, the shorter ranges' led by zeros (fma(0, t, c) is c exactly, so the
    # bits are those of evaluating its own range alone) — a third of the multiply-adds
    # of evaluating all three ranges and selecting among the results.
    size = sorted(len(r[3]) for r in ranges)[-1]
    t, coefs = None, []
    for below, shift, use_root, cs in reversed(ranges):  # the last range is the default
        here = e.sub(root if use_root else w, e.const(x, shift))
        padded = [e.const(x, c) for c in (0.0,) * (size - len(cs)) + tuple(cs)]
        if t is None:
            t, coefs = here, padded
            continue
        inside = e.lt(w, e.const(x, below))
        t = e.select(inside, here, t)
        coefs = [e.select(inside, c, k) for c, k in zip(padded, coefs)]
    p = coefs[0]
    for c in coefs[1:]:  # c + p * t, fused as XLA's CPU code fuses it
        p = e.fma(p, t, c)
    # erfinv(±1) = ±inf, where the polynomial is indeterminate
    y = e.select(e.eq(e.abs(x), e.const(x, 1.0)), e.mul(x, e.const(x, np.inf)),
                 e.mul(p, x))
    return e.convert(y, dtype=np.dtype(np.float16)) if half else y


erfinv_p = Primitive("erfinv", traits=frozenset({"elementwise", "costly"}))
erfinv_p.def_rule("shape", shape_rule("erfinv", FLOAT, False))


@erfinv_p.def_rule("impl")
def _erfinv_impl(x):
    with np.errstate(all="ignore"):
        return [np.asarray(_erfinv_element(_NumPyElements, np.asarray(x)), np.asarray(x).dtype)]


erfinv_p.def_rule("element", _erfinv_element)
erfinv_p.def_rule("batch", elementwise_batch(erfinv_p))
erfinv_p.def_rule("transpose", NOT_LINEAR)
# d erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x)²) dx
defjvp(erfinv_p, lambda t, x, ans: mul(t, mul(const(np.sqrt(np.pi) / 2, ans), exp(square(ans)))))


def erfinv(x: Any) -> Any:
    """The inverse error function, as JAX's lax.erf_inv computes it (Giles' polynomials):
    erfinv(erf(0.5)) is 0.5, erfinv(±1) is ±inf."""
    return bind1(erfinv_p, x)


def _erf_impl(x):
    """erf with Python's math.erf (correctly rounded to within an ulp), element by element:
    NumPy has no erf."""
    x = np.asarray(x)
    wide = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))
    return [np.asarray(wide, x.dtype)]


erf_p = Primitive("erf", traits=frozenset({"elementwise", "costly"}))
erf_p.def_rule("shape", shape_rule("erf", FLOAT, False))
erf_p.def_rule("impl", _erf_impl)
erf_p.def_rule("batch", elementwise_batch(erf_p))
erf_p.def_rule("transpose", NOT_LINEAR)
# d erf(x) = 2 / sqrt(pi) * exp(-x²) dx
defjvp(erf_p, lambda t, x, ans: mul(t, mul(const(2 / np.sqrt(np.pi), x), exp(neg(square(x))))))


def erf(x: Any) -> Any:
    """The error function (libm's erf in compiled code)."""
    return bind1(erf_p, x)


# ------------------------------------------------------------- fused multiply-add

def _two_sum(a, b):
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """p + e = a * b exactly, p = fl(a * b) (Dekker, with Veltkamp's splitting)."""
    p = a * b

    def halves(x):
        t = 134217729.0 * x  # 2**27 + 1
        hi = t - (t - x)
        return hi, x - hi

    (ah, al), (bh, bl) = halves(a), halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd_sum(a, b):
    """a + b rounded to odd: exact, or the neighbour whose last bit is 1 (enough bits
    for a second rounding to a narrower precision to be correct)."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    return np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def _fma_float64(a, b, c):
    """a * b + c rounded once, in float64 arithmetic (Boldo and Melquiond, "Emulation of
    a FMA and correctly-rounded sums", 2008): NumPy has no fma. The emulation needs
    Veltkamp's splitting not to overflow (a factor below 2^996: past it, NaN), the
    product not to (inf - inf in its error: NaN) and the product's error to be a normal
    number (a product above 2^-969): the other finite elements are computed exactly, in
    rationals."""
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    out = np.asarray(th + _round_odd_sum(tl, ul))
    out = np.where(out == 0, a * b + c, out)  # an exact zero's sign: IEEE's, as the sum's
    a, b, c = np.broadcast_arrays(a, b, c)
    big = np.maximum(np.abs(a), np.abs(b)) >= 2.0 ** 996
    tiny = (np.abs(uh) < 2.0 ** -969) & (a != 0) & (b != 0)
    hard = (big | tiny | ~np.isfinite(out)) & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    if hard.any():
        out = out.copy()
        out[hard] = [_exact_fma(*v) for v in zip(a[hard], b[hard], c[hard])]
    return out


def _exact_fma(a: float, b: float, c: float) -> float:
    """a * b + c correctly rounded (Python's float of a Fraction is), inf past the
    largest float, and zero's sign as IEEE gives it."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return float(np.float64(a) * np.float64(b) + np.float64(c))  # +0 or -0 as IEEE
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def _fma_impl(a, b, c):
    a, b, c = (np.asarray(v) for v in (a, b, c))
    dtype = a.dtype
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            out = _fma_float64(a, b, c)
        else:  # float32's product is exact in float64; rounding to odd keeps one rounding
            wide = [v.astype(np.float64) for v in (a, b, c)]
            out = _round_odd_sum(wide[0] * wide[1], wide[2]).astype(np.float32)
    return np.asarray(out, dtype)


fma_p = _define("fma", _fma_impl, FLOAT)
defjvp(fma_p, lambda t, a, b, c, ans: mul(t, b), lambda t, a, b, c, ans: mul(a, t),
       lambda t, a, b, c, ans: t)
fma_p.def_rule("transpose", linear_transpose(
    lambda ct, a, b, c: mul(ct, b), lambda ct, a, b, c: mul(a, ct), lambda ct, a, b, c: ct))


def fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c with one rounding (float16: in float32, then rounded to half), as a
    fused multiply-add instruction computes it, and as XLA's CPU code computes a product
    followed by a sum: `fma(0.1, 10.0, -1.0)` is 5.55e-17, not 0."""
    return _FUNCS["fma"](a, b, c)


# ------------------------------------------------------------- rounding, inverse and base-2/10
# functions, erfc, hypot, copysign, fmod (rune_jit.numpy's floor, arcsin, log2, ...)

def _erfc_impl(x):
    """erfc with Python's math.erfc (NumPy has none), element by element."""
    x = np.asarray(x)
    return np.asarray(np.vectorize(math.erfc, otypes=[np.float64])(x.astype(np.float64)),
                      x.dtype)


# name: (NumPy's function, operand kinds, derivative per operand: deriv(t, *xs, ans)).
# floor, ceil, trunc and rint (round half to even) are piecewise constant: derivative 0
# everywhere, the jumps included, as in JAX.
MORE_FLOAT = {
    "floor": (np.floor, FLOAT, None), "ceil": (np.ceil, FLOAT, None),
    "trunc": (np.trunc, FLOAT, None), "rint": (np.rint, FLOAT, None),
    "arcsin": (np.arcsin, INEXACT, (lambda t, x, ans: div(t, sqrt(sub(1.0, square(x)))),)),
    "arccos": (np.arccos, INEXACT, (lambda t, x, ans: neg(div(t, sqrt(sub(1.0, square(x))))),)),
    "arcsinh": (np.arcsinh, INEXACT, (lambda t, x, ans: div(t, sqrt(add(square(x), 1.0))),)),
    "arccosh": (np.arccosh, INEXACT,
                (lambda t, x, ans: div(t, mul(sqrt(sub(x, 1.0)), sqrt(add(x, 1.0)))),)),
    "arctanh": (np.arctanh, INEXACT, (lambda t, x, ans: div(t, sub(1.0, square(x))),)),
    "cbrt": (np.cbrt, FLOAT, (lambda t, x, ans: div(t, mul(3.0, square(ans))),)),
    "log2": (np.log2, INEXACT, (lambda t, x, ans: div(t, mul(x, const(math.log(2), x))),)),
    "log10": (np.log10, INEXACT, (lambda t, x, ans: div(t, mul(x, const(math.log(10), x))),)),
    "exp2": (np.exp2, INEXACT, (lambda t, x, ans: mul(t, mul(ans, const(math.log(2), x))),)),
    "erfc": (_erfc_impl, FLOAT, (lambda t, x, ans: mul(
        t, mul(const(-2 / np.sqrt(np.pi), x), exp(neg(square(x))))),)),
    # hypot's derivative at (0, 0), where it has none, is taken as 0
    "hypot": (np.hypot, FLOAT, (lambda t, x, y, ans: mul(t, _safe_ratio(x, ans)),
                                lambda t, x, y, ans: mul(t, _safe_ratio(y, ans)))),
    # d/dx copysign(x, y) = ±1 (whether the sign changes); flat in y
    "copysign": (np.copysign, FLOAT, (lambda t, x, y, ans: mul(
        t, mul(copysign(const(1.0, x), x), copysign(const(1.0, y), y))), None)),
    # C's fmod (the remainder takes the dividend's sign): a - trunc(a / b) * b
    "fmod": (np.fmod, NUMERIC, (lambda t, a, b, ans: t,
                                lambda t, a, b, ans: neg(mul(t, trunc(div(a, b)))))),
}


def _safe_ratio(x, r):
    zero = eq(r, 0.0)
    return select(zero, const(0.0, r), div(x, select(zero, const(1.0, r), r)))


for _n, (_f, _k, _d) in MORE_FLOAT.items():
    _p = _define(_n, _quiet(_f), _k)
    if _d is None:
        zero_jvp(_p)
    else:
        defjvp(_p, *_d)
(floor, ceil, trunc, rint, arcsin, arccos, arcsinh, arccosh, arctanh, cbrt, log2, log10, exp2,
 erfc, hypot, copysign, fmod) = (_FUNCS[n] for n in MORE_FLOAT)
