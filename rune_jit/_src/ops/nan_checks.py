"""RUNE_JIT_DEBUG_NANS=1: an operation whose result has a NaN where its operands had none
fails the call with a CheckError naming the operation, the user's line, and (as any
check does) the lane under vmap and the step of each enclosing loop.

Each equation a trace stages with a float result is followed by a check (`check_p`) of
that result, so what runs the program (the interpreter, compiled code and its replay,
every transformation's re-trace) checks it as it checks the user's own; an operation run
eagerly at the user's call is checked on the spot. Loops and other equations with
regions are not checked themselves: the equations of their steps are.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .. import config, options, source_info, trace, tree
from ..errors import CheckError
from ..ir import Region
from ..primitive import Primitive
from ..trace import type_of_value
from .check import check_flat, check_p
from .elementwise import isnan, logical_and, logical_not, logical_or
from .reduce import reduce_max

_state = threading.local()
_NO_VALUES = tree.flatten(((), {}))[1]


def _inexact(x: Any) -> bool:
    t = type_of_value(x)
    return t.dtype.kind in "fc" and t.size > 0


def _watched(prim: Primitive, params: dict) -> bool:
    """Not a check, a view (its elements are its operand's) or a primitive with regions."""
    def region(v: Any) -> bool:
        return isinstance(v, Region) or (isinstance(v, tuple) and any(map(region, v)))

    return (prim is not check_p and "view" not in prim.traits
            and not any(map(region, params.values())))


def message(prim: Primitive) -> str:
    where = source_info.current()
    at = f" at {where.file}:{where.line}" if where is not None else ""
    return f"rune_jit.debug_nans: {prim.name} produced a NaN from operands without one{at}"


def _any_nan(values: Sequence[Any]) -> Any:
    """Whether some element of `values` (traced, float) is a NaN: a bool scalar."""
    found = None
    for v in values:
        nan = reduce_max(isnan(v), range(type_of_value(v).ndim))
        found = nan if found is None else logical_or(found, nan)
    return found


def after_staging(prim: Primitive, args: Sequence[Any], outs: list, params: dict) -> None:
    """An equation of the user's own trace (not one a pass re-traces: its check, staged
    with the user's equation, is re-traced with it, and names the lane)."""
    results = [o for o in outs if _inexact(o)]
    if (not results or getattr(_state, "busy", False) or source_info.given() is not None
            or not _watched(prim, params)):
        return
    _state.busy = True  # the check's own equations are not checked
    try:
        made = _any_nan(results)
        operands = [a for a in args if _inexact(a)]
        if operands:
            made = logical_and(made, logical_not(_any_nan(operands)))
        check_flat(logical_not(made), [], msg=message(prim).replace("{", "{{").replace(
            "}", "}}"), treedef=_NO_VALUES)
    finally:
        _state.busy = False


def after_eager(prim: Primitive, args: Sequence[Any], outs: list) -> None:
    """An operation at the user's call (not one the interpreter runs from a program,
    whose staged checks name the lane and step)."""
    if source_info.given() is not None or not _watched(prim, {}):
        return
    if any(_inexact(o) and np.isnan(o).any() for o in outs) and not any(
            _inexact(a) and np.isnan(np.asarray(a)).any() for a in args):
        raise CheckError(message(prim))


@options.owns("jax_debug_nans")
def _chosen_once(value: bool) -> None:
    """JAX's option may only repeat the process's choice: traces and compiled programs are
    cached without it."""
    if value != config.debug_nans:
        raise ValueError(f"jax_debug_nans={value!r}: rune_jit's NaN checks are chosen once "
                         f"per process, by RUNE_JIT_DEBUG_NANS=1 in the environment before "
                         f"rune_jit is imported (it is {int(config.debug_nans)})")


options.update("jax_debug_nans", config.debug_nans)
if config.debug_nans:
    trace.after_staging, trace.after_eager = after_staging, after_eager
