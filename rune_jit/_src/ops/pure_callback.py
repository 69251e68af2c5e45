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

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes
from .. import tree
from ..ir import Type
from ..passes.vmap import batched_type, hidden_axis
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import Tracer, bind, current, type_of_value
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


def _declared(x: Any, where: str) -> Type:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise TypeError(f"{where} is {x!r}: declare each result as an array or a "
                        "rune.ShapeDtypeStruct (anything with .shape and .dtype)")
    return Type(dtypes.check_supported(x.dtype, where), tuple(int(n) for n in x.shape))


def pure_callback(fn: Callable, result_shape_dtypes: Any, *args: Any,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, a pure Python function of NumPy arrays, called when the
    program runs (now, outside any trace); its result has the structure, shapes and dtypes
    of `result_shape_dtypes` (a pytree of `rune.ShapeDtypeStruct`s, arrays, or anything
    with `.shape` and `.dtype`), which it must match exactly. `vmap_method` says how vmap
    batches it: "sequential", "expand_dims" or "broadcast_all" (as in JAX; the module's
    docstring and docs/debugging.md say more). An exception `fn` raises leaves the
    compiled call as itself.

    >>> def host_sort(x):                  # any NumPy (or SciPy, or C) code
    ...     return np.sort(x)
    >>> f = rune.jit(lambda x: rune.pure_callback(
    ...     host_sort, rune.ShapeDtypeStruct(x.shape, x.dtype), x * 2) + 1)
    >>> f(np.array([3.0, 1.0, 2.0]))
    array([3., 5., 7.])
    """
    if vmap_method is not None and vmap_method not in METHODS:
        raise ValueError(f"pure_callback: vmap_method={vmap_method!r}; it is one of "
                         f"{', '.join(map(repr, METHODS))} or None")
    label = f"pure_callback({getattr(fn, '__name__', 'fn')})"
    shaped, out_tree = tree.flatten(result_shape_dtypes,
                                    is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype"))
    out_types = [_declared(x, f"{label}: result_shape_dtypes{path}")
                 for x, path in zip(shaped, tree.leaf_paths(out_tree))]
    leaves, in_tree = tree.flatten((args, kwargs))
    call = PureCallback(functools.wraps(fn)(lambda a, k: fn(*a, **k)), in_tree, out_tree,
                        out_types, label)
    if current() is None and not any(isinstance(x, Tracer) for x in leaves):
        return tree.unflatten(out_tree, call(*leaves))
    return tree.unflatten(out_tree, bind(pure_callback_p, *leaves, callback=call,
                                         vmap_method=vmap_method))
