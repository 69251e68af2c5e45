"""The primitives. Each module owns every rule of what it defines."""

from . import (control, custom, elementwise, gather, index, iterate, linalg,  # noqa: F401
               reduce, remat, root, scan, shape, sort)
from . import callback, pure_callback  # noqa: F401  (calls into Python)
from . import decomp  # noqa: F401  (cholesky, triangular_solve, lu, eigh, qr, svd)
from .segment import segment_max, segment_min, segment_sum  # noqa: F401 (jax.ops's names)
