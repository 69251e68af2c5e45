"""An output written over a temporary that dies making it. In softmax, e = exp(x - max)
is read by its sum and, last, by e / sum: with e stored in the output's buffer, the
division overwrites each element just after reading it, and the program needs no
buffer of x's size, as a fused softmax would not.

The rule is narrow, so that it is safe by construction. The temporary's readers are
reductions (lowered where they stand, so done before the last reader runs) and, last,
one elementwise equation (not in a cluster) making a function output of the same type,
whose other operands can read no element of the temporary: literals, params, or the
values of reductions seen through broadcasts and reshapes. That equation's element i
reads element i of the temporary and of nothing else that aliases the buffer, and the
output is stored where it is made, so nothing reads the temporary afterwards."""

from __future__ import annotations

from ....ir import Eqn, Region, Var
from ....primitive import Primitive

# primitives whose lowering reads their operands where the equation stands and keeps
# its result in registers or a buffer of its own: reductions (filled by reduce.py)
READ_AT_ONCE: set[Primitive] = set()
# views a walk from an operand passes through (filled by views.py)
SEE_THROUGH: set[Primitive] = set()


def homes(region: Region, dests: dict, clusters: dict) -> dict[Var, Var]:
    """temporary -> the function output whose buffer it is stored in."""
    readers: dict[Var, list[int]] = {}
    for k, eqn in enumerate(region.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var):
                readers.setdefault(a, []).append(k)
    held = {c for e in region.eqns for c in e.captures}
    held |= {o for o in region.outputs if isinstance(o, Var)}
    producer = {v: e for e in region.eqns for v in e.outputs}
    out: dict[Var, Var] = {}
    for v, ks in readers.items():
        last = region.eqns[ks[-1]]
        if not _overwrites(last, v, producer):
            continue
        o = last.outputs[0]
        if (v in producer and v not in held and o not in out.values()
                and dests.get(o) is not None and o.type == v.type and ks[-1] not in clusters
                and all(region.eqns[k].prim in READ_AT_ONCE for k in ks if k != ks[-1])):
            out[v] = o
    return out


def _overwrites(eqn: Eqn, v: Var, producer: dict[Var, Eqn]) -> bool:
    """Whether `eqn` is elementwise with one output, reading of `v`'s buffer only the
    element it writes."""
    return ("elementwise" in eqn.prim.traits and len(eqn.outputs) == 1
            and all(a is v or _apart(a, producer) for a in eqn.inputs))


def _apart(a, producer: dict[Var, Eqn]) -> bool:
    """Whether `a` is a literal, a param, or a reduction's value seen through views."""
    while isinstance(a, Var) and a in producer and producer[a].prim in SEE_THROUGH:
        a = producer[a].inputs[0]
    return not isinstance(a, Var) or a not in producer or producer[a].prim in READ_AT_ONCE
