"""How the arguments users pass become leaves: pytrees flattened with the path of each
leaf, each checked (a Tracer, an array of a supported dtype, or a Python number) and
typed. Shared by the transformations (api, jit) and the loops' user functions (ops)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from . import tree
from .dtypes import check_supported, python_scalar_dtype
from .ir import Type
from .numpy._core import array_of, as_value, is_python_scalar  # noqa: F401 (as_value: shared)
from .trace import Tracer, type_of_value


def wraps(f: Callable) -> Callable:
    """functools.wraps without copying `f`'s attributes: a jitted function's attributes
    (its caches, the function it compiles) belong to it, not to what wraps it."""
    return functools.wraps(f, updated=())


class Transformed:
    """What a transformation (`grad`, `vmap`, ...) returns: it calls as the function it
    wraps, and pickles as the transformation applied again to the same function (a
    function made inside another cannot be pickled by name)."""

    def __init__(self, fn: Callable, make: Callable, f: Callable, args: tuple, kwargs: dict):
        self._fn = fn
        self.transformation = (make, f, args, kwargs)
        wraps(f)(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

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
    subclasses other than memmap are rejected (`numpy._core.array_of`)."""
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
    pairs, treedef = tree.flatten_with_path(args)
    paths = [root + p for p, _ in pairs]
    return [check_leaf(x, p) for p, (_, x) in zip(paths, pairs)], treedef, paths


def leaf_type(x: Any) -> tuple[Type, bool]:
    if is_python_scalar(x):
        return Type(python_scalar_dtype(x), ()), True
    if isinstance(x, Tracer):
        return x.type, x.weak
    return type_of_value(x), False


def as_argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    """Argument numbers as a tuple: one int or a sequence of them, as JAX takes them."""
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)
