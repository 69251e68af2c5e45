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


def _flat(table: dict) -> tuple[np.ndarray, int]:
    """The table's columns end to end (r's hi and lo, width, 1/s, c1's hi and lo, then
    the polynomial's, highest power first), and its number of rows."""
    columns = [table["r"][0], table["r"][1], table["width"], table["inverse_scale"],
               table["c1"][0], table["c1"][1], *table["coefs"]]
    return np.concatenate([np.asarray(c, np.float64) for c in columns]), len(columns[0])


def near_zero(x: Any, cell: Any, table: dict) -> tuple[Any, Any]:
    """(whether x is within the width of its cell's zero r, the series' value there):
    t c1 + t² Q(u), t = x - r (r's hi: exact, Sterbenz, as |t| <= width << |r|; r's lo
    and c1's as the double-double's terms), u = t / s exact (s a power of 2), rounded
    once. `cell` a whole float in [0, 2^51) (out of the table's range: clipped)."""
    flat, rows = _flat(table)
    # the index's bits from the float's (a vector conversion to int64 needs AVX-512)
    index = ew.bitcast_convert(cell + TWO52, I64) - np.int64(TWO52_BITS)
    index = rnp.clip(index, np.int64(0), np.int64(rows - 1))
    # one table, read at index + rows j: a table each would be a pointer each (past about
    # 16, LLVM's loop stops being one vector loop: 3 times slower); and every row's index
    # computed before the reads, so that ops/repeated_layers.py does not fold the Horner
    # steps into a scan (it takes a gather for an operation that ends fusion)
    at = [index + np.int64(rows * j) for j in range(flat.size // rows)]
    flat = rnp.asarray(flat)
    r_hi, r_lo, width, inverse_scale, c1_hi, c1_lo, *coefs = (
        gather(flat, [i], mode="clip") for i in at)
    t = x - r_hi
    # with r's lo: t² Q's slope 2 t Q is not small next to c1 (digamma's c2 t / c1 ~ 1/8)
    u = (t - r_lo) * inverse_scale
    hi, err = two_prod(t, c1_hi)
    lo = err + (t * c1_lo - r_lo * c1_hi + u * (u * fma_horner(u, coefs)))
    return rnp.abs(t) <= width, hi + lo
