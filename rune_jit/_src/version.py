"""rune_jit's version (its own module: the disk cache keys on it)."""

__version__ = "0.1.0"
