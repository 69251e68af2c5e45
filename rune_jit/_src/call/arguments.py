"""How the arguments users pass become leaves: pytrees flattened with the path of each
leaf, each checked (a Tracer, an array of a supported dtype, or a Python number) and
typed. Shared by the transformations (api, jit) and the loops' user functions (ops)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .. import eager, tree
from ..dtypes import SUPPORTED, check_supported, python_scalar_dtype
from ..ir import Type
from ..trace import Tracer, type_of_value
from ..tracebacks import hidden
from ..values import array_of, as_value, is_python_scalar  # noqa: F401 (as_value: shared)


def wraps(f: Callable) -> Callable:
    """functools.wraps without copying `f`'s attributes: a jitted function's attributes
    (its caches, the function it compiles) belong to it, not to what wraps it."""
    return functools.wraps(f, updated=())


class Transformed:
    """What a transformation (`grad`, `vmap`, ...) returns: it calls as the function it
    wraps, and pickles as the transformation applied again to the same function (a
    function made inside another cannot be pickled by name).

    Called outside jit, it runs through the eager cache (eager_cache.py): the function
    the transformation made traces the positional arguments its `argnums` attribute
    names (all of them if it has none) and takes the others as they are. Its call is an
    API boundary (tracebacks.py), so that the function it wraps need not be one (making
    a transformed function costs a few µs, and `rune.grad(f)(x)` makes one each call)."""

    def __init__(self, fn: Callable, make: Callable, f: Callable, args: tuple, kwargs: dict):
        self._fn = fn
        self.transformation = (make, f, args, kwargs)
        wraps(f)(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            out = eager.cached_transformation(self, args, kwargs)
            return self._fn(*args, **kwargs) if out is eager.NOT_CACHED else out
        except Exception as err:
            raise hidden(err)  # noqa: B904 (itself)

    def __reduce__(self) -> tuple:
        make, f, args, kwargs = self.transformation
        return functools.partial(make, **kwargs), (f, *args)

    def __repr__(self) -> str:
        make, f, _, _ = self.transformation
        return f"rune_jit.{make.__name__}({f!r})"


def transformation(make: Callable) -> Callable:
    """`make(f, ...)`, whose result is a Transformed (picklable).

    >>> import pickle
    >>> g = pickle.loads(pickle.dumps(rune.grad(np.sin)))
    >>> g, float(g(0.0))
    (rune_jit.grad(<ufunc 'sin'>), 1.0)
    """
    @functools.wraps(make)
    def transform(f: Callable, *args: Any, **kwargs: Any) -> Transformed:
        return Transformed(make(f, *args, **kwargs), transform, f, args, kwargs)

    return transform


def check_leaf(x: Any, where: str) -> Any:
    """An accepted leaf: a Tracer, an array of a supported dtype, or a Python number.
    Array-likes (objects with __array__ or __dlpack__) become ndarrays; ndarray
    subclasses other than memmap are rejected (`values.array_of`)."""
    if isinstance(x, Tracer):
        return x
    if is_python_scalar(x):
        python_scalar_dtype(x)  # raises for an int beyond int64
        return x
    arr = array_of(x, where)
    if arr is not None:
        check_supported(arr.dtype, where)
        return arr
    raise TypeError(f"{where} is a {type(x).__name__}, not an array or a number")


def flatten_args(args: Any, root: str) -> tuple[list, tree.TreeDef, list[str]]:
    flat, treedef = tree.flatten(args)
    paths = [root + p for p in tree.leaf_paths(treedef)]
    return [check_leaf(x, p) for p, x in zip(paths, flat)], treedef, paths


def leaf_type(x: Any) -> tuple[Type, bool]:
    if is_python_scalar(x):
        return Type(python_scalar_dtype(x), ()), True
    if isinstance(x, Tracer):
        return x.type, x.weak
    return type_of_value(x), False


def as_argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    """Argument numbers as a tuple: one int or a sequence of them, as JAX takes them."""
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def checked_argnums(argnums: int | Sequence[int], nargs: int, who: str) -> tuple[int, ...]:
    """`argnums` as non-negative positions among `nargs` arguments; a ValueError names
    `who` if one is out of range."""
    nums = as_argnums(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"{who}: argnums {argnums} is out of range for {nargs} arguments")
    return tuple(a % nargs for a in nums)


# ------------------------------------------------------------- the quick path of calls
#
# What jit and the eager caches key a call on, made without the general path's work
# (paths, checks, Types) for the arguments most calls pass: exact ndarrays and NumPy
# scalars of supported dtypes, Python numbers, and tuples, lists, dicts and None of them.

_SCALARS = {np.dtype(d).type for d in SUPPORTED}  # np.float64, np.int8, ...
_SUPPORTED = frozenset(SUPPORTED)
_INT64 = (-(2**63), 2**63)


def quick_flatten(args: Any) -> tuple[tuple, list] | None:
    """(a key, the leaves) of `args`, if it holds only such values; else None (the
    general path, which knows every other case and its error). Two calls with equal keys
    have equal structures, leaf dtypes and shapes, and the same weak leaves.

    >>> key, leaves = quick_flatten((np.zeros(2), {"n": 2.0}))
    >>> len(leaves), quick_flatten([np.array(["text"])])
    (2, None)
    """
    key: list = []
    leaves: list = []
    return (tuple(key), leaves) if _into(args, key, leaves) else None


def _into(x: Any, key: list, leaves: list) -> bool:
    t = type(x)
    if t is tuple or t is list:
        key.append((t, len(x)))
        items = x
    elif t is dict:
        try:
            names = sorted(x)
        except TypeError:  # keys that do not sort: the general path says so
            return False
        key.append((dict, tuple(names)))
        items = [x[k] for k in names]
    elif x is None:
        key.append(None)
        return True
    else:
        return _leaf(x, t, key, leaves)
    for c in items:  # the common leaves here, the rest through a call (it costs)
        tc = type(c)
        if tc is np.ndarray and c.dtype in _SUPPORTED:
            key.append((c.dtype, c.shape))
            leaves.append(c)
        elif tc is float or tc is bool:
            key.append(tc)
            leaves.append(c)
        elif not _into(c, key, leaves):
            return False
    return True


def _leaf(x: Any, t: type, key: list, leaves: list) -> bool:
    if t is np.ndarray:
        if x.dtype not in _SUPPORTED:
            return False
        key.append((x.dtype, x.shape))
    elif t is float or t is bool or t in _SCALARS:
        key.append(t)
    elif t is int:
        if not _INT64[0] <= x < _INT64[1]:
            return False
        key.append(t)
    else:
        return False
    leaves.append(x)
    return True
