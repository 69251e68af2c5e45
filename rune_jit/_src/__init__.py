"""rune_jit's implementation modules: what the public modules (rune_jit.numpy, ...)
re-export. Nothing here is public API by its path."""
