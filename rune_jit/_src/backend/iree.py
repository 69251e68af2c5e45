"""IREE as a backend (RUNE_JIT_BACKEND=iree, docs/mlir.md): a program's MLIR text
compiled by iree-compile and run by IREE's runtime on the device RUNE_JIT_IREE_DEVICE
names (default `local-task`, this CPU; `cuda`, `hip`, `vulkan` are IREE's GPU drivers,
their architecture given by RUNE_JIT_IREE_FLAGS, extra iree-compile flags). The path to
accelerators, not a faster CPU backend: a call costs tens of microseconds, a compile
about a second.

A program IREE cannot run raises, as JAX does for a primitive with no lowering on a
platform: NotImplementedError naming the primitive and the user's line (no MLIR form),
or IREE's gap with its error (which names the user's line: the text carries them as
locations). Compiled modules are kept on disk (the cache of compiled code, `.vmfb`
entries) and by saved programs (RUNE_JIT_SAVE_TRACES).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
from collections import OrderedDict
from typing import Any, Callable, Sequence

import numpy as np

from .. import errors
from ..call import disk_cache
from ..call.forks import renew_in_child
from ..ir import Region, Type
from ..passes.constants import lift_constants
from .cpu import runtime as cpu_runtime
from .cpu.codegen.complex_pairs import holds_complex
from .cpu.codegen.pipeline import STAGES, before_lowering
from .mlir import MlirStages, module_text, upstream

DEVICE = "RUNE_JIT_IREE_DEVICE"
FLAGS = "RUNE_JIT_IREE_FLAGS"
SUFFIX = ".vmfb"
RECENT = 64  # modules loaded in this process, by key: loops at the prompt load theirs again


class IreeBackend:
    """Programs compiled by iree-compile for `device` and run by IREE's runtime. Made
    when the backend is first used: IREE missing is an ImportError naming the extra, a
    device IREE cannot open is its error with the device named."""

    name = "iree"
    passes = STAGES

    def __init__(self, device: str | None = None, extra: Sequence[str] | None = None):
        self.device = device or os.environ.get(DEVICE, "").strip() or "local-task"
        self.extra = tuple(shlex.split(os.environ.get(FLAGS, "")) if extra is None else extra)
        self.flags = upstream.iree_flags(self.device, self.extra)
        upstream.iree_config(self.device)
        self.loaded: OrderedDict[str, Callable] = OrderedDict()
        renew_in_child(self, "lock")  # calls from several threads share `loaded`
        self._fingerprint = "|".join(
            ["iree", importlib.metadata.version("iree-base-compiler"), self.device,
             *self.flags, cpu_runtime.llvm.fingerprint()])

    def fingerprint(self) -> str:
        return self._fingerprint

    def compile(self, region: Region) -> "IreeExecutable":
        final, constants = prepared(region)
        text = module_text(final, constants)
        key = disk_cache.key(text, self._fingerprint)
        params = final.params[len(constants):]
        return IreeExecutable(self, key, self._vmfb(key, text), [p.type for p in params],
                              list(final.out_types))

    def run_loop(self, prim: Any, interpret: Callable, args: Sequence[Any],
                 params: dict) -> list:
        return cpu_runtime.run_eqn(prim, interpret, args, params, compile=self.compile)

    def load(self, record: dict, payload: bytes, constants: list) -> "IreeExecutable | None":
        try:
            ins, outs = ([Type(np.dtype(d), tuple(s)) for d, s in record[k]]
                         for k in ("in", "out"))
            return IreeExecutable(self, str(record["key"]), payload, ins, outs)
        except (KeyError, TypeError, ValueError, RuntimeError):
            return None

    def lower(self, region: Region) -> "IreeStages":
        return IreeStages(*prepared(region))

    def _vmfb(self, key: str, text: str) -> bytes:
        """The compiled module of `text`: from the disk cache, else compiled (and stored)."""
        found = disk_cache.load(key, SUFFIX)
        if found is not None:
            return found.payload
        try:
            vmfb = upstream.iree_compile(text, self.device, self.extra)
        except ImportError:
            raise
        except Exception as e:  # iree-compile's error (CompilerToolError)
            raise compile_error(e, self.device) from None
        disk_cache.store(key, {"device": self.device}, vmfb, SUFFIX)
        return vmfb

    def function(self, key: str, vmfb: bytes) -> Callable:
        """The loaded function of a module, loaded once while recently used."""
        with self.lock:
            fn = self.loaded.pop(key, None) or upstream.iree_load(vmfb, "main", self.device)
            self.loaded[key] = fn
            while len(self.loaded) > RECENT:
                self.loaded.popitem(last=False)
            return fn


def prepared(region: Region) -> tuple[Region, list[np.ndarray]]:
    """The program as IREE is given it: its array constants lifted (emitted as constants
    of the function), after the CPU backend's passes (those the MLIR text is made from)."""
    if holds_complex(region):
        raise NotImplementedError("rune_jit: RUNE_JIT_BACKEND=iree runs no complex values "
                                  "(they have no MLIR form yet: docs/mlir.md)")
    for i, t in enumerate(region.out_types):
        if t.unsized:
            raise NotImplementedError(f"rune_jit: output {i} of the program, {t}, has no "
                                      f"size before it runs: RUNE_JIT_BACKEND=iree cannot "
                                      f"return it")
    lifted, constants = lift_constants(region)
    return before_lowering(lifted), constants


class IreeExecutable:
    """A program compiled by IREE: `run` converts the arguments to its types, calls
    IREE's function, and gives its results rune_jit's dtypes (IREE's integers have no
    sign) and rune_jit's errors (its run-time checks are `cf.assert`s)."""

    def __init__(self, backend: IreeBackend, key: str, vmfb: bytes, in_types: list[Type],
                 out_types: list[Type]):
        self.backend, self.key, self.vmfb = backend, key, vmfb
        self.in_types, self.out_types = in_types, out_types
        backend.function(key, vmfb)  # loaded now: a module IREE rejects fails here

    def run(self, values: Sequence[Any]) -> list:
        args = [cpu_runtime.as_input(v, t) for v, t in zip(values, self.in_types)]
        try:
            outs = self.backend.function(self.key, self.vmfb)(*args)
        except RuntimeError as e:
            raise run_error(e, self.backend.device) from None
        return [as_output(o, t) for o, t in zip(outs, self.out_types)]

    run_exact = run

    def record(self) -> tuple[dict, bytes, list]:
        types = {k: [[t.dtype.str, list(t.shape)] for t in ts]
                 for k, ts in (("in", self.in_types), ("out", self.out_types))}
        return {"key": self.key, **types}, self.vmfb, []  # its constants are in its code

    def entry(self, slow: Callable, weak: int = 0, plan: Any = None) -> None:
        return None  # calls go through run: IREE's runtime is called from Python


def as_output(got: np.ndarray, t: Type) -> np.ndarray:
    """IREE's result as an array of rune_jit's type `t`: its integers read with t's sign."""
    got = np.asarray(got)
    if got.dtype != t.dtype and got.dtype.itemsize == t.dtype.itemsize \
            and got.dtype.kind in "iub" and t.dtype.kind in "iub":
        return got.view(t.dtype)
    return got.astype(t.dtype, copy=False)


# rune_jit's run-time checks as cf.assert messages (backend/mlir), and the errors the
# native code raises for them
_CHECKS = ((re.compile(r"rune_jit\.iterate: .*"), errors.IterateError),
           (re.compile(r"an index is out of bounds .*"), IndexError),
           (re.compile(r"rune_jit.* singular.*"), np.linalg.LinAlgError))


def run_error(e: RuntimeError, device: str) -> Exception:
    """The error of a failed call of IREE's function: rune_jit's, if one of its checks
    failed, else IREE's with the device named."""
    message = str(e)
    for pattern, kind in _CHECKS:
        found = pattern.search(message)
        if found:
            return kind(found.group(0).split(";")[0].strip())
    return RuntimeError(f"rune_jit: IREE failed running the program on {device!r}: {message}")


def compile_error(e: Exception, device: str) -> Exception:
    """iree-compile's error, short: its first diagnostics (each at the user's line), as
    NotImplementedError if it is one of IREE's known gaps (upstream.IREE_GAPS)."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if "error:" in ln][:3] or text.splitlines()[:3]
    gap = upstream.iree_gap(e)
    if gap is not None:
        return NotImplementedError(f"rune_jit: IREE cannot compile this program for "
                                   f"{device!r} ({gap}; RUNE_JIT_BACKEND=native runs it):\n"
                                   + "\n".join(lines))
    return RuntimeError(f"rune_jit: iree-compile failed for {device!r}:\n" + "\n".join(lines))


class IreeStages(MlirStages):
    """`jit(f).lower(...)` under IREE: the program (`.ir`, `.mlir`, what iree-compile is
    given), and no LLVM IR of rune_jit's (IREE makes its own)."""

    def __init__(self, region: Region, constants: list):
        self.region, self.constants = region, constants

    @property
    def llvm_ir(self) -> str:
        raise NotImplementedError("RUNE_JIT_BACKEND=iree: iree-compile makes the machine "
                                  "code; rune_jit shows its MLIR input (`.mlir`)")

    asm = llvm_ir
