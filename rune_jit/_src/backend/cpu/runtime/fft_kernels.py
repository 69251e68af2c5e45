"""Our FFT kernels (codegen/stockham.py) as code of their own: each compiled once per
process (and kept in the disk cache, as native entries are) and called by its address,
as NumPy's pocketfft loops are (pocketfft.py), so a program that transforms carries no
copy of the kernel.

Why apart: a kernel is a few passes of radix-8 butterflies, which LLVM's vectorizers take
~150 ms to compile. Defined in each program (with its twiddles as constants), the kernel
of 4096 points made every such program's first call ~500 ms slower; apart, the second
program to use it pays nothing, and a process that finds it on disk does not start LLVM
for it. Its twiddle table is NumPy's array (stockham.twiddles), whose address the
kernel's code is linked to.
"""

from __future__ import annotations

import re
from typing import Callable

from ..codegen import stockham
from . import own_code

_NAMES = re.compile(stockham.PREFIX.encode() + rb"[0-9]+_f(?:32|64)")


def needed_by(obj: bytes) -> bool:
    return stockham.PREFIX.encode() in obj


def addresses(obj: bytes, defined: list[str], target: str, object_code: Callable,
              link: Callable) -> dict[str, int]:
    """The address of each kernel object code names and does not define (a kernel's own
    code names itself), compiled (or read from the disk cache) and loaded at its first
    use (own_code.py): `object_code` and `link` are llvm.py's."""
    names = {raw.decode() for raw in _NAMES.findall(obj)} - set(defined)
    return {name: _address(name, target, object_code, link) for name in names}


def _address(name: str, target: str, object_code: Callable, link: Callable) -> int:
    def reads():
        table = stockham.twiddles(name)
        return {stockham.table_symbol(name): table.ctypes.data}, table

    return own_code.address(name, target, ".fft", lambda: stockham.module_ir(name), object_code,
                            link, reads)
