"""rune_jit's implementation modules behind public faces that only re-export
(`rune_jit.lax` re-exports `rune_jit._src.lax`). Import the public modules, not these."""
