"""Functions of ours too big to inline, called once per vector: a kernel with the vector
variants the loop vectorizer widens its calls to, compiled apart from the programs that
call it. The registry (`KERNELS`) is filled in one place per function: sin, cos, tan,
power, erf and erfc name `apart(...)` (or `in_float64(...)`) in their family's
`FUNCTIONS` table, for float64 and float32; the others of float64 are listed in
vecmath's `FLOAT64_APART` (their float32 code, cheaper to compile, stays inlined).

Why apart. sin, cos and tan take a slow path (Payne–Hanek reduction) for huge
arguments. Inlined into a loop, the vectorizer would run it on every element (a branch
per element becomes a select of both paths, its table reads gathers: 10 ns an element
more). Instead the scalar call carries `"vector-function-abi-variant"` (as mathlib.py's
calls of libmvec do) naming the vector definitions of the same kernel, in which the slow
path runs only if some lane needs it: one branch per vector, as libmvec's own code
takes. The others are apart for compile time: inlined, each added 5 to 25 ms to the
compile time of every program that calls it (docs/accuracy.md, "Functions compiled
apart", has the figures, and what stays inline and why).

Which widths. A call names two vector variants (`call`): one and two registers of
float64 for a float64 kernel, two and four for a float32 one (its operands widened); the
loop vectorizer takes the one of its own width, and the other serves a vectorized
remainder or a float32 loop whose values the library widened (erf's). No other width is
named (each is a kernel to compile): a call at another width falls back to the scalar
definition, lane by lane. Every definition computes the same operations on each lane,
so an element gets the same bits on every path; a vector register (a lane block) calls
the definition of its own type. (Asking each loop for two registers a call,
`llvm.loop.vectorize.width`, made power, erf and erfc 21 to 34 % faster on AVX-512, but
a loop that asks and does not vectorize makes LLVM print its analysis, always: the tour
printed three such remarks. Not asked.)

A program only declares the kernels it calls: each definition is a module of its own
(`module_ir`), compiled once per process and target CPU, kept in the disk cache and
linked by address (runtime/math_kernels.py), as libmvec's functions are.

    >>> x = np.linspace(-4, 4, 1001)
    >>> text = rune.jit(rnp.sin).lower(x).llvm_ir
    >>> 'declare <8 x double> @"rune_sin_kernel_v8f64"' in text  # two registers' variant
    True
    >>> 'call double @"rune_sin_kernel_f64"' in text  # the loop's remainder
    True
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

import llvmlite.ir as ir

from .. import arith as A
from ...runtime import llvm as engine
from .. import module_functions
from ..emit import F64, mark_pure
from ..module_functions import Body

class Kernel(NamedTuple):
    body: Body  # on float64 registers, a scalar or a vector
    nargs: int
    min_bits: int = 0  # inlined where the target's vectors are narrower


# the kernels by name (`apart`'s): what `module_ir` defines
KERNELS: dict[str, Kernel] = {}


def apart(name: str, wide: Body, short: Body | None = None, nargs: int = 1,
          float32: Body | None = None, min_bits: int = 0) -> Body:
    """The `Body` of a function compiled apart: `wide` for float64 operands, as kernel
    `<name>_kernel`, where the target's vectors have `min_bits` or more (else inlined).
    float32 operands: widened (exactly) to float64 for `short` (shorter polynomials),
    kernel `<name>_kernel_short`, and the result rounded once; or, where `float32` is
    given instead, that body on them (inlined, as mathlib.call makes every function of
    ours an internal function of the module)."""
    KERNELS[name + "_kernel"] = Kernel(wide, nargs, min_bits)
    if float32 is None:
        KERNELS[name + "_kernel_short"] = Kernel(short, nargs)

    def run(b: ir.IRBuilder, *xs: ir.Value) -> ir.Value:
        if A.element(xs[0].type) == F64 and engine.vector_bits() < min_bits:
            return wide(b, *xs)
        if A.element(xs[0].type) == F64:
            return call(b, name + "_kernel", (lanes(), lanes(2)), *xs)
        if float32 is not None:
            return float32(b, *xs)
        wide_xs = [b.fpext(x, A.like(x.type, F64)) for x in xs]
        return b.fptrunc(call(b, name + "_kernel_short", (lanes(2), lanes(4)), *wide_xs),
                         xs[0].type)
    return run


def in_float64(name: str, body: Callable, float64, float32, nargs: int = 1) -> Body:
    """kit.in_float64 compiled apart (`apart`): `body(b, coefficients, *xs)` with
    `float64`'s coefficients or (float32 operands) `float32`'s."""
    return apart(name, lambda b, *xs: body(b, float64, *xs),
                 lambda b, *xs: body(b, float32, *xs), nargs)


def apart_here(kernel: str) -> bool:
    """Whether programs compiled for the current target call `kernel` (a name of
    `KERNELS`) rather than inline its body."""
    return kernel in KERNELS and engine.vector_bits() >= KERNELS[kernel].min_bits


def lanes(registers: int = 1) -> int:
    """Lanes of float64 in `registers` vector registers of the width the loop vectorizer
    takes (at most 256 bits: LLVM's preference on AVX-512 CPUs too)."""
    return registers * min(engine.vector_bits(), 256) // 64


def call(b: ir.IRBuilder, name: str, widths: tuple[int, ...], *xs: ir.Value) -> ir.Value:
    """The kernel `name` of xs, float64 scalars or vectors: a call of its definition for
    their type; a scalar call names the vector variants of `widths` lanes, those the
    loop vectorizer may take: float64's kernels one register for a loop of float64, two
    for one of float32 whose values the library widened to float64 (float32's erf), the
    short kernels two. No other width is named (each is a kernel to compile); a call at
    another width falls back to the scalar definition, lane by lane."""
    t = xs[0].type
    fn = _declared(b.module, name, t, len(xs))
    if A.lanes(t) is not None:
        return b.call(fn, list(xs))
    variants = []
    for width in widths:
        vector = _declared(b.module, name, ir.VectorType(t, width), len(xs))
        module_functions.keep(b.module, vector)
        variants.append(f"_ZGV_LLVM_N{width}{'v' * len(xs)}_{fn.name}({vector.name})")
    inst = b.call(fn, list(xs))
    set.add(inst.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return inst


def _declared(module: ir.Module, name: str, t: ir.Type, nargs: int) -> ir.Function:
    fn = module.globals.get(_symbol(name, t))
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(t, [t] * nargs), _symbol(name, t))
        mark_pure(fn)
    return fn


def _symbol(name: str, t: ir.Type) -> str:
    return f"rune_{name}_{A.suffix(t)}"


def symbols() -> re.Pattern:
    """What the kernels' symbols match (bytes): its groups, the name and the lanes."""
    names = "|".join(sorted(KERNELS, key=len, reverse=True))
    return re.compile(rb"rune_(" + names.encode() + rb")_(?:v([0-9]+))?f64")


def module_ir(symbol: str) -> str:
    """The LLVM IR of a module that defines the kernel `symbol` alone."""
    name, lanes = (g.decode() if g else None for g in symbols().fullmatch(symbol.encode()).groups())
    t = F64 if lanes is None else ir.VectorType(F64, int(lanes))
    module = ir.Module(symbol)
    kernel = KERNELS[name]
    fn = module_functions.define(module, name, kernel.body, t, kernel.nargs)
    fn.linkage = ""  # external
    text = str(module)
    if text.count(f'@"{symbol}"(') != 1:  # a body's own helper named as the kernel
        raise RuntimeError(f"rune_jit: the kernel {symbol} calls itself")
    return text
