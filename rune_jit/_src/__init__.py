"""rune_jit's implementation modules; the public modules of `rune_jit` re-export from here."""
