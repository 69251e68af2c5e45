"""Calls into Python from staged code, for their effects (printing, logging): the
`debug_callback` primitive. It has no outputs and is never removed as dead code; its
operands are the flat leaves of the callback's arguments, its `callback` param the
Python function and the pytree that rebuilds them.

Under jvp and reverse mode it calls with the primal values (in the forward pass);
under vmap it calls once per lane, in lane order, as JAX's debug callbacks do.
"""

from __future__ import annotations

import itertools
import os
import uuid
from typing import Any, Callable, Sequence

import numpy as np

from .. import eager, tree
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind

debug_callback_p = Primitive("debug_callback", traits=frozenset({"effect", "ordered"}))
_ids = itertools.count()
_PROCESS = uuid.uuid4().hex[:12]  # no two processes' callbacks share a name


class Callback:
    """A Python function called with the arguments a pytree of leaves rebuilds. Its
    `name` is unique to this process and call site, so that a program holding it is
    never the same program as another process's (nor cached on disk: docs/debugging.md).
    Called, it returns its results' leaves, of types `out_types`: none here, as a debug
    callback's result is dropped (ops/pure_callback.py's have results)."""

    out_types: tuple[Type, ...] = ()

    def __init__(self, fn: Callable, in_tree: tree.TreeDef):
        self.fn, self.in_tree = fn, in_tree
        self.id = next(_ids)
        self.name = f"{getattr(fn, '__name__', 'callback')}#{self.id}@{_PROCESS}.{os.getpid()}"

    def call(self, leaves: Sequence[Any]) -> Any:
        """What the function returns for these leaves (as NumPy arrays)."""
        return self.fn(*tree.unflatten(self.in_tree, [np.asarray(x) for x in leaves]))

    def __call__(self, *leaves: Any) -> list[np.ndarray]:
        self.call(leaves)
        return []

    def __repr__(self) -> str:
        return self.name


@debug_callback_p.def_rule("shape")
def _shape(*types: Type, callback: Callback) -> list[Type]:
    return []


@debug_callback_p.def_rule("impl")
def _impl(*args, callback: Callback) -> list:
    if eager.replayed():  # a failed compiled call, run again: it has called already
        return []
    return callback(*args)


@debug_callback_p.def_rule("jvp")
def _jvp(primals, tangents, *, callback: Callback):
    bind(debug_callback_p, *primals, callback=callback)
    return [], []


debug_callback_p.def_rule("transpose", NOT_LINEAR)


@debug_callback_p.def_rule("batch")
def _batch(size: int, args, dims, *, callback: Callback):
    def per_lane(*leaves):
        for i in range(size):
            callback(*[x if d is None else np.take(x, i, axis=d) for x, d in zip(leaves, dims)])

    bind(debug_callback_p, *args, callback=Callback(per_lane, flat_tree(len(args))))
    return [], []


def flat_tree(n: int) -> tree.TreeDef:
    """The pytree of n leaves passed positionally."""
    return tree.flatten(tuple(range(n)))[1]


