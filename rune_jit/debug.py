"""Seeing values inside staged and compiled code, as `jax.debug`: `debug.print` and
`debug.callback` (docs/debugging.md). Both run when the program runs, in program order:
each step of a loop prints; under vmap, once per lane; under grad, in the forward pass (and
again each time the reverse pass of a scan with `checkpoints=k` computes a step again).

    >>> import rune_jit as rune
    >>> sorted(rune.debug.__all__)
    ['callback', 'print']
"""

from ._src.debug import callback, print  # noqa: A004

__all__ = ["callback", "print"]
