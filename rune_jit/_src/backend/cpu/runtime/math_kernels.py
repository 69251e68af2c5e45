"""The math kernels too big to inline (codegen/vecmath/outlined.py: sin's, cos's, tan's)
as code of their own, compiled once per process and target CPU (own_code.py) and linked
to the programs that call them by address."""

from __future__ import annotations

import sys
from typing import Callable

from ..codegen import vecmath  # noqa: F401 (its modules register their kernels)
from ..codegen.vecmath import outlined
from . import llvm, own_code


def needed_by(obj: bytes) -> bool:
    return b"_kernel" in obj


def addresses(obj: bytes, defined: list[str], target: str, object_code: Callable,
              link: Callable) -> dict[str, int]:
    """The address of each kernel object code names and does not define (a kernel's own
    code names itself), compiled for `target`; `object_code` and `link` are llvm.py's."""
    names = {m.group(0).decode() for m in outlined.symbols().finditer(obj)} - set(defined)
    return {name: own_code.address(name, target, ".math",
                                   lambda name=name: outlined.module_ir(name), object_code, link)
            for name in names}


llvm.OWN_CODE.append(sys.modules[__name__])
