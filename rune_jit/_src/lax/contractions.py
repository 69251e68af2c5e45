"""lax's contractions: dot, dot_general and the Precision enum, over rune_jit's
dot_general primitive (its derivatives, batching and compiled products).

On the CPU every product is computed in the operands' dtype (float64 by default) at full
precision, so `precision=` is checked and accepted but changes nothing: each Precision
is exact here. `preferred_element_type=` converts the operands to that dtype before the
product, so the result has it.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ..dtypes import check_supported
from ..numpy import _core
from ..ops import linalg as la
from ..trace import type_of_value


class Precision(enum.Enum):
    """lax.Precision: how precisely a product runs on an accelerator. Every value is
    exact on the CPU (products are computed in the operands' own dtype). Strings name
    them as JAX's do ("default", "high", "highest", "bfloat16", "tensorfloat32",
    "float32", "fastest").

    >>> Precision("highest")
    <Precision.HIGHEST: 2>
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: Any) -> Precision | None:
        return SPELLINGS.get(value.lower()) if isinstance(value, str) else None

    def __str__(self) -> str:
        return self.name


SPELLINGS = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
             "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
             "tensorfloat32": Precision.HIGH, "highest": Precision.HIGHEST,
             "float32": Precision.HIGHEST}


def canonical_precision(precision: Any, where: str) -> Any:
    """None, a Precision, or a pair of them, from JAX's spellings (a bad one raises)."""
    if precision is None or isinstance(precision, Precision):
        return precision
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return tuple(canonical_precision(p, where) for p in precision)
    try:
        return Precision(precision)
    except ValueError:
        raise ValueError(f"{where}: precision must be None, a lax.Precision, one of "
                         f"{sorted(SPELLINGS)} or a pair of them, got {precision!r}") from None


def operands(lhs: Any, rhs: Any, preferred_element_type: Any, where: str) -> tuple[Any, Any]:
    """lhs and rhs promoted together (NEP 50), then in preferred_element_type if given."""
    lhs, rhs = (_core.as_value(v) for v in _core.promote(lhs, rhs, where=where))
    if preferred_element_type is not None:
        dtype = check_supported(np.dtype(preferred_element_type), where)
        lhs, rhs = _core.to_dtype(lhs, dtype), _core.to_dtype(rhs, dtype)
    return lhs, rhs


def _axes_of(v: Any, what: str, where: str) -> tuple[int, ...]:
    try:
        return tuple(int(a) for a in v)
    except TypeError:
        raise TypeError(f"{where}: {what} must be a sequence of ints, got {v!r}") from None


def _check_dims(ls: tuple, rs: tuple, dims: Any, where: str) -> tuple:
    """((lc, rc), (lb, rb)) as int tuples, each axis in range and paired sizes equal."""
    try:
        (lc, rc), (lb, rb) = dims
    except (TypeError, ValueError):
        raise TypeError(f"{where}: dimension_numbers must be ((lhs_contracting, "
                        f"rhs_contracting), (lhs_batch, rhs_batch)), got {dims!r}") from None
    lc, rc, lb, rb = (_axes_of(v, n, where) for v, n in (
        (lc, "lhs_contracting"), (rc, "rhs_contracting"), (lb, "lhs_batch"), (rb, "rhs_batch")))
    bad = None
    if len(lc) != len(rc) or len(lb) != len(rb):
        bad = "contracting and batch dimensions must come in pairs"
    elif any(not 0 <= a < len(ls) for a in lc + lb) or any(not 0 <= a < len(rs) for a in rc + rb):
        bad = "a dimension is out of range"
    elif len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb)) != len(rc + rb):
        bad = "a dimension is repeated"
    elif any(ls[i] != rs[j] for i, j in zip(lc + lb, rc + rb)):
        bad = "paired dimensions have different sizes"
    if bad:
        raise TypeError(f"{where}: {bad}: dimension_numbers {((lc, rc), (lb, rb))} for lhs "
                        f"of shape {ls} and rhs of shape {rs}")
    return (lc, rc), (lb, rb)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """lax.dot_general: the sum of products over the contracting dimensions, with the
    batch dimensions shared; the result is laid out as batch, then lhs's free, then
    rhs's free dimensions. `dimension_numbers` is ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch)).

    >>> import numpy as np
    >>> a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
    >>> dot_general(a, b, (((2,), (1,)), ((0,), (0,)))).shape
    (2, 3, 5)
    """
    where = "rune_jit.lax.dot_general"
    canonical_precision(precision, where)
    lhs, rhs = operands(_core.accept(lhs, where), _core.accept(rhs, where),
                        preferred_element_type, where)
    contract, batch = _check_dims(type_of_value(lhs).shape, type_of_value(rhs).shape,
                                  dimension_numbers, where)
    return la.dot_general(lhs, rhs, contract, batch)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None, *,
        dimension_numbers: Any = None, out_sharding: Any = None) -> Any:
    """lax.dot: vector-vector, matrix-vector or matrix-matrix product (lhs's last
    dimension with rhs's first); with `dimension_numbers`, dot_general.

    >>> print(dot(np.array([[1.0, 2.0]]), np.array([3.0, 4.0])))
    [11.]
    """
    where = "rune_jit.lax.dot"
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    ls, rs = (_core.shape_of(_core.as_value(_core.accept(v, where))) for v in (lhs, rhs))
    if len(ls) not in (1, 2) or len(rs) not in (1, 2):
        raise ValueError(f"{where}: takes 1-d or 2-d operands, got lhs of shape {ls} and "
                        f"rhs of shape {rs} (use dot_general for others)")
    return dot_general(lhs, rhs, (((len(ls) - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)

