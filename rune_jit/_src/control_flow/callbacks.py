"""The user's calls into Python from staged code: `debug.callback` (for effects) and
`pure_callback` (for values), over the primitives of ops/callback.py and
ops/pure_callback.py."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .. import dtypes, tree
from ..ir import Type
from ..ops.callback import Callback, debug_callback_p
from ..ops.pure_callback import METHODS, PureCallback, pure_callback_p
from ..trace import Tracer, bind, current


def debug_callback(fn: Callable, *args: Any, **kwargs: Any) -> None:
    """Call `fn(*args, **kwargs)` for its effects when the program runs: now, outside
    any trace; else from the staged program, each time it reaches this point.

    >>> rune.jit(lambda x: (rune.debug.callback(lambda v: print("x is", v), x), x * 2)[1])(
    ...     np.arange(3.0))
    x is [0. 1. 2.]
    array([0., 2., 4.])
    """
    leaves, in_tree = tree.flatten((args, kwargs))
    call = Callback(lambda a, k: fn(*a, **k), in_tree)
    if current() is None and not any(isinstance(x, Tracer) for x in leaves):
        call(*leaves)
        return
    bind(debug_callback_p, *leaves, callback=call)


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
