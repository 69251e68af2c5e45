"""rune_jit's implementation modules; the public modules re-export what users call."""
