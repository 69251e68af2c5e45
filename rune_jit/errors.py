"""The errors rune_jit raises that a program may catch (as `jax.errors`).

    >>> import rune_jit as rune
    >>> issubclass(rune.errors.ConcretizationError, TypeError)
    True
"""

from ._src.errors import (CheckError, ConcretizationError, GradCheckError, IterateError,
                          UnsupportedPlatformError)

__all__ = ["CheckError", "ConcretizationError", "GradCheckError", "IterateError",
           "UnsupportedPlatformError"]

for _cls in (CheckError, ConcretizationError, GradCheckError, IterateError,
             UnsupportedPlatformError):
    _cls.__module__ = __name__  # tracebacks name the public path
