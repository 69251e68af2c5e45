"""Functions of ours too big to inline, called once per vector: a kernel with the vector
variants the loop vectorizer widens its calls to.

sin, cos and tan take a slow path (Payne–Hanek reduction) for huge arguments. Inlined
into a loop, the vectorizer would run it on every element (a branch per element becomes
a select of both paths, its table reads gathers: 10 ns an element more). Instead the
scalar call carries `"vector-function-abi-variant"` (as mathlib.py's calls of libmvec
do) naming the module's own vector definition of the same kernel (`lanes`), in
which the slow path runs only if some lane needs it: one branch per vector, as libmvec's
own code takes. Every definition computes the same operations on each lane, so an
element gets the same bits on every path. The variants are kept until the vectorizer
has run (`module_functions.keep`); a vector register (a lane block) calls the
definition of its own type.

    >>> x = np.linspace(-4, 4, 1001)
    >>> text = rune.jit(rnp.sin).lower(x).llvm_ir
    >>> 'define internal <4 x double> @"rune_sin_kernel_v4f64"' in text  # AVX2, AVX-512
    True
    >>> 'call double @"rune_sin_kernel_f64"' in text  # the loop's remainder
    True
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from ...runtime import llvm as engine
from .. import module_functions
from ..module_functions import Body



def lanes(registers: int = 1) -> int:
    """Lanes of float64 in `registers` vector registers of the width the loop vectorizer
    takes (at most 256 bits: LLVM's preference on AVX-512 CPUs too)."""
    return registers * min(engine.vector_bits(), 256) // 64


def call(b: ir.IRBuilder, name: str, kernel: Body, x: ir.Value, width: int) -> ir.Value:
    """kernel(x) as a call of the module's definition `name` for x's type; a scalar call
    names the vector variant of `width` lanes (which the loop vectorizer takes for its
    loop: float64's kernels one register, float32's two), defined with it. Each variant
    costs compile time (tens of ms for sin's), so no other width is defined; a call at
    another width falls back to the scalar definition, lane by lane."""
    if A.lanes(x.type) is not None:
        return module_functions.call(b, name, kernel, x)
    fn = module_functions.define(b.module, name, kernel, x.type, 1)
    set.add(fn.attributes, "noinline")
    vector = module_functions.define(b.module, name, kernel, ir.VectorType(x.type, width), 1)
    module_functions.keep(b.module, vector)
    inst = b.call(fn, [x])
    variant = f"_ZGV_LLVM_N{width}v_{fn.name}({vector.name})"
    set.add(inst.attributes, f'"vector-function-abi-variant"="{variant}"')
    return inst
