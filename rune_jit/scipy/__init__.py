"""rune_jit.scipy: SciPy's special functions, statistics and linear algebra on traced and
concrete arrays (`rune_jit.scipy.special`, `.stats`, `.linalg`, `.sparse.linalg`)."""

from . import linalg, sparse, special, stats

__all__ = ["linalg", "sparse", "special", "stats"]
