"""rune_jit.scipy: SciPy's special functions, statistics and linear algebra on traced and
concrete arrays (`rune_jit.scipy.special`, `.stats`, `.linalg`, `.sparse.linalg`)."""

from .._src.scipy import linalg, special, stats
from . import sparse

__all__ = ["linalg", "sparse", "special", "stats"]
