"""jvp rules that many primitives share: one for linear primitives, one for those
whose outputs have no derivative."""

from __future__ import annotations

from ..ad_util import Zero
from .tangents import zeros
from ..primitive import Primitive
from ..trace import bind1, type_of_value


def linear_jvp(prim: Primitive) -> None:
    """jvp of a primitive linear in all its operands: apply it to the tangents."""

    def jvp(primals, tangents, **params):
        ans = bind1(prim, *primals, **params)
        if all(isinstance(t, Zero) for t in tangents):
            return [ans], [Zero(type_of_value(ans))]
        ts = [zeros(t.type) if isinstance(t, Zero) else t for t in tangents]
        return [ans], [bind1(prim, *ts, **params)]

    prim.def_rule("jvp", jvp)


def zero_jvp(prim: Primitive) -> None:
    """Outputs that are piecewise constant or not float: the tangent is zero."""

    def jvp(primals, tangents, **params):
        ans = bind1(prim, *primals, **params)
        return [ans], [Zero(type_of_value(ans))]

    prim.def_rule("jvp", jvp)
