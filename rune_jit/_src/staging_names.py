"""JAX's names about staging that have a direct meaning in rune_jit: the abstract value
of an array, and the scopes that only name code."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

import numpy as np


def typeof(x: Any) -> Any:
    """The shape and dtype of `x`, traced or concrete, as a `rune.ShapeDtypeStruct`
    (JAX's `jax.typeof`, which gives its abstract value).

    >>> rune.typeof(np.ones((2, 3), np.float32))
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    >>> rune.jit(lambda x: print(rune.typeof(x)) or x)(1.0)
    ShapeDtypeStruct(shape=(), dtype=float64)
    array(1.)
    """
    from .transforms import ShapeDtypeStruct

    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapeDtypeStruct(x.shape, x.dtype)
    return ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype)


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` itself, under a name (JAX's names show in its profiles; rune_jit's IR keeps
    the user's source lines instead).

    >>> rune.named_call(lambda x: x + 1, name="inc")(1.0)
    2.0
    """
    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    if name is not None:
        call.__name__ = call.__qualname__ = name
    return call


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A block with a name (JAX's profiler scope); it changes nothing here.

    >>> with rune.named_scope("layer"):
    ...     print(float(rnp.sin(0.0)))
    0.0
    """
    if not isinstance(name, str):
        raise TypeError(f"rune_jit.named_scope: the name must be a str, got {type(name).__name__}")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """A block whose operations on concrete values compute at once, even under `jit`.

    rune_jit always does this: an operation whose operands are all concrete (NumPy
    values, Python numbers) computes with NumPy while tracing, so the block changes
    nothing.

    >>> def f(x):
    ...     with rune.ensure_compile_time_eval():
    ...         n = rnp.arange(3).sum()    # concrete: a NumPy value, even while tracing
    ...     return x * int(n)
    >>> rune.jit(f)(2.0)
    array(6.)
    """
    yield
