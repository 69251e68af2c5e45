"""Elementwise primitives, one table row each, with the rule families they share.

Operands of an elementwise equation have one dtype and either one shape or
shape () (a scalar operand broadcasts, so `x * 2.0` needs no broadcast
equation); the NumPy layer makes everything else explicit. The functions
exported here (`add`, `sin`, ...) are the strict IR-level operations the rules
are written in; Python numbers among their operands take the other operands'
dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ad_util import Zero, is_undefined
from .tangents import add_tangents
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import Tracer, bind1, type_of_value
from .jvp_rules import zero_jvp

FLOAT, INT, BOOL = "f", "i", "b"
NUMERIC = FLOAT + INT

# ------------------------------------------------------------- rule families


def _common_shape(types: list[Type], name: str) -> tuple[int, ...]:
    shapes = {t.shape for t in types if t.shape != ()}
    if len(shapes) > 1:
        raise ValueError(f"{name}: operand shapes {sorted(shapes)} differ")
    return shapes.pop() if shapes else ()


def _shape_rule(name: str, kinds: str, out_bool: bool, n_pred: int = 0) -> Callable:
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
        return [Type(np.dtype(bool) if out_bool else dtype, shape)]

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


def _linear_transpose(*parts: Callable | None) -> Callable:
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
          "arctan2", "pow")
QUIET = ("div", "log", "log1p", "sqrt", "pow", "floor_divide", "remainder", "tan", "arctan2",
         "exp", "expm1", "sinh", "cosh")


def _define(name: str, np_fn: Callable, kinds: str, out_bool: bool = False,
            n_pred: int = 0) -> Primitive:
    traits = {"elementwise", "costly"} if name in COSTLY else {"elementwise"}
    prim = Primitive(name, traits=frozenset(traits))
    prim.def_rule("shape", _shape_rule(name, kinds, out_bool, n_pred))
    if name in QUIET:
        def impl(*args, **params):
            with np.errstate(all="ignore"):
                return [np_fn(*args)]
    else:
        def impl(*args, **params):
            return [np_fn(*args)]
    prim.def_rule("impl", impl)
    prim.def_rule("batch", elementwise_batch(prim))
    prim.def_rule("transpose", NOT_LINEAR)

    def apply(*xs):
        return bind1(prim, *_coerce(xs, n_pred))

    apply.__name__ = name
    _FUNCS[name] = apply
    return prim


def _coerce(xs: tuple, n_pred: int = 0) -> list:
    """Python numbers among operands take the dtype of the array operands."""
    dtype = next((type_of_value(x).dtype for x in xs[n_pred:]
                  if isinstance(x, (Tracer, np.ndarray, np.generic))), None)
    return [np.asarray(x, dtype) if isinstance(x, (int, float, bool)) and dtype else x
            for x in xs]


def const(value: float, like: Any) -> np.ndarray:
    """A scalar constant of `like`'s dtype."""
    return np.asarray(value, type_of_value(like).dtype)


UNARY_FLOAT = {
    "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "arctan": np.arctan,
}
for _n, _f in UNARY_FLOAT.items():
    _define(_n, _f, FLOAT)
for _n, _f in {"neg": np.negative, "abs": np.abs, "sign": np.sign}.items():
    _define(_n, _f, NUMERIC)
for _n, _f in {"isnan": np.isnan, "isfinite": np.isfinite}.items():
    _define(_n, _f, FLOAT, out_bool=True)
_define("logical_not", np.logical_not, BOOL)
for _n, _f in {"add": np.add, "mul": np.multiply, "max": np.maximum,
               "min": np.minimum}.items():
    _define(_n, _f, NUMERIC + BOOL)
for _n, _f in {"sub": np.subtract, "pow": np.power, "floor_divide": np.floor_divide,
               "remainder": np.remainder}.items():
    _define(_n, _f, NUMERIC)
_define("div", np.true_divide, FLOAT)
_define("arctan2", np.arctan2, FLOAT)
COMPARISONS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}
for _n, _f in COMPARISONS.items():
    _define(_n, _f, NUMERIC + BOOL, out_bool=True)
for _n, _f in {"logical_and": np.logical_and, "logical_or": np.logical_or,
               "logical_xor": np.logical_xor}.items():
    _define(_n, _f, BOOL)
_define("select", np.where, NUMERIC + BOOL, n_pred=1)

P = Primitive.registry
add_p = P["add"]
(sqrt, exp, expm1, log, log1p, sin, cos, tan, tanh, sinh, cosh, arctan, neg, abs, sign,
 isnan, isfinite, logical_not, add, mul, max, min, sub, pow, floor_divide, remainder, div,
 arctan2, lt, le, gt, ge, eq, ne, logical_and, logical_or, logical_xor, select) = (
    _FUNCS[n] for n in (
        "sqrt exp expm1 log log1p sin cos tan tanh sinh cosh arctan neg abs sign isnan "
        "isfinite logical_not add mul max min sub pow floor_divide remainder div arctan2 "
        "lt le gt ge eq ne logical_and logical_or logical_xor select").split())


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
defjvp(P["abs"], lambda t, x, ans: mul(t, sign(x)))
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
           "logical_or", "logical_xor", *COMPARISONS):
    zero_jvp(P[_n])


def _select_jvp(primals, tangents):
    p, a, b = primals
    ans = select(p, a, b)
    _, ta, tb = tangents
    if isinstance(ta, Zero) and isinstance(tb, Zero):
        return [ans], [Zero(type_of_value(ans))]
    ta = const(0.0, a) if isinstance(ta, Zero) else ta
    tb = const(0.0, b) if isinstance(tb, Zero) else tb
    return [ans], [select(p, ta, tb)]


P["select"].def_rule("jvp", _select_jvp)

# ------------------------------------------------------------- transposes

P["neg"].def_rule("transpose", _linear_transpose(lambda ct, x: neg(ct)))
P["add"].def_rule("transpose", _linear_transpose(lambda ct, a, b: ct, lambda ct, a, b: ct))
P["sub"].def_rule("transpose", _linear_transpose(lambda ct, a, b: ct, lambda ct, a, b: neg(ct)))
P["mul"].def_rule("transpose", _linear_transpose(lambda ct, a, b: mul(ct, b),
                                                 lambda ct, a, b: mul(a, ct)))
P["div"].def_rule("transpose", _linear_transpose(lambda ct, a, b: div(ct, b), None))
P["select"].def_rule("transpose", _linear_transpose(
    None,
    lambda ct, p, a, b: select(p, ct, const(0.0, ct)),
    lambda ct, p, a, b: select(p, const(0.0, ct), ct),
))


# ------------------------------------------------------------- dtype conversion

convert_p = Primitive("convert", traits=frozenset({"elementwise"}))


@convert_p.def_rule("shape")
def _convert_shape(x: Type, *, dtype: np.dtype) -> list[Type]:
    return [Type(np.dtype(dtype), x.shape)]


convert_p.def_rule("impl", lambda x, *, dtype: [x.astype(dtype)])


@convert_p.def_rule("jvp")
def _convert_jvp(primals, tangents, *, dtype):
    (x,), (t,) = primals, tangents
    ans = convert(x, dtype)
    if isinstance(t, Zero) or np.dtype(dtype).kind != FLOAT:
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
