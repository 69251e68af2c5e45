"""Functions of ours too big to inline, called once per vector: a kernel with the vector
variants the loop vectorizer widens its calls to.

sin, cos and tan take a slow path (Payne–Hanek reduction) for huge arguments. Inlined
into a loop, the vectorizer would run it on every element (a branch per element becomes
a select of both paths, its table reads gathers: 10 ns an element more). Instead the
scalar call carries `"vector-function-abi-variant"` (as mathlib.py's calls of libmvec
do) naming the module's own vector definitions of the same kernel, 2 to 16 lanes, in
which the slow path runs only if some lane needs it: one branch per vector, as libmvec's
own code takes. Every definition computes the same operations on each lane, so an
element gets the same bits on every path. The variants are kept until the vectorizer
has run (`module_functions.keep`); a vector register (a lane block) calls the
definition of its own type.

    >>> x = np.linspace(-4, 4, 1001)
    >>> text = rune.jit(rnp.sin).lower(x).llvm_ir
    >>> 'define internal <8 x double> @"rune_sin_kernel_v8f64"' in text
    True
"""

from __future__ import annotations

import llvmlite.ir as ir

from .. import arith as A
from .. import module_functions
from ..module_functions import Body

WIDTHS = (2, 4, 8, 16)  # lanes of the vector variants


def call(b: ir.IRBuilder, name: str, kernel: Body, x: ir.Value) -> ir.Value:
    """kernel(x) as a call of the module's definition `name` for x's type; a scalar call
    names the vector variants, which are defined with it."""
    if A.lanes(x.type) is not None:
        return module_functions.call(b, name, kernel, x)
    fn = module_functions.define(b.module, name, kernel, x.type, 1)
    set.add(fn.attributes, "noinline")
    variants = []
    for lanes in WIDTHS:
        vector = module_functions.define(b.module, name, kernel, ir.VectorType(x.type, lanes), 1)
        module_functions.keep(b.module, vector)
        variants.append(f"_ZGV_LLVM_N{lanes}v_{fn.name}({vector.name})")
    inst = b.call(fn, [x])
    set.add(inst.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return inst
