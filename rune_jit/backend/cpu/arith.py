"""Arithmetic on registers, for one value or a vector of lanes alike, with NumPy's meaning.

The elementwise primitives' `lower` rules are written with these; every
function takes and returns llvmlite values whose type is a scalar or a vector.
"""

from __future__ import annotations

import llvmlite.ir as ir

from .emit import F32, F64, I1, declare


def element(t: ir.Type) -> ir.Type:
    return t.element if isinstance(t, ir.VectorType) else t


def lanes(t: ir.Type) -> int | None:
    """How many lanes a vector type has; None for a scalar type."""
    return t.count if isinstance(t, ir.VectorType) else None


def is_float(v: ir.Value) -> bool:
    return element(v.type) in (F32, F64)


def is_bool(v: ir.Value) -> bool:
    return element(v.type) == I1


def constant(t: ir.Type, value) -> ir.Constant:
    """`value` of type `t`: in every lane if `t` is a vector."""
    e = element(t)
    c = ir.Constant(e, float(value) if e in (F32, F64) else int(value))
    return ir.Constant(t, [c] * t.count) if isinstance(t, ir.VectorType) else c


def const_like(v: ir.Value, value) -> ir.Constant:
    return constant(v.type, value)


def suffix(t: ir.Type) -> str:
    e = element(t)
    base = {F64: "f64", F32: "f32"}.get(e) or f"i{e.width}"
    return f"v{t.count}{base}" if isinstance(t, ir.VectorType) else base


def intrinsic(b: ir.IRBuilder, name: str, *args: ir.Value, ret: ir.Type | None = None):
    """llvm.<name> on the operands' type (declared by its mangled name, which works for
    vector types too); it returns that type unless `ret` says otherwise."""
    t = args[0].type
    fn = declare(b.module, f"llvm.{name}.{suffix(t)}", ret or t, [a.type for a in args])
    return b.call(fn, list(args))


def add(b, x, y):
    return b.fadd(x, y) if is_float(x) else b.or_(x, y) if is_bool(x) else b.add(x, y)


def sub(b, x, y):
    return b.fsub(x, y) if is_float(x) else b.sub(x, y)


def mul(b, x, y):
    return b.fmul(x, y) if is_float(x) else b.and_(x, y) if is_bool(x) else b.mul(x, y)


def neg(b, x):
    return b.fneg(x) if is_float(x) else b.sub(const_like(x, 0), x)


def absolute(b, x):
    if is_float(x):
        return intrinsic(b, "fabs", x)
    return b.select(b.icmp_signed("<", x, const_like(x, 0)), neg(b, x), x)


def sign(b, x):
    zero, one = const_like(x, 0), const_like(x, 1)
    if is_float(x):  # NaN and ±0 give themselves, as in NumPy
        pos = b.select(b.fcmp_ordered(">", x, zero), one, x)
        return b.select(b.fcmp_ordered("<", x, zero), const_like(x, -1), pos)
    pos = b.select(b.icmp_signed(">", x, zero), one, zero)
    return b.select(b.icmp_signed("<", x, zero), const_like(x, -1), pos)


def maximum(b, x, y, larger: bool = True):
    """NumPy's maximum/minimum: a NaN on either side gives NaN."""
    if is_float(x):
        return intrinsic(b, "maximum" if larger else "minimum", x, y)
    if is_bool(x):
        return b.or_(x, y) if larger else b.and_(x, y)
    return b.select(b.icmp_signed(">" if larger else "<", x, y), x, y)


def compare(b, op: str, x, y):
    """Ordered comparisons (false with a NaN), but != is true with a NaN, as in NumPy."""
    if is_float(x):
        return b.fcmp_unordered("!=", x, y) if op == "!=" else b.fcmp_ordered(op, x, y)
    if is_bool(x):
        return b.icmp_unsigned(op, x, y)
    return b.icmp_signed(op, x, y)


def float_divmod(b, x, y):
    """NumPy's floor division and remainder of floats (npy_divmod)."""
    zero = const_like(x, 0)
    mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, mod), y)
    fix = b.and_(b.fcmp_unordered("!=", mod, zero),
                 b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", mod, zero)))
    mod = b.select(fix, b.fadd(mod, y), mod)
    div = b.select(fix, b.fsub(div, const_like(x, 1)), div)
    floordiv = intrinsic(b, "floor", div)
    floordiv = b.select(b.fcmp_ordered(">", b.fsub(div, floordiv), const_like(x, 0.5)),
                        b.fadd(floordiv, const_like(x, 1)), floordiv)
    # a zero remainder takes y's sign; division by zero gives x / y
    mod = b.select(b.fcmp_ordered("==", mod, zero), intrinsic(b, "copysign", zero, y), mod)
    floordiv = b.select(b.fcmp_ordered("==", div, zero),
                        intrinsic(b, "copysign", zero, b.fdiv(x, y)), floordiv)
    by_zero = b.fcmp_ordered("==", y, zero)
    return b.select(by_zero, b.fdiv(x, y), floordiv), mod


def int_divmod(b, x, y):
    """NumPy's integer floor division and remainder: by zero both give 0, and
    INT_MIN // -1 wraps (LLVM's sdiv would be undefined for both)."""
    zero, one = const_like(x, 0), const_like(x, 1)
    by_zero = b.icmp_signed("==", y, zero)
    minus_one = b.icmp_signed("==", y, const_like(x, -1))
    safe = b.select(b.or_(by_zero, minus_one), one, y)
    q, r = b.sdiv(x, safe), b.srem(x, safe)
    fix = b.and_(b.icmp_signed("!=", r, zero),
                 b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)))
    q = b.select(fix, b.sub(q, one), q)
    r = b.select(fix, b.add(r, y), r)
    q = b.select(minus_one, b.sub(zero, x), q)
    return b.select(by_zero, zero, q), b.select(b.or_(by_zero, minus_one), zero, r)


def convert(b, x, dtype) -> ir.Value:
    """NumPy's astype. A float beyond the integer range (or NaN) gives the most negative
    integer, as NumPy does on x86; LLVM's fptosi alone would be undefined there."""
    from .emit import reg_type

    to = reg_type(dtype, lanes(x.type))
    src, dst = element(x.type), element(to)
    if src == dst:
        return x
    if dtype.kind == "b":
        zero = const_like(x, 0)
        return b.fcmp_unordered("!=", x, zero) if is_float(x) else b.icmp_unsigned("!=", x, zero)
    if src == I1:
        return b.uitofp(x, to) if dtype.kind == "f" else b.zext(x, to)
    if dtype.kind == "f":
        if is_float(x):
            return b.fptrunc(x, to) if dst == F32 else b.fpext(x, to)
        return b.sitofp(x, to)
    if is_float(x):
        limit = float(2 ** (dst.width - 1))
        ok = b.and_(b.fcmp_ordered(">=", x, const_like(x, -limit)),
                    b.fcmp_ordered("<", x, const_like(x, limit)))
        lowest = constant(to, -(2 ** (dst.width - 1)))
        return b.select(ok, intrinsic_to(b, "fptosi.sat", x, to), lowest)
    return b.trunc(x, to) if dst.width < src.width else b.sext(x, to)


def intrinsic_to(b: ir.IRBuilder, name: str, x: ir.Value, to: ir.Type) -> ir.Value:
    fn = declare(b.module, f"llvm.{name}.{suffix(to)}.{suffix(x.type)}", to, [x.type])
    return b.call(fn, [x])


def int_power(fn, x, y):
    """x ** y for integers, y >= 0 (the caller rejects negative y), by squaring: a loop
    over the bits of y, on single values and vectors of lanes alike."""
    b = fn.b
    one, zero = const_like(x, 1), const_like(x, 0)

    def square(_, vals):
        result, base, e = vals
        odd = b.icmp_unsigned("!=", b.and_(e, one), zero)
        return [b.select(odd, b.mul(result, base), result), b.mul(base, base), b.lshr(e, one)]

    bits = ir.Constant(ir.IntType(64), element(x.type).width)
    return fn.loop(ir.Constant(ir.IntType(64), 0), bits, 1, [one, x, y], square)[0]
