"""Arithmetic on registers, for one value or a vector of lanes alike, with NumPy's meaning.

The elementwise primitives' `lower` rules are written with these; every
function takes and returns llvmlite values whose type is a scalar or a vector.
A register's type says its dtype's kind: float (half, float, double), bool (i1),
unsigned (emit.UIntType) or signed (any other integer). Integer arithmetic wraps, as
NumPy's does. float16 registers are LLVM halves: LLVM computes each operation on them in
float32 and rounds the result to half, which is NumPy's float16 arithmetic; what takes
several operations (divmod, libm's functions) is computed in float32 and rounded once
(`in_float32`), as NumPy computes it.
"""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from .emit import F16, F32, F64, FLOAT_TYPES, I1, I32, I64, UIntType, declare


def element(t: ir.Type) -> ir.Type:
    return t.element if isinstance(t, ir.VectorType) else t


def lanes(t: ir.Type) -> int | None:
    """How many lanes a vector type has; None for a scalar type."""
    return t.count if isinstance(t, ir.VectorType) else None


def like(t: ir.Type, e: ir.Type) -> ir.Type:
    """The type with `t`'s lanes (if any) and elements of type `e`."""
    return ir.VectorType(e, t.count) if isinstance(t, ir.VectorType) else e


def is_float(v: ir.Value) -> bool:
    return element(v.type) in FLOAT_TYPES


def is_half(v: ir.Value) -> bool:
    return element(v.type) == F16


def is_bool(v: ir.Value) -> bool:
    return element(v.type) == I1


def is_unsigned(v: ir.Value) -> bool:
    return isinstance(element(v.type), UIntType)


def width(v: ir.Value) -> int:
    return element(v.type).width


def constant(t: ir.Type, value) -> ir.Constant:
    """`value` of type `t`: in every lane if `t` is a vector."""
    e = element(t)
    c = ir.Constant(e, float(value) if e in FLOAT_TYPES else int(value))
    return ir.Constant(t, [c] * t.count) if isinstance(t, ir.VectorType) else c


def const_like(v: ir.Value, value) -> ir.Constant:
    return constant(v.type, value)


def splat(b: ir.IRBuilder, v: ir.Value, count: int) -> ir.Value:
    """The scalar register `v` in every lane of a vector of `count`."""
    vec = ir.VectorType(v.type, count)
    one = b.insert_element(ir.Constant(vec, ir.Undefined), v, ir.Constant(ir.IntType(64), 0))
    return b.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))


def suffix(t: ir.Type) -> str:
    e = element(t)
    base = {F64: "f64", F32: "f32", F16: "f16"}.get(e) or f"i{e.width}"
    return f"v{t.count}{base}" if isinstance(t, ir.VectorType) else base


def intrinsic(b: ir.IRBuilder, name: str, *args: ir.Value, ret: ir.Type | None = None):
    """llvm.<name> on the operands' type (declared by its mangled name, which works for
    vector types too); it returns that type unless `ret` says otherwise."""
    t = ret or args[0].type
    fn = declare(b.module, f"llvm.{name}.{suffix(args[0].type)}", t, [a.type for a in args])
    inst = b.call(fn, list(args))
    inst.type = t  # the declaration may be a signed twin's: keep the sign tag (same LLVM type)
    return inst


def in_float32(b: ir.IRBuilder, fn: Callable, *xs: ir.Value):
    """fn(*xs), computed in float32 and rounded back to half when the operands are halves
    (NumPy's float16 loops); fn(*xs) itself otherwise. fn returns a value or a tuple."""
    if not is_half(xs[0]):
        return fn(*xs)
    wide = [b.fpext(x, like(x.type, F32)) for x in xs]
    out = fn(*wide)
    narrow = lambda v: b.fptrunc(v, like(v.type, F16))  # noqa: E731
    return tuple(map(narrow, out)) if isinstance(out, tuple) else narrow(out)


def retype(b: ir.IRBuilder, x: ir.Value, to: ir.Type) -> ir.Value:
    """x as a register of `to`, which has x's LLVM type (a sign tag changes): a no-op cast
    (the builder's bitcast would hand x back, as the types compare equal)."""
    inst = ir.instructions.CastInstr(b.block, "bitcast", x, to)
    b._insert(inst)
    return inst


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
    if is_unsigned(x):
        return x
    return b.select(b.icmp_signed("<", x, const_like(x, 0)), neg(b, x), x)


def _icmp(b, op: str, x, y):
    """An integer comparison, unsigned on unsigned registers and bools."""
    if is_unsigned(x) or is_bool(x):
        return b.icmp_unsigned(op, x, y)
    return b.icmp_signed(op, x, y)


def sign(b, x):
    zero, one = const_like(x, 0), const_like(x, 1)
    if is_float(x):  # NaN and ±0 give themselves, as in NumPy
        pos = b.select(b.fcmp_ordered(">", x, zero), one, x)
        return b.select(b.fcmp_ordered("<", x, zero), const_like(x, -1), pos)
    pos = b.select(_icmp(b, ">", x, zero), one, zero)
    return pos if is_unsigned(x) else b.select(b.icmp_signed("<", x, zero), const_like(x, -1),
                                               pos)


def maximum(b, x, y, larger: bool = True):
    """NumPy's maximum/minimum: a NaN on either side gives NaN."""
    if is_float(x):
        return intrinsic(b, "maximum" if larger else "minimum", x, y)
    if is_bool(x):
        return b.or_(x, y) if larger else b.and_(x, y)
    return b.select(_icmp(b, ">" if larger else "<", x, y), x, y)


def compare(b, op: str, x, y):
    """Ordered comparisons (false with a NaN), but != is true with a NaN, as in NumPy."""
    if is_float(x):
        return b.fcmp_unordered("!=", x, y) if op == "!=" else b.fcmp_ordered(op, x, y)
    return _icmp(b, op, x, y)


def float_divmod(b, x, y):
    """NumPy's floor division and remainder of floats (npy_divmod; float16 in float32)."""
    return in_float32(b, lambda x, y: _float_divmod(b, x, y), x, y)


def _float_divmod(b, x, y):
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
    by_zero = b.icmp_unsigned("==", y, zero)
    if is_unsigned(x):  # no sign to fix and no overflow
        safe = b.select(by_zero, one, y)
        q, r = b.udiv(x, safe), b.urem(x, safe)
        return b.select(by_zero, zero, q), b.select(by_zero, zero, r)
    minus_one = b.icmp_signed("==", y, const_like(x, -1))
    safe = b.select(b.or_(by_zero, minus_one), one, y)
    q, r = b.sdiv(x, safe), b.srem(x, safe)
    fix = b.and_(b.icmp_signed("!=", r, zero),
                 b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", y, zero)))
    q = b.select(fix, b.sub(q, one), q)
    r = b.select(fix, b.add(r, y), r)
    q = b.select(minus_one, b.sub(zero, x), q)
    return b.select(by_zero, zero, q), b.select(b.or_(by_zero, minus_one), zero, r)


def c_remainder(b, x, y):
    """C's fmod and %: the remainder takes the dividend's sign (NumPy's fmod). Of integers,
    by zero (and INT_MIN % -1) it is 0, where LLVM's srem would be undefined."""
    if is_float(x):
        return in_float32(b, lambda u, v: b.frem(u, v), x, y)
    zero, one = const_like(x, 0), const_like(x, 1)
    skip = b.icmp_unsigned("==", y, zero)
    if not is_unsigned(x):
        skip = b.or_(skip, b.icmp_signed("==", y, const_like(x, -1)))
    safe = b.select(skip, one, y)
    r = b.urem(x, safe) if is_unsigned(x) else b.srem(x, safe)
    return b.select(skip, zero, r)


# ------------------------------------------------------------- bits


def bitwise_not(b, x):
    return b.xor(x, const_like(x, 1 if is_bool(x) else -1))


def shift_left(b, x, y):
    """NumPy's x << y: 0 once y reaches the bit width (or is negative, which NumPy takes
    as a huge unsigned count); LLVM's shl would be poison there."""
    ok, safe = _shift_count(b, x, y)
    return b.select(ok, b.shl(x, safe), const_like(x, 0))


def shift_right(b, x, y):
    """NumPy's x >> y: arithmetic for signed x, logical for unsigned; a count past the
    width gives what shifting one bit at a time would (0, or -1 for a negative x)."""
    ok, safe = _shift_count(b, x, y)
    if is_unsigned(x):
        return b.select(ok, b.lshr(x, safe), const_like(x, 0))
    zero = const_like(x, 0)
    fill = b.select(b.icmp_signed("<", x, zero), const_like(x, -1), zero)
    return b.select(ok, b.ashr(x, safe), fill)


def _shift_count(b, x, y):
    ok = b.icmp_unsigned("<", y, const_like(y, width(x)))
    return ok, b.select(ok, y, const_like(y, 0))


def population_count(b, x):
    """The number of one bits (of the register as it is: callers take |x| first)."""
    return intrinsic(b, "ctpop", x)


# ------------------------------------------------------------- conversion


def convert(b, x, dtype) -> ir.Value:
    """NumPy's astype. A float converts to an integer as NumPy's C casts do on x86-64
    (`_float_to_int`); LLVM's fptosi alone would be undefined out of range."""
    from .emit import reg_type

    to = reg_type(dtype, lanes(x.type))
    src, dst = element(x.type), element(to)
    if src == dst:
        return x if type(src) is type(dst) else retype(b, x, to)
    if dtype.kind == "b":
        zero = const_like(x, 0)
        return b.fcmp_unordered("!=", x, zero) if is_float(x) else b.icmp_unsigned("!=", x, zero)
    if src == I1:
        return b.uitofp(x, to) if dtype.kind == "f" else b.zext(x, to)
    if dtype.kind == "f":
        if not is_float(x):
            return b.uitofp(x, to) if is_unsigned(x) else b.sitofp(x, to)
        if FLOAT_TYPES.index(dst) > FLOAT_TYPES.index(src):
            return b.fpext(x, to)
        return _double_to_half(b, x) if (src, dst) == (F64, F16) else b.fptrunc(x, to)
    if is_float(x):
        return _float_to_int(b, b.fpext(x, like(x.type, F32)) if is_half(x) else x, to)
    if dst.width < src.width:
        return b.trunc(x, to)
    return b.zext(x, to) if is_unsigned(x) else b.sext(x, to)


def _cvtt(b, x, bits: int) -> ir.Value:
    """x86's truncating conversion to int32 or int64 (cvttsd2si): out of range or NaN give
    the most negative integer."""
    to = like(x.type, I32 if bits == 32 else I64)
    limit = float(2 ** (bits - 1))
    ok = b.and_(b.fcmp_ordered(">=", x, const_like(x, -limit)),
                b.fcmp_ordered("<", x, const_like(x, limit)))
    return b.select(ok, intrinsic_to(b, "fptosi.sat", x, to), constant(to, -(2 ** (bits - 1))))


def _float_to_int(b, x, to: ir.Type) -> ir.Value:
    """NumPy's float-to-integer cast as its C casts compile on x86-64: int32 and int64
    take cvtt; int8, int16, uint8, uint16 truncate the int32 one; uint32 truncates the
    int64 one (the conversion of one element alone: NumPy's vectorized loop differs out
    of range); uint64 converts x - 2**63 where x >= 2**63 and sets the top bit."""
    dst = element(to)
    if dst.width == 64 and isinstance(dst, UIntType):
        big = b.fcmp_ordered(">=", x, const_like(x, 2.0 ** 63))
        low = _cvtt(b, x, 64)
        high = b.xor(_cvtt(b, b.fsub(x, const_like(x, 2.0 ** 63)), 64),
                     constant(low.type, -2 ** 63))
        return retype(b, b.select(big, high, low), to)
    via = 64 if dst.width == 64 or (dst.width == 32 and isinstance(dst, UIntType)) else 32
    v = _cvtt(b, x, via)
    if dst.width < via:
        return b.trunc(v, to)
    return v if type(dst) is type(element(v.type)) else retype(b, v, to)


def _double_to_half(b, x) -> ir.Value:
    """float64 to float16, rounded once (as NumPy's npy_double_to_half): through a float32
    rounded to odd, which has the bits to spare for the second rounding to be exact (LLVM's
    direct conversion calls a compiler runtime function the loader may not find)."""
    f32, i32 = like(x.type, F32), like(x.type, I32)
    f = b.fptrunc(x, f32)
    back = b.fpext(f, x.type)
    bits = b.bitcast(f, i32)
    # round toward zero, then make it odd if it is inexact
    over = b.fcmp_ordered(">", intrinsic(b, "fabs", back), intrinsic(b, "fabs", x))
    bits = b.select(over, b.sub(bits, constant(i32, 1)), bits)
    bits = b.select(b.fcmp_ordered("!=", back, x), b.or_(bits, constant(i32, 1)), bits)
    half = like(x.type, F16)
    odd = b.fptrunc(b.bitcast(bits, f32), half)
    return b.select(b.fcmp_unordered("uno", x, x), b.fptrunc(f, half), odd)


def bitcast(b, x, dtype) -> ir.Value:
    """The bits of x read as `dtype` (of the same width)."""
    from .emit import reg_type

    to = reg_type(dtype, lanes(x.type))
    return retype(b, x, to) if to == x.type else b.bitcast(x, to)


def intrinsic_to(b: ir.IRBuilder, name: str, x: ir.Value, to: ir.Type) -> ir.Value:
    fn = declare(b.module, f"llvm.{name}.{suffix(to)}.{suffix(x.type)}", to, [x.type])
    inst = b.call(fn, [x])
    inst.type = to
    return inst


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
