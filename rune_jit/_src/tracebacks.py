"""Tracebacks that leave rune_jit show the user's frames, not rune_jit's.

An error raised while rune_jit traces, transforms or runs a user's function passes
through dozens of rune_jit's frames (tracers, passes, rules). Each public entry point is
an `api_boundary`: an exception leaving it keeps only the frames outside rune_jit (the
user's code, their step functions), plus the boundary's own, and a note says that
frames were hidden. RUNE_JIT_TRACEBACK=full shows them all. (JAX's traceback_util does
the same.)
"""

from __future__ import annotations

import functools
import os
import types
from typing import Callable, TypeVar

from .errors import add_note
from .source_info import ours

F = TypeVar("F", bound=Callable)
NOTE = "(rune_jit's own frames are hidden from this traceback; RUNE_JIT_TRACEBACK=full shows them)"


def hiding() -> bool:
    return os.environ.get("RUNE_JIT_TRACEBACK", "") != "full"


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback `tb` without the entries of rune_jit's code."""
    kept = []
    while tb is not None:
        if not ours(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def api_boundary(fn: F) -> F:
    """`fn`, whose exceptions leave with rune_jit's frames hidden."""
    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            raise hidden(err)  # noqa: B904 (itself)

    return boundary  # type: ignore[return-value]


def hidden(err: Exception) -> Exception:
    """`err` to raise from an API boundary: with rune_jit's frames hidden, and a note
    saying so (as it is, with RUNE_JIT_TRACEBACK=full)."""
    if not hiding():
        return err
    if NOTE not in getattr(err, "__notes__", ()):
        add_note(err, NOTE)
    return err.with_traceback(user_frames(err.__traceback__))
