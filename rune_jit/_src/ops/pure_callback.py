"""Calls into Python for values: JAX's `pure_callback`. The `pure_callback` primitive's
operands are the flat leaves of the function's arguments and its outputs have the types
the caller declared; its `callback` param (a PureCallback) calls the function and checks
each leaf of what it returns against them: the same shape and the same dtype, exactly
(JAX's rule: a Python scalar or list goes through np.asarray first, and is not cast).

The function is taken to be pure, so the call is not an effect: one whose results nothing
reads is removed, one whose arguments are constants may run while tracing, and one in a
loop step that reads no carry may run before the loop (docs/debugging.md). It has no
derivative (custom_jvp and custom_vjp give it one). Under vmap, `vmap_method` says how it
batches, with JAX's meanings:

    "sequential"     fn once per lane, its results stacked
    "expand_dims"    fn once: batched arguments lead with the batch axis, the others
                     with an axis of 1; its results lead with the batch axis
    "broadcast_all"  the same, every argument broadcast along the batch axis
    None             an error: vmap must be told (scan fission, which maps a loop's
                     steps, not a user's lanes, calls sequentially)
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import tree
from ..ir import Type
from ..passes.vmap import batched_type, hidden_axis
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import bind, type_of_value
from .callback import Callback, flat_tree
from .shape import broadcast_in_dim

pure_callback_p = Primitive("pure_callback")
METHODS = ("sequential", "expand_dims", "broadcast_all")


class PureCallback(Callback):
    """A callback whose results are the leaves of `out_tree`, of types `out_types`;
    `label` names it in errors, `hint` adds what a batched one's function must return."""

    def __init__(self, fn: Callable, in_tree: tree.TreeDef, out_tree: tree.TreeDef,
                 out_types: Sequence[Type], label: str, hint: str = ""):
        super().__init__(fn, in_tree)
        self.out_tree, self.out_types = out_tree, tuple(out_types)
        self.label, self.hint = label, hint

    def __call__(self, *leaves: Any) -> list[np.ndarray]:
        found: list = []
        _up_to(self.out_tree, self.call(leaves), "", found, self.label)
        return [self._checked(value, want, path)
                for (path, value), want in zip(found, self.out_types)]

    def _checked(self, value: Any, want: Type, path: str) -> np.ndarray:
        a = np.array(value)  # a copy: the function may keep, and change, what it returned
        if a.shape != want.shape or a.dtype != want.dtype:
            got = f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
            raise TypeError(f"{_result(self.label, path)} is {got}, declared {want}{self.hint}")
        return a

    def batched(self, size: int, method: str) -> PureCallback:
        """This callback on arguments that lead with a batch axis, its results too."""
        return PureCallback(self.fn, self.in_tree, self.out_tree,
                            [batched_type(t, size) for t in self.out_types], self.label,
                            f" (under vmap with vmap_method={method!r}, fn returns its "
                            "results with the batch axis first)")

    def per_lane(self, size: int, dims: Sequence[int | None]) -> PureCallback:
        """This callback called on each lane of its arguments (along axis 0 of those
        `dims` batches), in order, its results stacked."""
        types = [batched_type(t, size) for t in self.out_types]

        def lanes(*leaves):
            outs = [np.empty(t.shape, t.dtype) for t in types]
            for i in range(size):
                row = self(*[x if d is None else x[i] for x, d in zip(leaves, dims)])
                for out, r in zip(outs, row):
                    out[i] = r
            return tuple(outs)

        return PureCallback(lanes, flat_tree(len(dims)), flat_tree(len(types)), types,
                            self.label)


def _up_to(td: tree.TreeDef, value: Any, path: str, out: list, label: str) -> None:
    """Append (path, subtree of `value`) for each leaf of `td`, which must be a prefix of
    value's structure: a declared array may come back as a list, or a Python scalar."""
    if td.kind is None:
        out.append((path, value))
        return
    kids, shape = tree.flatten(value, is_leaf=lambda x: x is not value)  # one level
    if shape.kind is not td.kind or len(kids) != len(td.children()) or shape.aux != td.aux:
        raise TypeError(f"{_result(label, path)} has structure {shape}, declared {td}")
    for kid, key, child in zip(kids, td.keys, td.children()):
        _up_to(child, kid, path + str(key), out, label)


def _result(label: str, path: str) -> str:
    """'pure_callback(f): result [1]['w']', or '...: result' for the whole of it."""
    return f"{label}: result {path}" if path else f"{label}: result"


@pure_callback_p.def_rule("shape")
def _shape(*types: Type, callback: PureCallback, vmap_method: str | None) -> list[Type]:
    return list(callback.out_types)


@pure_callback_p.def_rule("impl")
def _impl(*args, callback: PureCallback, vmap_method: str | None) -> list:
    return callback(*args)


# the jvp pass calls no rule for an equation whose tangents are all zero: only a
# derivative that flows through the callback meets this
pure_callback_p.def_rule("jvp", Absent(
    "not differentiable: give the function that calls it derivatives with rune.custom_jvp "
    "or rune.custom_vjp"))
pure_callback_p.def_rule("transpose", NOT_LINEAR)


@pure_callback_p.def_rule("batch")
def _batch(size: int, args, dims, *, callback: PureCallback, vmap_method: str | None):
    method = vmap_method or ("sequential" if hidden_axis() else None)
    if method is None:
        raise NotImplementedError(
            f"{callback.label} under vmap needs a vmap_method: 'sequential' (fn once per "
            "lane), 'expand_dims' or 'broadcast_all' (fn once, on arguments with a leading "
            "batch axis), as in JAX")
    if method == "sequential":
        call = callback.per_lane(size, dims)
    else:
        n = size if method == "broadcast_all" else 1
        args = [x if d is not None else _leading(x, n) for x, d in zip(args, dims)]
        call = callback.batched(size, method)
    outs = bind(pure_callback_p, *args, callback=call, vmap_method=vmap_method)
    return outs, [0] * len(outs)


def _leading(x: Any, n: int) -> Any:
    """`x` broadcast along a new leading axis of `n`."""
    shape = type_of_value(x).shape
    return broadcast_in_dim(x, (n,) + shape, tuple(range(1, 1 + len(shape))))


