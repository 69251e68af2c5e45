"""Where compile time goes, and why a call compiles (docs/debugging.md): with
`RUNE_JIT_LOG=compiles` in the environment or `enable()`, each call that traces,
compiles or loads a program logs a line to the logger "rune_jit.compiles".

    >>> import rune_jit as rune
    >>> rune.compile_log.enable(); rune.compile_log.enabled()
    True
    >>> rune.compile_log.enable(False)
"""

from ._src.call.compile_log import enable, enabled, logger

__all__ = ["enable", "enabled", "logger"]
