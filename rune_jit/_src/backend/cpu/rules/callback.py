"""Calls into Python from compiled code (debug and pure callbacks): the program stores
each operand in memory and calls one trampoline of this process with the callback's id
and a table of addresses, the operands' and then the buffers of its results, which the
trampoline fills. ctypes takes the GIL for the trampoline; an exception the callback
raises waits in this thread until the compiled call returns its failure status, and is
then raised as itself.

A program that calls back holds ids of this process: it is neither written to the disk
cache nor saved (`portable`)."""

from __future__ import annotations

import ctypes
import threading

import llvmlite.ir as ir
import numpy as np

from ....ops.callback import Callback, debug_callback_p
from ....ops.pure_callback import pure_callback_p
from ..codegen.emit import I32, I64
from ..codegen.lower import Lowerer, lowering
from ..codegen.values import Array

SYMBOL = "rune.callback"
# by id: each callback and its operands' types, for as long as this process may call it
_callbacks: dict[int, tuple[Callback, tuple]] = {}
_raised = threading.local()  # the exception a callback raised in this thread


@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p))
def _trampoline(ident: int, addresses) -> int:
    try:
        callback, types = _callbacks[ident]
        results = callback(*[_read(addresses[i], t) for i, t in enumerate(types)])
        for i, (r, t) in enumerate(zip(results, callback.out_types), len(types)):
            _write(addresses[i], r, t)
        return 0
    except BaseException as err:  # noqa: B036 (raised again by the compiled call)
        _raised.error = err
        return 1


def _read(address: int, t) -> np.ndarray:
    """A copy of the array of type `t` at `address`."""
    if t.nbytes == 0:
        return np.zeros(t.shape, t.dtype)
    raw = (ctypes.c_char * t.nbytes).from_address(address)
    return np.frombuffer(raw, t.dtype).reshape(t.shape).copy()


def _write(address: int, value: np.ndarray, t) -> None:
    """Store `value`, an array of type `t`, at `address`."""
    if t.nbytes:
        ctypes.memmove(address, np.ascontiguousarray(value).ctypes.data, t.nbytes)


def imports() -> dict[str, int]:
    """The trampoline's address, under the name compiled code calls it by."""
    return {SYMBOL: ctypes.cast(_trampoline, ctypes.c_void_p).value}


def raised() -> BaseException | None:
    """The exception a callback of this thread raised (once)."""
    err = getattr(_raised, "error", None)
    _raised.error = None
    return err


@lowering(debug_callback_p)
@lowering(pure_callback_p)
def _callback(lw: Lowerer, args, out_types, *, callback: Callback, **_) -> list[Array]:
    # (a pure callback's other param, vmap_method, says how it batches: nothing here)
    if lw.width is not None:
        raise NotImplementedError(
            "rune_jit: a callback (debug.print, pure_callback) inside a vmapped iterate "
            "cannot run in compiled lane blocks; use rune.disable_jit() or "
            "RUNE_JIT_BACKEND=interpret")
    _callbacks[callback.id] = (callback, tuple(a.type for a in args))
    outs = [Array(t, lw.out_buffer(i, t)) for i, t in enumerate(out_types)]
    addresses = [lw.materialize(a).ptr for a in args] + [o.ptr for o in outs]
    table = lw.fn.buffer(8 * max(len(addresses), 1))
    for i, address in enumerate(addresses):
        slot = lw.b.gep(table, [lw.i64(8 * i)], source_etype=ir.IntType(8))
        lw.b.store(address, slot)
    status = lw.fn.call(SYMBOL, I32, [ir.Constant(I64, callback.id), table])
    lw.fail_if_any(lw.b.icmp_signed("!=", status, ir.Constant(I32, 0)), "callback")
    return outs
