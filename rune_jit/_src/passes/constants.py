"""Constant lifting: array constants become inputs, so compiled code is keyed by types.

A region that closes over a NumPy array holds it as a literal. Compiled, the
literal would be baked into the code: compile time grows with its size and a
loop over new data would compile again. Lifting makes every array literal
(anywhere, nested regions included) a leading param of the region instead;
scalar literals stay, as the code is better for knowing them.
"""

from __future__ import annotations

import numpy as np

from ..ir import Literal, Region, Var, map_regions


def lift_constants(region: Region) -> tuple[Region, list[np.ndarray]]:
    """-> (the region with array literals as leading params, their values)."""
    lifted: dict[int, tuple[Var, np.ndarray]] = {}

    def atom(a):
        if isinstance(a, Literal) and a.value.ndim > 0:
            if id(a.value) not in lifted:
                lifted[id(a.value)] = (Var(a.type), a.value)
            return lifted[id(a.value)][0]
        return a

    def rewrite(r: Region) -> Region:
        eqns = tuple(e.rebuilt(inputs=tuple(atom(a) for a in e.inputs),
                               params=map_regions(e.params, rewrite)) for e in r.eqns)
        return Region(r.params, eqns, tuple(atom(o) for o in r.outputs))

    body = rewrite(region)
    if not lifted:
        return region, []
    params = tuple(v for v, _ in lifted.values())
    return Region(params + body.params, body.eqns, body.outputs), [x for _, x in lifted.values()]
