"""rune_jit.numpy.linalg."""

from .products import solve

__all__ = ["solve"]
