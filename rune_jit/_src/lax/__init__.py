"""The implementation of `rune_jit.lax`, one module per family: elementwise operations,
shapes, loops and control; contractions, windows, sorting and cumulative operations."""
