"""The primitives. Each module owns every rule of what it defines."""

from . import (complex_parts, control, custom, elementwise, gather, index,  # noqa: F401
               iterate, linalg, reduce, remat, root, scan, shape, sort, tangent_solve)
from . import callback, pure_callback  # noqa: F401  (calls into Python)
from . import check, nan_checks  # noqa: F401  (run-time checks; RUNE_JIT_DEBUG_NANS)
from . import repeated_layers  # noqa: F401  (repeated layers traced as a loop)
from . import decomp  # noqa: F401  (cholesky, triangular_solve, lu, eigh, qr, svd)
from . import fft  # noqa: F401  (pocketfft)
