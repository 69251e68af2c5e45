"""lax's sorting: sort (one operand or several, by the first num_keys), sort_key_val,
top_k and approx_max_k/approx_min_k, over rune_jit's sort primitive.

Sorts are stable whatever `is_stable` says, NaNs last (first for the largest-first
top_k), as NumPy's; -0.0 and 0.0 are equal keys (JAX's total order puts -0.0 first).
Several keys sort lexicographically by repeated stable sorts, from the last key to the
first; the other operands follow the permutation. Derivatives flow to the selected
values, through the gathers that apply the permutation. approx_max_k and approx_min_k
are exact here: they return the true top k, which meets any `recall_target`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..numpy import _core
from ..ops.elementwise import convert
from ..ops.shape import moveaxis, slice_op
from ..ops.sort import sort as sort_last
from ..ops.sort import take_last
from ..trace import type_of_value

INDEX = np.dtype(np.int32)


def _operand(x: Any, where: str) -> Any:
    return _core.as_value(_core.accept(x, where))


def _permutation(keys: Sequence[Any]) -> Any:
    """The permutation that sorts the rows of `keys` (last axis) lexicographically."""
    perm = None
    for key in reversed(keys):
        _, step = sort_last(key if perm is None else take_last(key, perm))
        perm = step if perm is None else take_last(perm, step)
    return perm


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """lax.sort: `operand` sorted along `dimension`; for a tuple of operands of one
    shape, all of them in the order that sorts the first `num_keys` lexicographically.

    >>> import numpy as np
    >>> keys, vals = sort((np.array([2, 1, 2]), np.array([0.0, 1.0, 2.0])))
    >>> print(keys, vals)
    [1 2 2] [1. 0. 2.]
    """
    where = "rune_jit.lax.sort"
    single = not isinstance(operand, (tuple, list))
    xs = [_operand(x, where) for x in ([operand] if single else operand)]
    shapes = {type_of_value(x).shape for x in xs}
    if len(shapes) != 1:
        raise TypeError(f"{where}: operands must all have one shape, got {sorted(shapes)}")
    ndim = len(shapes.pop())
    if ndim == 0:
        raise TypeError(f"{where}: a 0-d operand has no dimension to sort along")
    if not 1 <= int(num_keys) <= len(xs):
        raise ValueError(f"{where}: num_keys={num_keys} must be between 1 and the number "
                         f"of operands ({len(xs)})")
    ax = _core.normalize_axis(int(dimension), ndim, where)
    rows = [moveaxis(x, ax, ndim - 1) for x in xs]
    if len(xs) == 1:
        out = [sort_last(rows[0])[0]]
    else:
        perm = _permutation(rows[:int(num_keys)])
        out = [take_last(r, perm) for r in rows]
    out = [moveaxis(y, ndim - 1, ax) for y in out]
    return out[0] if single else tuple(out)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Any, Any]:
    """lax.sort_key_val: `keys` sorted along `dimension`, and `values` in their order.

    >>> k, v = sort_key_val(np.array([3.0, 1.0, 2.0]), np.array([0, 1, 2]))
    >>> print(k, v)
    [1. 2. 3.] [1 2 0]
    """
    return sort((keys, values), dimension, is_stable, 1)


def _select_k(operand: Any, k: int, axis: int, largest: bool, where: str) -> tuple[Any, Any]:
    """The k largest (or smallest) entries along `axis` in order, and their int32
    indices; ties go to the lower index."""
    x = _operand(operand, where)
    shape = type_of_value(x).shape
    if not shape:
        raise TypeError(f"{where}: the operand must have at least one dimension")
    ax = _core.normalize_axis(int(axis), len(shape), where)
    if not 0 <= int(k) <= shape[ax]:
        raise ValueError(f"{where}: k={k} must be between 0 and the operand's size "
                         f"{shape[ax]} along axis {ax}")
    row = moveaxis(x, ax, len(shape) - 1)
    values, perm = sort_last(row, descending=largest)
    lead = type_of_value(row).shape[:-1]
    values, perm = (slice_op(v, (0,) * len(shape), lead + (int(k),)) for v in (values, perm))
    return (moveaxis(values, len(shape) - 1, ax),
            convert(moveaxis(perm, len(shape) - 1, ax), INDEX))


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """lax.top_k: the k largest entries along `axis` (last by default), largest first,
    and their int32 indices; equal values keep their order (lower index first).

    >>> v, i = top_k(np.array([1.0, 3.0, 2.0, 3.0]), 2)
    >>> print(v, i)
    [3. 3.] [1 3]
    """
    return _select_k(operand, k, axis, True, "rune_jit.lax.top_k")


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """lax.approx_max_k, exact: the k largest entries along `reduction_dimension` and
    their int32 indices, as top_k.

    >>> print(approx_max_k(np.array([1.0, 3.0, 2.0]), 2)[0])
    [3. 2.]
    """
    return _select_k(operand, k, reduction_dimension, True, "rune_jit.lax.approx_max_k")


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """lax.approx_min_k, exact: the k smallest entries along `reduction_dimension`,
    smallest first, and their int32 indices.

    >>> print(approx_min_k(np.array([1.0, 3.0, 2.0]), 2)[1])
    [0 2]
    """
    return _select_k(operand, k, reduction_dimension, False, "rune_jit.lax.approx_min_k")
