"""The NumPy interpreter as a backend: `jit`, loops and everything else run through
rune_jit's reference interpreter (RUNE_JIT_BACKEND=interpret), never compiled."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..interpret import eval_region
from ..ir import Region
from .mlir import MlirStages


class Interpreted:
    """A program the interpreter runs: its region, evaluated with NumPy on each call."""

    def __init__(self, region: Region):
        self.region = region

    def run(self, values: Sequence[Any]) -> list:
        # fresh arrays, as compiled code returns: never an input, a view or a constant
        return [np.array(v) for v in eval_region(self.region, list(values))]

    run_exact = run

    def record(self) -> None:
        return None  # nothing compiled to save

    def entry(self, slow: Callable, weak: int = 0, plan: Any = None) -> None:
        return None


class InterpretBackend:
    name = "interpret"
    passes: tuple = ()

    def fingerprint(self) -> str:
        return "interpret"

    def compile(self, region: Region) -> Interpreted:
        return Interpreted(region)

    def run_loop(self, prim: Any, interpret: Callable, args: Sequence[Any],
                 params: dict) -> list:
        return interpret(*args, **params)

    def load(self, record: dict, payload: bytes, constants: list) -> None:
        return None

    def lower(self, region: Region) -> "InterpretedStages":
        return InterpretedStages(region)


class InterpretedStages(MlirStages):
    """`jit(f).lower(...)` under the interpreter: the program (`.ir`, `.mlir`), and no
    machine code."""

    def __init__(self, region: Region):
        self.region = region

    @property
    def llvm_ir(self) -> str:
        raise NotImplementedError("RUNE_JIT_BACKEND=interpret compiles nothing: there is "
                                  "no LLVM IR (unset it to compile)")

    asm = llvm_ir
