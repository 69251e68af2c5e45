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
from . import cbrt, erf, exp, inverse_hyperbolic, inverse_trig, log, power, trig

FUNCTIONS: dict[str, Body] = {**exp.FUNCTIONS, **log.FUNCTIONS, **power.FUNCTIONS,
                              **trig.FUNCTIONS, **inverse_trig.FUNCTIONS,
                              **inverse_hyperbolic.FUNCTIONS, **cbrt.FUNCTIONS,
                              **erf.FUNCTIONS}
