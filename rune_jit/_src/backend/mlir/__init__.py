"""MLIR text from rune_jit's IR, in upstream dialects (docs/mlir.md): `jit(f).lower(*args)
.as_text("mlir")`. Making the text needs nothing beyond rune_jit; verifying it needs the
upstream MLIR bindings that IREE's compiler wheel bundles (the `mlir` extra).

    emit.py      the emitter: types, constants, names, nesting, locations; RULES
    scalars.py   elementwise primitives on scalars (arith, math), one row each
    arrays.py    tensors: maps, views, index maps, reductions, contractions (linalg, tensor)
    loops.py     scan, iterate, cond and the bodies of remat, root... (scf)
    upstream.py  parse, verify and canonicalize with the upstream bindings; IREE's compile
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...ir import Region, Type
from . import arrays, loops  # noqa: F401  (their rules)
from .emit import Emitter, Value, mlir_type, scalar_type


def module_text(region: Region, constants: Sequence[np.ndarray] = (), name: str = "main"
                ) -> str:
    """The program as one MLIR module holding `func.func @name`. The region's first
    len(constants) params are `constants`, emitted as constants of the function's body.
    At the function's boundary a 0-d value is a tensor of rank 0 (`tensor<f64>`, what
    runtimes pass), inside it a scalar."""
    em = Emitter()
    params = region.params[len(constants):]
    names = [f"%arg{i}" for i in range(len(params))]
    values = [em.literal(np.asarray(c)) for c in constants]
    for n, p in zip(names, params):
        values.append(Value(em.op(f"tensor.extract {n}[] : {_boundary(p.type)}", "x"), p.type)
                      if not p.type.shape else Value(n, p.type))
    em.at(None)
    outs = [_out(em, o) for o in em.region(region, values)]
    em.at(None)
    head = (f"  func.func @{name}({', '.join(f'{n}: {_boundary(p.type)}' for n, p in zip(names, params))})"
            f" -> ({', '.join(_boundary(o.type) for o in outs)}) {{")
    ret = f"    return {', '.join(o.name for o in outs)} : {', '.join(_boundary(o.type) for o in outs)}"
    if not outs:
        ret = "    return"
    lines = ["module {", head, *em.lines, ret, "  }", "}", *em.loc_aliases()]
    return "\n".join(lines) + "\n"


def _boundary(t: Type) -> str:
    return mlir_type(t) if t.shape else f"tensor<{scalar_type(t.dtype)}>"


def _out(em: Emitter, v: Value) -> Value:
    if v.type.shape:
        return v
    return Value(em.op(f"tensor.from_elements {v} : {_boundary(v.type)}", "out"), v.type)
