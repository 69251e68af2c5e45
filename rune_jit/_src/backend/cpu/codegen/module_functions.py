"""Math of our own as internal functions, emitted once per module and LLVM type.

A function whose code we write (tanh.py's) is not copied into every use and every
unrolled element: the module defines `rune_<name>_<type>` once per LLVM type (f64,
f32, v32f64...) and each use calls it, a vector register (a lane block, a small array
whole: lower.Lowerer.vector) the definition of its vector type. The definitions are `internal` and pure (nounwind, willreturn,
memory(none)): LLVM inlines a call where its cost model says that pays, before its
vectorizers run, and drops a definition nobody calls.

Why no vector variants named on the scalar calls (`"vector-function-abi-variant"`, as
mathlib.py names libmvec's, so that the loop vectorizer could widen a call it cannot
inline): tanh costs less than LLVM's inlining threshold, so every call is inlined first
(the optimized code of a vectorized map, of a scan step of 100 layers on 8 elements and
of a lane block has no call left: tests/primitives/test_math_functions.py), and variants kept
alive for the vectorizer (`llvm.compiler.used`) were compiled for nothing: 4 ms (the
8-wide one) to 10 ms (8, 4 and 2 wide) more for every module with a tanh, a scalar
tanh's program compiling in 21 ms without them. Keeping the calls (noinline) made a
small carry's step 3 times slower: the SLP vectorizer packed few of the unrolled
elements' calls into vector ones, where the inlined copies it packs, or runs side by
side. A function of ours too big to inline would name its variants.

    >>> f = lambda x: rnp.tanh(rnp.tanh(x) + rnp.tanh(2 * x))
    >>> text = rune.jit(f).lower(np.zeros(4)).llvm_ir  # 4 elements: one <4 x double>
    >>> sum(line.startswith('define internal <4 x double> @"rune_tanh_v4f64"') for line in
    ...     text.splitlines())
    1
"""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from . import arith
from .emit import mark_pure

Body = Callable[..., ir.Value]  # (builder, *argument registers) -> the result register


def call(b: ir.IRBuilder, name: str, body: Body, *args: ir.Value) -> ir.Value:
    """`body(builder, *args)` as a call of the module's internal function `name` for the
    arguments' type, defined (by `body`) at its first use; the result has the type of
    the first argument."""
    return b.call(define(b.module, name, body, args[0].type, len(args)), list(args))


def define(module: ir.Module, name: str, body: Body, t: ir.Type, nargs: int) -> ir.Function:
    """The module's function `name` of `nargs` arguments of type `t`, defined once."""
    symbol = f"rune_{name}_{arith.suffix(t)}"
    fn = module.globals.get(symbol)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(t, [t] * nargs), symbol)
    fn.linkage = "internal"
    mark_pure(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(b, *fn.args))
    return fn


def keep(module: ir.Module, fn: ir.Function) -> None:
    """Keep `fn` until the vectorizers have run, unused as it may be before: a vector
    variant named by a call's attribute (mathlib.finish_module lists them in
    `llvm.compiler.used`)."""
    kept(module).add(fn)


def kept(module: ir.Module) -> set:
    """The functions `keep` was asked to keep in `module`."""
    if not hasattr(module, "rune_vector_variants"):
        module.rune_vector_variants = set()
    return module.rune_vector_variants
