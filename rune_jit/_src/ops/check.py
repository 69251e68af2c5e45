"""check: fail the call, naming the failing values, unless a predicate holds.

    def check(pred, *values, msg, tree, axes):        # the meaning
        if not pred.all():
            lane = the first index, in row-major order, where pred is False
            raise CheckError(msg.format(*args, **kwargs), lane)  # (args, kwargs): `tree`
                                                                  # of the values at lane

Operands: the predicate, a bool per lane (of shape the sizes of `axes`), then the leaves
of the values the message is formatted with, each leading with the same lane axes.
`axes` says, outermost first, what each lane axis stands for: (the lane axes of the
user's maps it flattens, whether each is one: `passes.vmap.axis_lanes`). The check has
no outputs; it is an effect, so dead-code elimination keeps it, and a loop holding one
is kept too (`simplify.may_fail`).

Under jvp and reverse mode it checks the primal values (reverse mode: in the forward
pass); under vmap each lane is checked and the first failing lane is named. A loop's
interpreter rule names its step in a failure from its step (`naming_step`). Compiled
code fails the call with a status that names the check; the runtime then runs the call
again in the interpreter, which raises this error (backend/cpu/rules/checks.py).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .. import source_info, tree
from ..errors import CheckError, user_lane
from ..ir import Type
from ..passes.vmap import axis_lanes, taking
from ..primitive import Absent, Primitive
from ..trace import bind, type_of_value
from .elementwise import logical_not, logical_or
from .shape import broadcast_in_dim, materialize

check_p = Primitive("check", traits=frozenset({"effect"}))
_state = threading.local()


def check_flat(pred: Any, leaves: Sequence[Any], *, msg: str, treedef: tree.PyTreeDef,
               axes: tuple = ()) -> None:
    """Bind a check of `pred`, whose message is `msg` formatted with the (args, kwargs)
    that `treedef` rebuilds from `leaves`."""
    bind(check_p, pred, *leaves, msg=msg, tree=treedef, axes=tuple(axes))


def format_message(msg: str, treedef: tree.PyTreeDef, values: Sequence[Any]) -> str:
    """`msg` formatted with the (args, kwargs) `treedef` makes of `values`."""
    args, kwargs = tree.unflatten(treedef, list(values))
    return msg.format(*args, **kwargs)


class checks_off:
    """`with checks_off():` checks evaluated in here pass (checkify computes the results
    of a call whose check failed so). Per thread."""

    def __enter__(self) -> None:
        self.saved = getattr(_state, "off", False)
        _state.off = True

    def __exit__(self, *exc) -> None:
        _state.off = self.saved


def checking() -> bool:
    """Whether checks fail on this thread (not inside `checks_off`)."""
    return not getattr(_state, "off", False)


class naming_step:
    """`with naming_step("scan", t):` a check failing in here names step t of the loop
    being evaluated, at the line of that loop's equation (the interpreter's current one)."""

    __slots__ = ("kind", "step")

    def __init__(self, kind: str, step: int):
        self.kind, self.step = kind, step

    def __enter__(self) -> None:
        pass

    def __exit__(self, typ, err, tb) -> bool:
        if isinstance(err, CheckError):
            where = source_info.current()
            err.at_step(self.step, self.kind, f"{where.file}:{where.line}" if where else "")
        return False


# ------------------------------------------------------------- meaning


@check_p.def_rule("shape")
def _check_shape(pred: Type, *values: Type, msg: str, tree, axes) -> list[Type]:
    lanes = tuple(int(np.prod(lanes)) for lanes, _ in axes)
    if pred.dtype != np.dtype(bool) or pred.shape != lanes:
        raise TypeError(f"check: the predicate must be a bool scalar per lane, got "
                        f"{pred.dtype.name}{list(pred.shape[len(lanes):])}")
    if any(v.shape[:len(lanes)] != lanes for v in values):
        raise TypeError(f"check: the values must lead with the lanes {lanes}")
    return []


@check_p.def_rule("impl")
def _check_impl(pred, *values, msg, tree, axes) -> list:
    ok = np.asarray(pred)
    if ok.all() or not checking():
        return []
    at = np.unravel_index(int(np.argmin(ok.reshape(-1))), ok.shape)  # the first False
    lane = tuple(i for index, (lanes, shown) in zip(at, axes)
                 for i in user_lane(int(index), tuple(lanes), tuple(shown)) or ())
    text = format_message(msg, tree, [np.asarray(v)[tuple(at)] for v in values])
    raise CheckError(text, lane or None)


# ------------------------------------------------------------- transformations


@check_p.def_rule("jvp")
def _check_jvp(primals, tangents, **params):
    bind(check_p, *primals, **params)  # the forward values; nothing to differentiate
    return [], []


check_p.def_rule("transpose", Absent("a check has no linear part: reverse mode runs it "
                                     "on the forward values"))


@check_p.def_rule("batch")
def _check_batch(size: int, args, dims, *, msg, tree, axes):
    pred, *values = [materialize(a, d, size) for a, d in zip(args, dims)]
    mask = taking()
    if mask is not None:  # a lane that does not take the branch passes
        shape = type_of_value(pred).shape
        pred = logical_or(pred, logical_not(broadcast_in_dim(mask, shape, (0,))))
    bind(check_p, pred, *values, msg=msg, tree=tree, axes=(axis_lanes(size),) + tuple(axes))
    return [], []
