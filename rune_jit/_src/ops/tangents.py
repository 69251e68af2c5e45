"""Tangents and cotangents as values: zeros made real, and sums that skip symbolic zeros
(what the differentiation passes and the rules build with)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ad_util import Zero
from ..ir import Type


def zeros(type: Type) -> Any:
    """Zeros of `type`, staged as a broadcast of a scalar when tracing."""
    from .shape import full

    return full(type.shape, np.zeros((), type.dtype))


def instantiate(x: Any) -> Any:
    return zeros(x.type) if isinstance(x, Zero) else x


def add_tangents(a: Any, b: Any) -> Any:
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    from .elementwise import add

    return add(a, b)
