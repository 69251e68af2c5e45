"""Symbolic zeros and undefined primals: what the differentiation passes pass around."""

from __future__ import annotations

from typing import Any, Sequence


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


def nonzero(ts: Sequence[Any]) -> list[bool]:
    """Which of the tangents `ts` may be nonzero."""
    return [not isinstance(t, Zero) for t in ts]


def live(ts: Sequence[Any]) -> list:
    """The tangents of `ts` that may be nonzero: the ones a transformed region takes."""
    return [t for t in ts if not isinstance(t, Zero)]
