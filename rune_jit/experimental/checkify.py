"""Run-time checks as error values, as `jax.experimental.checkify`: `check` fails the call
(`rune_jit.check`), `checkify(f)` returns `(err, out)` instead (docs/debugging.md).

    >>> from rune_jit.experimental import checkify
    >>> err, out = checkify.checkify(lambda x: (checkify.check(x > 0, "x = {}", x), x)[1])(2.0)
    >>> err.get() is None
    True
"""

from .._src.checkify import Error, check, checkify, user_checks
from .._src.errors import CheckError

__all__ = ["CheckError", "Error", "check", "checkify", "user_checks"]
