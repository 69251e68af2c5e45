"""Where the native backend can compile: Linux on x86-64 or aarch64 (docs/platforms.md).

Elsewhere `import rune_jit` still works, and so does the NumPy interpreter
(RUNE_JIT_BACKEND=interpret); the first thing that needs compiled code raises
`UnsupportedPlatformError`, which says why and what to do. The reasons are in
docs/platforms.md: the compiled code's thread pool and Ctrl-C handler are written against
glibc's pthread and sigaction layouts, and the math it calls is glibc's libm and libmvec.

>>> from rune_jit._src import platforms
>>> platforms.unsupported_reason("linux", "aarch64") is None
True
>>> print(platforms.unsupported_reason("darwin", "arm64"))
compiled code needs Linux (this is darwin)
"""

from __future__ import annotations

import platform
import sys

from .errors import UnsupportedPlatformError

# platform.machine()'s names for the machines the native backend compiles for
MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def unsupported_reason(os_name: str, machine: str) -> str | None:
    """Why compiled code cannot run on `os_name` (a `sys.platform`) and `machine` (a
    `platform.machine()`), or None where it can."""
    if not os_name.startswith("linux"):
        return f"compiled code needs Linux (this is {os_name})"
    if machine.lower() not in MACHINES:
        return f"compiled code needs an x86-64 or aarch64 CPU (this is {machine or 'unknown'})"
    return None


def require_native() -> None:
    """Raise `UnsupportedPlatformError` if this platform cannot run compiled code."""
    reason = unsupported_reason(sys.platform, platform.machine())
    if reason is not None:
        raise UnsupportedPlatformError(
            f"rune_jit: {reason}. Set RUNE_JIT_BACKEND=interpret (or "
            "rune_jit.config.backend = 'interpret') to run everything on the NumPy "
            "interpreter instead; docs/platforms.md lists the platforms that compile.")
