"""The passes a program goes through before it is lowered, in order, in one place.

RUNE_JIT_DUMP=ir prints the program after each stage (=ir,llvm also prints the
LLVM IR, =ir,llvm,asm the assembly).
"""

from __future__ import annotations

import os
import sys

from ....ir import Region
from .fission import fission
from ....passes.simplify import dce, simplify

STAGES = (("simplify", simplify), ("fission", fission), ("dce", dce))


def dumping(stage: str) -> bool:
    return stage in os.environ.get("RUNE_JIT_DUMP", "").split(",")


def before_lowering(region: Region) -> Region:
    for name, run in STAGES:
        region = run(region)
        if dumping("ir"):
            print(f"--- after {name}:\n{region}", file=sys.stderr)
    return region
