"""The implementation of rune_jit.scipy's linalg, special and stats (the public modules
re-export it)."""
