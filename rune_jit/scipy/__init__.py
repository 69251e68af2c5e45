"""rune_jit.scipy: SciPy's special functions, statistics and linear algebra on traced and
concrete arrays (`rune_jit.scipy.special`, `.stats`, `.linalg`)."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
