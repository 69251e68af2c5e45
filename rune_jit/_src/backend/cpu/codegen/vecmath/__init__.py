"""Vector math of our own: transcendental functions as straight-line LLVM IR.

Each function is a `Body` (module_functions.py): `body(builder, *xs) -> result`, the
same operations on a scalar (f64, f32) or a vector of them, so that an element gets the
same bits whichever path computes it (a loop's vector body or its scalar remainder, a
lane block, a small carry). mathlib.call emits it once per module and type, as an
internal function LLVM inlines where that pays. Each family is a module of its own
(reduction and polynomial written from published methods, cited in docs/accuracy.md),
with a `FUNCTIONS` table: rune_jit's name -> body; float32 bodies branch on the type.
"""

from __future__ import annotations

from ..module_functions import Body
from . import cbrt, erf, exp, inverse_hyperbolic, inverse_trig, log, outlined, power, trig

FUNCTIONS: dict[str, Body] = {**exp.FUNCTIONS, **log.FUNCTIONS, **power.FUNCTIONS,
                              **trig.FUNCTIONS, **inverse_trig.FUNCTIONS,
                              **inverse_hyperbolic.FUNCTIONS, **cbrt.FUNCTIONS,
                              **erf.FUNCTIONS}
# name -> arguments: float64's compiled apart (outlined.py), float32's inlined (its
# compile time is smaller; apart, sinh's, cosh's, arctan's, arctan2's were 5 to 13 %
# slower). sin, cos, tan, power, erf and erfc are apart in both (their modules say so).
FLOAT64_APART = {"exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1,
                 "log1p": 1, "sinh": 1, "cosh": 1, "arctan": 1, "arctan2": 2, "arcsin": 1,
                 "arccos": 1, "arcsinh": 1, "arccosh": 1, "arctanh": 1, "cbrt": 1}
# apart only with 512-bit vectors: with AVX2, log's, log2's and log10's kernels were 17
# to 20 % slower than inlined
WIDE_ONLY = ("log", "log2", "log10")
FUNCTIONS |= {name: outlined.apart(name, FUNCTIONS[name], nargs=nargs, float32=FUNCTIONS[name],
                                   min_bits=512 if name in WIDE_ONLY else 0)
              for name, nargs in FLOAT64_APART.items()}
