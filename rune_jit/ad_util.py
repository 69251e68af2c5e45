"""Symbolic zeros and undefined primals: what the differentiation passes pass around."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .ir import Type


class Zero:
    """A tangent or cotangent known to be zero: costs nothing until instantiated."""

    __slots__ = ("type",)

    def __init__(self, type: Type):
        self.type = type

    def __repr__(self) -> str:
        return f"Zero({self.type})"


class UndefinedPrimal:
    """A linear input of an equation being transposed: its value is not known."""

    __slots__ = ("type",)

    def __init__(self, type: Type):
        self.type = type

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.type})"


def is_zero(x: Any) -> bool:
    return isinstance(x, Zero)


def is_undefined(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)


def zeros(type: Type):
    """Zeros of `type`, staged as a broadcast of a scalar when tracing."""
    from .ops.shape import full

    return full(type.shape, np.zeros((), type.dtype))


def nonzero(ts: Sequence[Any]) -> list[bool]:
    """Which of the tangents `ts` may be nonzero."""
    return [not isinstance(t, Zero) for t in ts]


def live(ts: Sequence[Any]) -> list:
    """The tangents of `ts` that may be nonzero: the ones a transformed region takes."""
    return [t for t in ts if not isinstance(t, Zero)]


def instantiate(x: Any):
    return zeros(x.type) if isinstance(x, Zero) else x


def add_tangents(a: Any, b: Any) -> Any:
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    from .ops.elementwise import add

    return add(a, b)

