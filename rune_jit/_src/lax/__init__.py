"""rune_jit.lax's implementation: one module per family of operations."""
