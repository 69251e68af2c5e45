"""Code of our own compiled apart from programs, once per process (and kept in the disk
cache, as native entries are), and called by its address: our FFT kernels
(fft_kernels.py) and the math kernels too big to inline (math_kernels.py). A program
that uses one carries no copy of it, and LLVM compiles it once, not in every program."""

from __future__ import annotations

import sys
from typing import Any, Callable

from ....call.forks import renew_in_child

_lock = renew_in_child(sys.modules[__name__], "_lock")
# (symbol, target) -> (what keeps its code mapped, [its address], what its code reads), for
# as long as the process lives
_loaded: dict[tuple[str, str], tuple] = {}


def address(name: str, target: str, kind: str, module_ir: Callable[[], str],
            object_code: Callable, link: Callable,
            reads: Callable[[], tuple[dict[str, int], Any]] | None = None) -> int:
    """The address of `name` compiled for `target` (llvm.fingerprint(): a process may
    compile for several CPUs, RUNE_JIT_CPU, and a kernel for another CPU passes its
    wide vectors in other registers), compiled from `module_ir()` (or read from the disk
    cache, as entries of `kind`) and loaded at its first use; `reads()`: the addresses its
    code refers to, and what must live as long as the code (a table at one of them).
    `object_code` and `link` are llvm.py's."""
    with _lock:  # two threads linking their first programs compile a kernel once
        if (name, target) not in _loaded:
            imports, kept = reads() if reads is not None else ({}, None)
            image, where = link(object_code(name, kind, module_ir), [name], imports)
            _loaded[name, target] = (image, where, kept)
        return _loaded[name, target][1][0]
