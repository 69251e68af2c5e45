"""MLIR text from rune_jit's IR, in upstream dialects (docs/mlir.md): `jit(f).lower(*args)
.as_text("mlir")`. Making the text needs nothing beyond rune_jit; verifying it needs the
upstream MLIR bindings that IREE's compiler wheel bundles (the `mlir` extra).

    emit.py      the emitter: types, constants, names, nesting, locations; RULES
    scalars.py   elementwise primitives on scalars (arith, math), one row each
    arrays.py    tensors: maps, views, index maps, reductions, contractions (linalg, tensor)
    indexing.py  traced positions: dynamic slices, gathers, scatters, index checks; sorts
    loops.py     scan, iterate, cond and the bodies of remat, root... (scf)
    linalg.py    linear solves (LU with partial pivoting, in scf loops)
    upstream.py  parse, verify and canonicalize with the upstream bindings; IREE's compile
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from ...ir import Region, Type
from . import arrays, indexing, linalg, loops  # noqa: F401  (their rules)
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
    *maps, function = _aliased("\n".join([head, *em.lines, ret, "  }"]))
    return "\n".join([*maps, "module {", function, "}", *em.loc_aliases()]) + "\n"


def _aliased(text: str) -> list[str]:
    """`text` with each affine map named once (#map0 = affine_map<...>), as MLIR prints
    them: the definitions, then the text."""
    names: dict[str, str] = {}

    def alias(m: re.Match) -> str:
        return names.setdefault(m.group(0), f"#map{len(names)}")
    text = _AFFINE.sub(alias, text)
    return [f"{name} = {m}" for m, name in names.items()] + [text]


_AFFINE = re.compile(r"affine_map<\([^)]*\) -> \([^)]*\)>")


def _boundary(t: Type) -> str:
    return mlir_type(t) if t.shape else f"tensor<{scalar_type(t.dtype)}>"


def _out(em: Emitter, v: Value) -> Value:
    if v.type.shape:
        return v
    if v.type.dtype == np.bool_:  # IREE 3.13 rejects a from_elements of an i1 (docs/mlir.md)
        return Value(arrays.zero_d(em, v), v.type)
    return Value(em.op(f"tensor.from_elements {v} : {_boundary(v.type)}", "out"), v.type)


class MlirStages:
    """What `jit(f).lower(*args)` shows of a program in MLIR (the stages objects of every
    backend have it): `.mlir`, `.as_text(...)`, `.verify_mlir()`. Needs `region` (the
    program after the backend's passes) and `constants` (the values of its leading params)."""

    region: Region
    constants: Sequence[np.ndarray] = ()

    @property
    def ir(self) -> str:
        """The program as the backend runs it: after the passes that run before lowering."""
        return str(self.region)

    @property
    def mlir(self) -> str:
        """The program as an MLIR module in upstream dialects (docs/mlir.md).

        >>> print(rune.jit(lambda x: rnp.sin(x) * 2.0).lower(np.ones(3)).mlir)  # doctest: +ELLIPSIS
        #map0 = affine_map<(d0) -> (d0)>
        ...
        module {
          func.func @main(%arg0: tensor<3xf64>) -> (tensor<3xf64>) {
        ...
              %v... = math.sin %a... : f64 loc(#loc0)
        ...
        """
        return module_text(self.region, self.constants)

    def as_text(self, dialect: str = "mlir") -> str:
        """The program as text: "mlir" (the default, as JAX's), "ir" (rune_jit's IR),
        "llvm" (LLVM IR) or "asm" (the CPU backend's machine code).

        >>> stages = rune.jit(lambda x: x + 1.0).lower(np.float64(2.0))
        >>> "arith.addf" in stages.as_text(), stages.as_text("ir").startswith("{ lambda")
        (True, True)
        """
        texts = {"mlir": "mlir", "ir": "ir", "llvm": "llvm_ir", "asm": "asm"}
        if dialect not in texts:
            raise ValueError(f"as_text: dialect must be one of {', '.join(map(repr, texts))}, "
                             f"got {dialect!r}")
        return getattr(self, texts[dialect])

    def verify_mlir(self, passes: str = "canonicalize,cse") -> str:
        """Parse and verify `.mlir` with upstream MLIR's bindings (the `mlir` extra: an
        ImportError says how to install it), run `passes` on it; -> the module after them.

        >>> try:
        ...     text = rune.jit(lambda x: x * x).lower(np.ones(2)).verify_mlir()
        ... except ImportError as e:  # without the extra, the error says how to install it
        ...     text = "arith.mulf" if "rune-jit[mlir]" in str(e) else str(e)
        >>> "arith.mulf" in text
        True
        """
        from .upstream import verify

        return verify(self.mlir, passes)
