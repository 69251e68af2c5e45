"""Implementation modules of rune_jit: the code behind the public modules."""
