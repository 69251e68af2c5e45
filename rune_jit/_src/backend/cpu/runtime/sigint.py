"""The SIGINT handler that counts signals for compiled loops (interrupt.py): a few
instructions of native code in front of Python's own handler, which it then calls.

It goes in when the first program is compiled, in the main thread, and only over
Python's default SIGINT handling: a handler the user installs with `signal.signal`
replaces it (Python reinstalls its own), and compiled calls then run to their end."""

from __future__ import annotations

import ctypes
import signal
import threading

import llvmlite.ir as ir

from . import llvm
from ..codegen.emit import I32, I64
from .interrupt import SYMBOL, imports


class _SigAction(ctypes.Structure):  # glibc's struct sigaction on Linux
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


SA_SIGINFO = 4
_installed: list = []  # the handler's code, kept mapped while the process lives
_lock = threading.Lock()


def _handler(previous: int) -> tuple[object, int]:
    """Native code for `void h(int sig) { SIGNALS += 1; previous(sig); }`."""
    module = ir.Module("rune.sigint")
    module.triple = llvm.target_machine().triple
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32]), "rune.sigint")
    b = ir.IRBuilder(fn.append_basic_block())
    counter = ir.GlobalVariable(module, I64, SYMBOL)
    b.atomic_rmw("add", counter, ir.Constant(I64, 1), "monotonic")
    previous_fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32]), "rune.previous")
    b.call(previous_fn, [fn.args[0]])
    b.ret_void()
    obj = llvm.emit_object(llvm.optimize(str(module)))
    image, (address,) = llvm.link(obj, ["rune.sigint"], {**imports(), "rune.previous": previous})
    return image, address


def install() -> None:
    """Put the counting handler in front of Python's, once, if SIGINT is Python's."""
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        if _installed or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return
        libc = ctypes.CDLL(None, use_errno=True)
        old = _SigAction()
        if libc.sigaction(signal.SIGINT, None, ctypes.byref(old)) != 0 or (
                old.flags & SA_SIGINFO) or not old.handler:
            return
        image, address = _handler(old.handler)
        new = _SigAction(address, old.mask, old.flags, old.restorer)
        if libc.sigaction(signal.SIGINT, ctypes.byref(new), None) == 0:
            _installed.append(image)
