"""lax's prefix operations: cumsum, cumprod, cummax, cummin (rune_jit's cumulative
primitive, with its derivatives) and cumlogsumexp (a scan of logaddexp, stable for any
spread of values), along `axis`, from the end with `reverse=True`. The dtype is the
operand's (lax does not widen integers as NumPy's cumsum does). cummax and cummin split
the derivative equally between tied values.
"""

from __future__ import annotations

from typing import Any, Callable

from ..numpy import _core
from ..numpy.ufuncs import logaddexp
from ..control_flow import scan
from ..ops.shape import concatenate, moveaxis, reshape, rev, slice_op
from ..ops.sort import cumulative
from ..trace import type_of_value


def _prepared(operand: Any, axis: int, where: str) -> tuple[Any, int]:
    x = _core.as_value(_core.accept(operand, where))
    shape = type_of_value(x).shape
    if not shape:
        raise TypeError(f"{where}: the operand must have at least one dimension")
    return x, _core.normalize_axis(int(axis), len(shape), where)


def _prefix(op: str, doc: str) -> Callable:
    where = f"rune_jit.lax.cum{op}"

    def f(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        x, ax = _prepared(operand, axis, where)
        return cumulative(x, ax, op, bool(reverse))

    f.__name__ = f.__qualname__ = f"cum{op}"
    f.__doc__ = doc
    return f


cumsum = _prefix("sum", """The running sum along `axis` (lax.cumsum).

    >>> import numpy as np
    >>> print(cumsum(np.array([1.0, 2.0, 3.0]), reverse=True))
    [6. 5. 3.]
    """)
cumprod = _prefix("prod", """The running product along `axis` (lax.cumprod).

    >>> print(cumprod(np.array([1.0, 2.0, 3.0])))
    [1. 2. 6.]
    """)
cummax = _prefix("max", """The running maximum along `axis` (lax.cummax).

    >>> print(cummax(np.array([1.0, 3.0, 2.0])))
    [1. 3. 3.]
    """)
cummin = _prefix("min", """The running minimum along `axis` (lax.cummin).

    >>> print(cummin(np.array([3.0, 1.0, 2.0])))
    [3. 1. 1.]
    """)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running log(sum(exp(x))) along `axis` (lax.cumlogsumexp), by a scan of
    logaddexp: no overflow for large values, no -inf for values far below the largest.

    >>> print(np.round(cumlogsumexp(np.array([0.0, 1000.0, 0.0])), 4))
    [   0. 1000. 1000.]
    """
    where = "rune_jit.lax.cumlogsumexp"
    x, ax = _prepared(operand, axis, where)
    if type_of_value(x).dtype.kind != "f":
        raise TypeError(f"{where}: the operand must be floating, got "
                        f"{type_of_value(x).dtype.name}")
    rows = moveaxis(x, ax, 0)
    rows = rev(rows, (0,)) if reverse else rows
    shape = type_of_value(rows).shape
    if shape[0] > 1:
        head = slice_op(rows, (0,) * len(shape), (1,) + shape[1:])

        def step(carry: Any, row: Any) -> tuple[Any, Any]:
            out = logaddexp(carry, row)
            return out, out

        tail = slice_op(rows, (1,) + (0,) * (len(shape) - 1), shape)
        _, rest = scan(step, reshape(head, shape[1:]), tail)
        rows = concatenate([head, rest], 0)
    rows = rev(rows, (0,)) if reverse else rows
    return moveaxis(rows, 0, ax)
