"""rune_jit's implementation modules (the public modules re-export from here)."""
