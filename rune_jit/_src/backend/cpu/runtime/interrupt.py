"""Ctrl-C stops compiled code. A SIGINT handler of our own (a few instructions of native
code) counts the signals in `SIGNALS` and then runs Python's, so Python still raises
KeyboardInterrupt as it would. Compiled loops read the count every POLL steps and, when
it has changed since the call began, return the "interrupt" status; the call then
raises Python's pending KeyboardInterrupt (docs/debugging.md).

The handler (sigint.py) goes in when the first program is compiled."""

from __future__ import annotations

import ctypes

from ....ir import Region

SIGNALS = ctypes.c_int64(0)  # SIGINTs received, for as long as the process lives
SYMBOL = "rune.interrupts"
POLL = 4096  # steps of a loop of scalar steps between two reads of SIGNALS
ELEMENTS = 1 << 18  # elements a step's equations compute, times steps between two reads


def imports() -> dict[str, int]:
    """The counter's address, under the name compiled code reads it by."""
    return {SYMBOL: ctypes.addressof(SIGNALS)}


def interval(step: Region) -> int:
    """Steps between two reads of SIGNALS (a power of two): fewer for bigger steps, so
    that a read comes every ELEMENTS computed elements or so, in a fraction of a ms."""
    work = sum(v.type.size for e in step.eqns for v in e.outputs) + 1
    return max(1, min(POLL, 1 << max(0, (ELEMENTS // work).bit_length() - 1)))


def raised() -> BaseException:
    """The KeyboardInterrupt Python's handler left pending (run now, in the main thread),
    or a new one where Python runs handlers later (another thread)."""
    try:
        ctypes.pythonapi.PyErr_CheckSignals()
    except KeyboardInterrupt as err:
        return err
    return KeyboardInterrupt()
