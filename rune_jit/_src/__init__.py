"""rune_jit._src: implementation modules behind rune_jit's public faces (rune_jit.nn,
rune_jit.nn.initializers, rune_jit.scipy.sparse, ...). Import from the public modules."""
