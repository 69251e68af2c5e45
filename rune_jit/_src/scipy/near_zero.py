"""gammaln and digamma next to their zeros on (-20, -1/4]: the Taylor series around the
zero of the lane's cell (tools/negative_zeros.py's table, negative_zeros.py), its
coefficients read per lane by gathers, so the loop stays vectorized (selects of
constants lane by lane keep LLVM from vectorizing it). docs/accuracy.md says why and
where.

    >>> import numpy as np
    >>> from rune_jit._src.scipy.negative_zeros import DIGAMMA
    >>> inside, value = near_zero(np.array([-1.5734984731623904]), np.array([2.0]), DIGAMMA)
    >>> print(bool(inside[0]), abs(float(value[0])) < 1e-15)
    True True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as rnp
from ..ops import elementwise as ew
from ..ops.gather import gather
from .double_double import fma_horner, two_prod

I64 = np.dtype(np.int64)
TWO52 = 2.0 ** 52
TWO52_BITS = 0x4330000000000000


def _column(values, index: Any) -> Any:
    return gather(rnp.asarray(np.asarray(values, np.float64)), [index], mode="clip")


def near_zero(x: Any, cell: Any, table: dict) -> tuple[Any, Any]:
    """(whether x is within the width of its cell's zero r, the series' value there):
    t c1 + t² Q(u), t = x - r (r's hi: exact, Sterbenz, as |t| <= width << |r|; r's lo
    and c1's as the double-double's terms), u = t / s exact (s a power of 2), rounded
    once. `cell` a whole float in [0, 2^51) (out of the table's range: clipped)."""
    # the index's bits from the float's (a vector conversion to int64 needs AVX-512)
    index = ew.bitcast_convert(cell + TWO52, I64) - np.int64(TWO52_BITS)
    t = x - _column(table["r"][0], index)
    inside = rnp.abs(t) <= _column(table["width"], index)
    t_lo = -_column(table["r"][1], index)
    # with r's lo: t² Q's slope 2 t Q is not small next to c1 (digamma's c2 t / c1 ~ 1/8)
    u = (t + t_lo) * _column(table["inverse_scale"], index)
    c1_hi = _column(table["c1"][0], index)
    hi, err = two_prod(t, c1_hi)
    coefs = [_column(c, index) for c in table["coefs"]]
    lo = err + (t * _column(table["c1"][1], index) + t_lo * c1_hi
                + u * (u * fma_horner(u, coefs)))
    return inside, hi + lo
