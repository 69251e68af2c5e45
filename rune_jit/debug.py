"""Seeing values inside staged and compiled code, as `jax.debug`: `debug.print` and
`debug.callback` (docs/debugging.md).

    >>> import rune_jit as rune
    >>> sorted(rune.debug.__all__)
    ['callback', 'print']
"""

from ._src.debug import callback, print  # noqa: A004

__all__ = ["callback", "print"]
