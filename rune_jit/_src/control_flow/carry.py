"""The carry a user's loop step returns: init's structure, shapes and dtypes, checked
(a Python number in init takes the dtype the step gives it, as in JAX)."""

from __future__ import annotations

from typing import Any, Callable

from .. import tree
from ..call.arguments import as_value, leaf_type
from ..ir import Type
from ..ops.elementwise import convert


def check_carry(who: str, init_tree: tree.TreeDef, init_types: list[Type],
                out_tree: tree.TreeDef, out_types: list[Type]) -> None:
    """The carry a step returns must have init's structure, shapes and dtypes."""
    if out_tree != init_tree:
        path, got, want = tree.first_difference(out_tree, init_tree)
        raise TypeError(f"{who}: the step returns a carry of structure {out_tree}, "
                        f"but init has structure {init_tree}: carry{path} is {got} where "
                        f"init{path} is {want}")
    for path, a, b in zip(tree.leaf_paths(init_tree), init_types, out_types):
        if a != b:
            raise TypeError(f"{who}: the step returns carry{path} of type {b}, but "
                            f"init{path} has type {a}")


def promotable(init_types: list[Type], weak: list[bool], out_types: list[Type]) -> bool:
    """A carry given as a Python number takes the dtype its step returns (as in JAX)."""
    return all(a == b or (w and a.shape == b.shape) for a, b, w in
               zip(init_types, out_types, weak)) and init_types != out_types


class UserCarry:
    """The carry of a user's `scan` or `iterate`: init's leaves as values and types, and
    the check that the step returns init's structure and types.

    Only a weak init (a Python number) needs a first trace of the step, to learn the
    dtypes it takes (`promote`); otherwise the step is traced once, and its carry is
    checked while it is traced, before the loop is bound. Tracing the step twice would
    trace the steps of nested loops 2**depth times."""

    def __init__(self, who: str, leaves: list, init_tree: tree.TreeDef):
        self.who, self.tree = who, init_tree
        self.types = [leaf_type(x)[0] for x in leaves]
        self.weak = [leaf_type(x)[1] for x in leaves]
        self.values = [as_value(x) for x in leaves]

    def returned(self, out_tree: tree.TreeDef, out_types: list[Type]) -> None:
        """Called by the step, as it is traced, with the carry it returns."""
        self.returns = (out_tree, out_types)
        if not any(self.weak):  # no first trace checked it
            check_carry(self.who, self.tree, self.types, out_tree, out_types)

    def promote(self, probe: Callable[[list[Type], list[bool]], Any]) -> None:
        """With a weak init, trace the step (`probe(types, weak)`), take the dtypes its
        carry has, and check that carry."""
        if not any(self.weak):
            return
        probe(self.types, self.weak)
        out_tree, out_types = self.returns
        if promotable(self.types, self.weak, out_types):
            # a weak init is a number, or traced (a Python number passed to jit)
            self.values = [convert(v, t.dtype) for v, t in zip(self.values, out_types)]
            self.types = out_types
        check_carry(self.who, self.tree, self.types, out_tree, out_types)
