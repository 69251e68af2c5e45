"""Backends: what runs a program. The rest of rune_jit calls a backend through this small
interface and never imports one; a backend imports the primitives it lowers.

    interpret.py   the NumPy interpreter as a backend (RUNE_JIT_BACKEND=interpret)
    cpu/           LLVM through llvmlite: lowering rules, kernels, loops, the runtime
    mlir/          programs as MLIR text (`.lower(...).mlir`), verified upstream
    iree.py        that text compiled and run by IREE (RUNE_JIT_BACKEND=iree)

A backend offers:

- `name`, and `fingerprint()`: what its compiled code depends on besides the program
  (CPU, versions), for disk cache keys;
- `passes`: the (name, pass) pipeline it runs on a program before compiling it;
- `compile(region) -> Executable`, for a closed region (constants included);
- `run_loop(prim, interpret, args, params)`: one loop called outside jit;
- `load(record, payload, constants) -> Executable | None`: the code of a saved program;
- `lower(region)`: the program's stages as text (`jit(f).lower(...)`).

An Executable has `run(values)` and `run_exact(arrays)` (arrays of exactly its types),
`record()` (what a saved program stores of it, or None) and `entry(slow, weak, plan)` (a
faster callable for calls of its exact signature, the arguments whose bits `weak` sets
Python numbers, structured as `plan` says if given (dispatch.py), or None).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Protocol, Sequence

from .. import config, eager
from ..call.forks import fork_waits
from ..ir import Region
from .stats import counts as stats  # noqa: F401 (rune_jit.backend.stats)


class Executable(Protocol):
    def run(self, values: Sequence[Any]) -> list: ...

    def run_exact(self, arrays: Sequence[Any]) -> list: ...

    def record(self) -> tuple[dict, bytes, list] | None: ...

    def entry(self, slow: Callable, weak: int = 0, plan: Any = None) -> Callable | None: ...


class Backend(Protocol):
    name: str
    passes: tuple[tuple[str, Callable[[Region], Region]], ...]

    def fingerprint(self) -> str: ...

    def compile(self, region: Region) -> Executable: ...

    def run_loop(self, prim: Any, interpret: Callable, args: Sequence[Any],
                 params: dict) -> list: ...

    def load(self, record: dict, payload: bytes, constants: list) -> Executable | None: ...

    def lower(self, region: Region) -> Any: ...


@lru_cache(maxsize=None)
def get(name: str) -> Backend:
    """The backend called `name` (made once; the CPU backend loads LLVM only now)."""
    if name == "interpret":
        from .interpret import InterpretBackend

        return InterpretBackend()
    if name == "native":
        from ..platforms import require_native

        require_native()  # before LLVM loads: a clear error, not a crash in native code
        with fork_waits:  # a fork waits for the import
            from .cpu import CpuBackend

            return CpuBackend()
    if name == "iree":
        from .mlir.upstream import iree_runtime

        iree_runtime()  # an ImportError naming the extra before anything else loads
        with fork_waits:
            from .iree import IreeBackend

            return IreeBackend()
    raise ValueError(f"RUNE_JIT_BACKEND must be one of {', '.join(map(repr, config.BACKENDS))}, "
                     f"got {name!r}")


def current() -> Backend:
    """The backend the settings choose (RUNE_JIT_BACKEND, rune_jit.config.backend)."""
    return get(config.backend)


def _run_loop(prim: Any, interpret: Callable, args: Sequence[Any], params: dict) -> list:
    return current().run_loop(prim, interpret, args, params)


eager.install(_run_loop)
