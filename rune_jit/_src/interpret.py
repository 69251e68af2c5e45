"""The reference interpreter: evaluate a closed region equation by equation.

Each equation goes through `bind`, so with no builder current this is the NumPy
interpreter (the oracle for the compiler and the eager path), and under a
builder it inlines the region into the trace being built.
"""

from __future__ import annotations

from typing import Any, Sequence

from .ir import Literal, Region
from . import source_info
from .trace import bind


def eval_region(region: Region, args: Sequence[Any]) -> list:
    if len(args) != len(region.params):
        raise TypeError(f"region takes {len(region.params)} values, got {len(args)}")
    env = dict(zip(region.params, args))

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[atom]

    for eqn in region.eqns:
        ins, params = eqn.closed
        with source_info.at(eqn.source):  # inlined into a trace: from the same line
            outs = bind(eqn.prim, *[read(a) for a in ins], **params)
        env.update(zip(eqn.outputs, outs))
    return [read(o) for o in region.outputs]
