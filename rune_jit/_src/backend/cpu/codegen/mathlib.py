"""Math functions in compiled code: libm for one value, glibc's libmvec for vectors.

A scalar call carries the attribute that names its vector variants, so the loop
vectorizer turns a loop of `sin` calls into calls of the 8-wide AVX-512 (or
4-wide AVX2, or on aarch64 2-wide Advanced SIMD) variant, and the SLP vectorizer a few calls side by side (the
elements of a small carry) into one call of a narrower one. A vector of lanes
(lane blocks of a vmapped iterate) is cut into native-width pieces, each passed
to the vector variant directly. Where libmvec lacks a function, the scalar libm
call is used element by element. Accuracy: libmvec's variants are within 4 ulp
(see docs/accuracy.md).
"""

from __future__ import annotations

from functools import lru_cache

import llvmlite.binding as llvm
import llvmlite.ir as ir

from .... import config
from . import arith, module_functions, vecmath
from ..runtime import llvm as engine
from .emit import F32, I32, declare, mark_pure

# rune_jit name -> libm name (float64; float32 adds "f")
LIBM = {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "expm1": "expm1",
        "log1p": "log1p", "sinh": "sinh", "cosh": "cosh", "arctan": "atan",
        "arctan2": "atan2", "pow": "pow", "erf": "erf", "erfc": "erfc", "arcsin": "asin",
        "arccos": "acos", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
        "cbrt": "cbrt", "log2": "log2", "log10": "log10", "exp2": "exp2", "hypot": "hypot"}


# glibc's vector ABI letters and their register widths in bits, widest first, by machine:
# x86-64's AVX-512, AVX2 and SSE variants, aarch64's Advanced SIMD ones (its SVE variants,
# of a length known only at run time, are not used). Other machines call libm.
ISAS = {"x86_64": (("e", 512), ("d", 256), ("b", 128)), "aarch64": (("n", 128),)}


@lru_cache(maxsize=None)
def vector_variants(name: str, float32: bool, nargs: int) -> tuple[tuple[str, int], ...]:
    """(symbol, lanes) of each of libmvec's variants of libm function `name` that this
    CPU runs, widest first: the loop vectorizer takes the widest, the SLP vectorizer the
    width of a short row of calls (a carry of 4 float64)."""
    engine.target_machine()  # loads libmvec
    out = []
    for letter, bits in ISAS.get(engine.target_arch(), ()):
        lanes = bits // (32 if float32 else 64)
        sym = f"_ZGV{letter}N{lanes}{'v' * nargs}_{name}{'f' if float32 else ''}"
        if bits <= engine.vector_bits() and llvm.address_of_symbol(sym):
            out.append((sym, lanes))
    return tuple(out)


def call(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    """`name` of the arguments: the project's own code where vecmath has it (unless
    RUNE_JIT_MATH=libmvec), else libm's (and libmvec's for vectors); float16 calls the float32 function and rounds (as
    NumPy's float16 loops do: libm has no half functions)."""
    if arith.is_half(args[0]):
        return arith.in_float32(b, lambda *xs: call(b, name, *xs), *args)
    if config.math == "own" and name in vecmath.FUNCTIONS:
        return module_functions.call(b, name, vecmath.FUNCTIONS[name], *args)
    t = args[0].type
    if isinstance(t, ir.VectorType):
        return _vector_call(b, name, *args)
    float32 = t == F32
    libm = LIBM[name] + ("f" if float32 else "")
    fn = declare(b.module, libm, t, [t] * len(args))
    mark_pure(fn)
    inst = b.call(fn, list(args))
    variants = vector_variants(LIBM[name], float32, len(args))
    if variants:
        names = ",".join(f"_ZGV_LLVM_N{lanes}{'v' * len(args)}_{libm}({sym})"
                         for sym, lanes in variants)
        set.add(inst.attributes, f'"vector-function-abi-variant"="{names}"')
        for sym, lanes in variants:
            _keep_declared(b.module, sym, t, lanes, len(args))
    return inst


def _keep_declared(module: ir.Module, sym: str, t: ir.Type, lanes: int, nargs: int) -> None:
    """Declare a vector variant and remember to keep it (see `finish_module`)."""
    vt = ir.VectorType(t, lanes)
    fn = declare(module, sym, vt, [vt] * nargs)
    mark_pure(fn)
    module_functions.keep(module, fn)


def finish_module(module: ir.Module) -> None:
    """The vector variants named by call attributes must survive until vectorization,
    which `llvm.compiler.used` ensures."""
    from .emit import PTR

    kept = sorted(module_functions.kept(module), key=lambda f: f.name)
    if kept:
        arr = ir.ArrayType(PTR, len(kept))
        g = ir.GlobalVariable(module, arr, "llvm.compiler.used")
        g.linkage = "appending"
        g.section = "llvm.metadata"
        g.initializer = ir.Constant(arr, kept)


def _vector_call(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    vt = args[0].type
    n, t = vt.count, vt.element
    variants = vector_variants(LIBM[name], t == F32, len(args))
    if not variants or n % variants[0][1]:
        return _scalarized(b, name, *args)
    sym, lanes = variants[0]
    piece_t = ir.VectorType(t, lanes)
    fn = declare(b.module, sym, piece_t, [piece_t] * len(args))
    mark_pure(fn)
    pieces = [b.call(fn, [_slice(b, a, k, lanes) for a in args]) for k in range(0, n, lanes)]
    return _concat(b, pieces)


def _slice(b: ir.IRBuilder, v: ir.Value, start: int, lanes: int) -> ir.Value:
    mask = ir.Constant(ir.VectorType(I32, lanes), list(range(start, start + lanes)))
    return b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), mask)


def _concat(b: ir.IRBuilder, pieces: list[ir.Value]) -> ir.Value:
    while len(pieces) > 1:
        pairs = []
        for a, c in zip(pieces[::2], pieces[1::2]):
            n = a.type.count
            pairs.append(b.shuffle_vector(a, c, ir.Constant(ir.VectorType(I32, 2 * n),
                                                            list(range(2 * n)))))
        pieces = pairs
    return pieces[0]


def _scalarized(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    vt = args[0].type
    out = ir.Constant(vt, ir.Undefined)
    for k in range(vt.count):
        i = ir.Constant(I32, k)
        out = b.insert_element(out, call(b, name, *[b.extract_element(a, i) for a in args]), i)
    return out

