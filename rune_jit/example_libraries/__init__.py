"""JAX's `example_libraries`, written for rune_jit: `optimizers` and `stax`."""

from . import optimizers, stax

__all__ = ["optimizers", "stax"]
