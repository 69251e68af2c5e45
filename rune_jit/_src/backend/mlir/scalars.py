"""Elementwise primitives on scalars: `arith` and `math` operations, one row each
(ROWS). An elementwise primitive with no row is emitted through its portable element
rule (`Elements`). arrays.py applies these to every element of a tensor.

The rows keep NumPy's meaning where MLIR's operation differs from it: comparisons are
ordered except !=, maximum and minimum propagate NaN, floor division and remainder take
the divisor's sign, integer division by zero gives 0, shifts past the bit width shift
every bit out, as the CPU backend's rows (backend/cpu/codegen/arith.py) do.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...ir import Type
from ...primitive import Primitive
from .emit import Emitter, Value, scalar_type

ROWS: dict[str, Callable] = {}  # primitive name -> row(em, *xs: Value, **params) -> name


def _kind(x: Value) -> str:
    """'f' float, 'b' bool, 'u' unsigned, 'i' signed."""
    return x.type.dtype.kind


def _bin(em: Emitter, op: str, x: Value, y: Value) -> str:
    return em.op(f"arith.{op} {x}, {y} : {scalar_type(x.type.dtype)}")


def _un(em: Emitter, op: str, x: Value) -> str:
    return em.op(f"{op} {x} : {scalar_type(x.type.dtype)}")


def _v(name: str, like: Value, dtype=None) -> Value:
    return Value(name, Type(np.dtype(dtype or like.type.dtype), ()))


def _by_kind(f: str, i: str, u: str | None = None, b: str | None = None) -> Callable:
    """A binary row whose arith operation depends on the operands' kind."""
    def row(em, x, y):
        k = _kind(x)
        op = {"f": f, "i": i, "u": u or i, "b": b or u or i}[k]
        return _bin(em, op, x, y)
    return row


def compare(em: Emitter, op: str, x: Value, y: Value) -> str:
    """NumPy's comparisons: ordered (false with a NaN), but != is true with a NaN."""
    k = _kind(x)
    if k == "f":
        pred = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt",
                "ge": "oge"}[op]
        return em.op(f"arith.cmpf {pred}, {x}, {y} : {scalar_type(x.type.dtype)}")
    pred = op if op in ("eq", "ne") else ("u" if k in "ub" else "s") + op
    return em.op(f"arith.cmpi {pred}, {x}, {y} : {scalar_type(x.type.dtype)}")


def select(em: Emitter, p, x: Value, y: Value) -> str:
    return em.op(f"arith.select {p}, {x}, {y} : {scalar_type(x.type.dtype)}")


def _maximum(larger: bool) -> Callable:
    def row(em, x, y):
        k = _kind(x)
        if k == "f":
            return _bin(em, "maximumf" if larger else "minimumf", x, y)
        if k == "b":
            return _bin(em, "ori" if larger else "andi", x, y)
        return _bin(em, ("max" if larger else "min") + ("ui" if k == "u" else "si"), x, y)
    return row


def _neg(em, x):
    if _kind(x) == "f":
        return _un(em, "arith.negf", x)
    return _bin(em, "subi", em.const(0, x.type.dtype), x)


def _abs(em, x):
    k = _kind(x)
    if k == "f":
        return _un(em, "math.absf", x)
    return x.name if k in "ub" else _un(em, "math.absi", x)


def _sign(em, x):
    """-1, 0 or 1; NaN and ±0 give themselves, as in NumPy."""
    zero, one = em.const(0, x.type.dtype), em.const(1, x.type.dtype)
    positive = select(em, compare(em, "gt", x, zero), one, x if _kind(x) == "f" else zero)
    if _kind(x) == "u":
        return positive
    negative = compare(em, "lt", x, zero)
    return select(em, negative, em.const(-1, x.type.dtype), _v(positive, x))


def _float_divmod(em, x: Value, y: Value) -> tuple[str, str]:
    """NumPy's floor division and remainder of floats (npy_divmod)."""
    dt = x.type.dtype
    zero, one = em.const(0, dt), em.const(1, dt)
    mod = _v(_bin(em, "remf", x, y), x)
    div = _v(_bin(em, "divf", _v(_bin(em, "subf", x, mod), x), y), x)
    signs = _bin(em, "xori", _v(compare(em, "lt", y, zero), x, bool),
                 _v(compare(em, "lt", mod, zero), x, bool))
    fix = em.op(f"arith.andi {compare(em, 'ne', mod, zero)}, {signs} : i1")
    mod = _v(select(em, fix, _v(_bin(em, "addf", mod, y), x), mod), x)
    div = _v(select(em, fix, _v(_bin(em, "subf", div, one), x), div), x)
    floor = _v(_un(em, "math.floor", div), x)
    up = compare(em, "gt", _v(_bin(em, "subf", div, floor), x), em.const(0.5, dt))
    floor = _v(select(em, up, _v(_bin(em, "addf", floor, one), x), floor), x)
    signed_zero = _v(_bin(em, "divf", x, y), x)
    mod = select(em, compare(em, "eq", mod, zero),
                 _v(em.op(f"math.copysign {zero}, {y} : {scalar_type(dt)}"), x), mod)
    floor = _v(select(em, compare(em, "eq", div, zero),
                      _v(em.op(f"math.copysign {zero}, {signed_zero} : {scalar_type(dt)}"),
                         x), floor), x)
    return select(em, compare(em, "eq", y, zero), signed_zero, floor), mod


def _int_divmod(em, x: Value, y: Value) -> tuple[str, str]:
    """NumPy's integer floor division and remainder: by zero both give 0, and
    INT_MIN // -1 wraps (arith's divsi would be undefined for both)."""
    dt = x.type.dtype
    zero, one = em.const(0, dt), em.const(1, dt)
    by_zero = compare(em, "eq", y, zero)
    if _kind(x) == "u":
        safe = _v(select(em, by_zero, one, y), x)
        q, r = _bin(em, "divui", x, safe), _bin(em, "remui", x, safe)
        return select(em, by_zero, zero, _v(q, x)), select(em, by_zero, zero, _v(r, x))
    minus_one = compare(em, "eq", y, em.const(-1, dt))
    either = em.op(f"arith.ori {by_zero}, {minus_one} : i1")
    safe = _v(select(em, either, one, y), x)
    q, r = _v(_bin(em, "divsi", x, safe), x), _v(_bin(em, "remsi", x, safe), x)
    signs = em.op(f"arith.xori {compare(em, 'lt', r, zero)}, {compare(em, 'lt', y, zero)} : i1")
    fix = em.op(f"arith.andi {compare(em, 'ne', r, zero)}, {signs} : i1")
    q = _v(select(em, fix, _v(_bin(em, "subi", q, one), x), q), x)
    r = _v(select(em, fix, _v(_bin(em, "addi", r, y), x), r), x)
    q = _v(select(em, minus_one, _v(_bin(em, "subi", zero, x), x), q), x)
    return select(em, by_zero, zero, q), select(em, either, zero, r)


def _divmod(part: int) -> Callable:
    return lambda em, x, y: (_float_divmod if _kind(x) == "f" else _int_divmod)(em, x, y)[part]


def _fmod(em, x, y):
    """C's fmod and %: the dividend's sign; of integers, 0 by zero (and INT_MIN % -1)."""
    if _kind(x) == "f":
        return _bin(em, "remf", x, y)
    dt = x.type.dtype
    zero, one = em.const(0, dt), em.const(1, dt)
    skip = compare(em, "eq", y, zero)
    if _kind(x) != "u":
        skip = em.op(f"arith.ori {skip}, {compare(em, 'eq', y, em.const(-1, dt))} : i1")
    safe = _v(select(em, skip, one, y), x)
    r = _bin(em, "remui" if _kind(x) == "u" else "remsi", x, safe)
    return select(em, skip, zero, _v(r, x))


def _shift(left: bool) -> Callable:
    """NumPy's shifts: a count past the bit width (or negative) shifts every bit out."""
    def row(em, x, y):
        dt = x.type.dtype
        ok = compare(em, "lt", _v(y.name, y, np.dtype(f"u{dt.itemsize}")),
                     em.const(8 * dt.itemsize, np.dtype(f"u{dt.itemsize}")))
        safe = _v(select(em, ok, y, em.const(0, dt)), x)
        zero = em.const(0, dt)
        if left:
            return select(em, ok, _v(_bin(em, "shli", x, safe), x), zero)
        if _kind(x) == "u":
            return select(em, ok, _v(_bin(em, "shrui", x, safe), x), zero)
        fill = _v(select(em, compare(em, "lt", x, zero), em.const(-1, dt), zero), x)
        return select(em, ok, _v(_bin(em, "shrsi", x, safe), x), fill)
    return row


def convert(em: Emitter, x: Value, dtype: np.dtype) -> str:
    """NumPy's astype of one element (a float out of an integer's range converts as
    `arith.fptosi` does: to poison, where NumPy's C cast gives INT_MIN)."""
    src, dst = x.type.dtype, np.dtype(dtype)
    a, b = scalar_type(src), scalar_type(dst)
    if src == dst:
        return x.name
    if dst.kind == "b":
        return compare(em, "ne", x, em.const(0, src))
    if a == b:  # int64 <-> uint64: the same bits
        return x.name
    if dst.kind == "f":
        if src.kind == "f":
            op = "extf" if dst.itemsize > src.itemsize else "truncf"
        else:
            op = "uitofp" if src.kind in "ub" else "sitofp"
    elif src.kind == "f":
        op = "fptoui" if dst.kind == "u" else "fptosi"
    elif dst.itemsize < src.itemsize:
        op = "trunci"
    else:
        op = "extui" if src.kind in "ub" else "extsi"
    return em.op(f"arith.{op} {x} : {a} to {b}")


def _power(em, x, y):
    """NumPy's (C's) pow. MLIR's math.powf is only defined for positive bases (IREE
    computes exp(y log x): NaN for every negative x, and for 1 ** inf), so it takes |x|,
    and C's sign, negative bases' integer exponents and special cases are selected
    around it."""
    if _kind(x) != "f":
        return em.op(f"math.ipowi {x}, {y} : {scalar_type(x.type.dtype)}")
    dt = x.type.dtype
    f, c = (lambda name: _v(name, x)), (lambda value: em.const(value, dt))
    p = lambda name: _v(name, x, np.bool_)  # noqa: E731
    ax, ay, half_y = f(_abs(em, x)), f(_abs(em, y)), f(_bin(em, "mulf", y, c(0.5)))
    m = f(em.op(f"math.powf {ax}, {y} : {scalar_type(dt)}"))
    floor_y = f(_un(em, "math.floor", y))
    odd = _all(em, compare(em, "eq", floor_y, y),  # a whole y (±inf too), y / 2 not
               compare(em, "ne", f(_un(em, "math.floor", half_y)), half_y))
    r = f(select(em, p(_all(em, _signbit(em, x), odd)), f(_neg(em, m)), m))
    nan = _all(em, compare(em, "lt", x, c(0.0)), compare(em, "gt", x, c(-np.inf)),
               compare(em, "lt", ay, c(np.inf)), compare(em, "ne", floor_y, y))
    r = f(select(em, p(nan), c(np.nan), r))  # a finite negative base, a fractional y
    one = _any(em, compare(em, "eq", x, c(1.0)), compare(em, "eq", y, c(0.0)),
               _all(em, compare(em, "eq", ax, c(1.0)), compare(em, "eq", ay, c(np.inf))))
    return select(em, p(one), c(1.0), r)


def _all(em, *predicates: str) -> str:
    return _fold(em, "andi", predicates)


def _any(em, *predicates: str) -> str:
    return _fold(em, "ori", predicates)


def _fold(em, op: str, predicates) -> str:
    out = predicates[0]
    for p in predicates[1:]:
        out = em.op(f"arith.{op} {out}, {p} : i1")
    return out


def _signbit(em, x):
    """x's sign bit (set for -0 and negative NaNs), as an i1."""
    bits = np.dtype(f"int{x.type.dtype.itemsize * 8}")
    as_int = _v(em.op(f"arith.bitcast {x} : {scalar_type(x.type.dtype)} to "
                      f"{scalar_type(bits)}"), x, bits)
    return compare(em, "lt", as_int, em.const(0, bits))


def _hypot(em, x, y):
    """sqrt(x² + y²) without overflow: m·sqrt(1 + (n/m)²), m = max(|x|, |y|); an
    infinite side gives inf even with a NaN on the other, as C's hypot."""
    dt = x.type.dtype
    ax, ay = _v(_abs(em, x), x), _v(_abs(em, y), y)
    m, n = _v(_bin(em, "maximumf", ax, ay), x), _v(_bin(em, "minimumf", ax, ay), x)
    zero, one = em.const(0, dt), em.const(1, dt)
    safe = _v(select(em, compare(em, "eq", m, zero), one, m), x)
    r = _v(_bin(em, "divf", n, safe), x)
    root = _v(_un(em, "math.sqrt", _v(_bin(em, "addf", one, _v(_bin(em, "mulf", r, r), x)),
                                       x)), x)
    h = _v(_bin(em, "mulf", m, root), x)
    inf = em.const(np.inf, dt)
    either = em.op(f"arith.ori {compare(em, 'eq', ax, inf)}, {compare(em, 'eq', ay, inf)} : i1")
    return select(em, either, inf, h)


def _math(op: str) -> Callable:
    return lambda em, *xs: em.op(f"math.{op} {', '.join(map(str, xs))} : "
                                 f"{scalar_type(xs[0].type.dtype)}")


def _popcount(em, x):
    count = _v(_un(em, "math.ctpop", _v(_abs(em, x), x)), x)
    return convert(em, count, np.dtype(np.uint8))


def _isfinite(em, x):
    return compare(em, "lt", _v(_abs(em, x), x), em.const(np.inf, x.type.dtype))


ROWS.update({
    "add": _by_kind("addf", "addi", b="ori"), "sub": _by_kind("subf", "subi"),
    "mul": _by_kind("mulf", "muli", b="andi"), "div": _by_kind("divf", "divsi"),
    "neg": _neg, "abs": _abs, "sign": _sign,
    "max": _maximum(True), "min": _maximum(False),
    "pow": _power, "floor_divide": _divmod(0), "remainder": _divmod(1), "fmod": _fmod,
    **{op: (lambda op: lambda em, x, y: compare(em, op, x, y))(op)
       for op in ("lt", "le", "gt", "ge", "eq", "ne")},
    "logical_and": _by_kind("andi", "andi"), "logical_or": _by_kind("ori", "ori"),
    "logical_xor": _by_kind("xori", "xori"),
    "logical_not": lambda em, x: _bin(em, "xori", x, em.const(True, np.bool_)),
    "bitwise_and": _by_kind("andi", "andi"), "bitwise_or": _by_kind("ori", "ori"),
    "bitwise_xor": _by_kind("xori", "xori"),
    "bitwise_not": lambda em, x: _bin(em, "xori", x, em.const(-1, x.type.dtype)),
    "shift_left": _shift(True), "shift_right": _shift(False), "bitwise_count": _popcount,
    "isnan": lambda em, x: em.op(f"arith.cmpf uno, {x}, {x} : {scalar_type(x.type.dtype)}"),
    "isfinite": _isfinite,
    "select": lambda em, p, x, y: select(em, p, x, y),
    "convert": lambda em, x, *, dtype: convert(em, x, dtype),
    "bitcast_convert": lambda em, x, *, dtype: x.name if scalar_type(dtype) == scalar_type(
        x.type.dtype) else em.op(f"arith.bitcast {x} : {scalar_type(x.type.dtype)} to "
                                 f"{scalar_type(dtype)}"),
    "hypot": _hypot, "diag_solve": lambda em, d, b: _bin(em, "divf", b, d),
    **{n: _math(op) for n, op in (
        ("sqrt", "sqrt"), ("exp", "exp"), ("expm1", "expm1"), ("log", "log"),
        ("log1p", "log1p"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("tanh", "tanh"),
        ("sinh", "sinh"), ("cosh", "cosh"), ("arctan", "atan"), ("arctan2", "atan2"),
        ("arcsin", "asin"), ("arccos", "acos"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
        ("arctanh", "atanh"), ("cbrt", "cbrt"), ("log2", "log2"), ("log10", "log10"),
        ("exp2", "exp2"), ("erf", "erf"), ("erfc", "erfc"), ("floor", "floor"),
        ("ceil", "ceil"), ("trunc", "trunc"), ("rint", "roundeven"), ("fma", "fma"),
        ("copysign", "copysign"))},
})


class Elements:
    """The `e` of a portable element rule (primitive.py): each elementwise primitive by
    name, on scalar Values, emitted through its row."""

    def __init__(self, em: Emitter):
        self.em = em

    def __getattr__(self, name: str) -> Callable:
        prim = Primitive.registry[name]
        return lambda *xs, **params: Value(element(self.em, prim, list(xs), params),
                                           prim.shape(*[x.type for x in xs], **params)[0])

    def const(self, like: Value, value) -> Value:
        return self.em.const(value, like.type.dtype)

    def convert(self, x: Value, *, dtype) -> Value:
        return Value(convert(self.em, x, dtype), Type(np.dtype(dtype), ()))

    @staticmethod
    def dtype(x: Value) -> np.dtype:
        return x.type.dtype


def element(em: Emitter, prim: Primitive, xs: list[Value], params: dict) -> str:
    """One element of an elementwise primitive from its operands' elements."""
    row = ROWS.get(prim.name)
    if row is not None:
        return row(em, *xs, **params)
    if prim.has_rule("element"):
        return prim.rule("element")(Elements(em), *xs, **params).name
    raise NotImplementedError(f"{prim.name} has no MLIR form")
