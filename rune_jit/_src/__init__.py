"""rune_jit's private core: what the public modules re-export. Nothing here is API."""
