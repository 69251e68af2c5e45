"""Experimental APIs, as `jax.experimental`: `checkify`.

    >>> import rune_jit as rune
    >>> rune.experimental.checkify.user_checks
    frozenset({'user'})
"""

from . import checkify

__all__ = ["checkify"]
