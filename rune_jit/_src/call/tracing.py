"""Tracing a call: the user's function, given its arguments' leaves and structure, as a
closed region (captures become leading inputs), its output structure, and the weak ints
to check at each call."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from .. import tree
from ..ir import Region, Type
from ..trace import current, trace_closed
from ..values import as_value
from .arguments import flatten_args, leaf_type
from .weak_ints import WeakIntChecks, collecting_weak_ints


class Traced(NamedTuple):
    region: Region  # closed: (captures..., leaves...) -> output leaves
    captures: list
    out_tree: tree.TreeDef
    checks: WeakIntChecks | None = None

    def check(self, leaves: Sequence[Any]) -> None:
        """Check the weak ints the trace converted (see WeakIntChecks), given the leaves
        it was traced for."""
        if self.checks is not None:
            self.checks.check(self.captures + list(leaves))


def trace_fn(f: Callable, leaves: Sequence[Any], in_tree: tree.TreeDef,
             types: Sequence[Type] | None = None, root: str = "output",
             has_pair: bool = False) -> Traced:
    """Trace `f(*args)` where `args` is `in_tree` filled with leaves of `types`. Callers
    that evaluate the result call its `check` first."""
    typed = [leaf_type(x) for x in leaves]
    types = list(types) if types is not None else [t for t, _ in typed]
    out_box: list[tree.TreeDef] = []
    converted: list = []

    def flat(*xs):
        with collecting_weak_ints(current(), converted):
            out = f(*tree.unflatten(in_tree, xs))
        # a pair (output, aux) is checked as "output..." and "aux...", not "output[0]..."
        parts = [(out[0], root), (out[1], "aux")] if has_pair else [(out, root)]
        checked = [flatten_args(o, name) for o, name in parts]
        out_box.append(tree.flatten(out)[1] if has_pair else checked[0][1])
        return [as_value(o) for leaves_, _, _ in checked for o in leaves_]

    region, caps = trace_closed(flat, types, [w for _, w in typed])
    return Traced(region, caps, out_box[0], WeakIntChecks.of(region, converted))


def with_args(f: Callable, args: tuple, nums: tuple[int, ...], kwargs: dict) -> Callable:
    def fn(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return f(*full, **kwargs)

    return fn
