"""Where in the user's code an equation came from: the first frame outside rune_jit of
the call that bound it. Passes that rebuild an equation (a derivative, a batched form)
give what they build the source of the equation they rebuild (`at`), so an error about
a gradient still names the line that wrote the function."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import NamedTuple

_PACKAGE = str(Path(__file__).resolve().parents[1])  # rune_jit, not only _src
_state = threading.local()


class SourceInfo(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


def ours(filename: str) -> bool:
    """Whether code in `filename` is rune_jit's own."""
    return filename.startswith(_PACKAGE)


def user_frame() -> SourceInfo | None:
    """The innermost frame of the current call stack outside rune_jit, cheaply (no stack
    is captured: the frames are walked)."""
    frame = sys._getframe(1)
    while frame is not None and ours(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return SourceInfo(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def given() -> SourceInfo | None:
    """The source of the equation a pass or the interpreter is at, or None (at the
    user's own call)."""
    return getattr(_state, "source", None)


def current() -> SourceInfo | None:
    """The source of equations bound now: the one a pass rebuilds, else the user's."""
    source = given()
    return source if source is not None else user_frame()


class at:
    """`with at(source):` equations bound in here come from `source` (when it is known).
    A class, not a generator: passes enter one per equation."""

    __slots__ = ("source", "saved")

    def __init__(self, source: SourceInfo | None):
        self.source = source

    def __enter__(self) -> None:
        self.saved = getattr(_state, "source", None)
        if self.source is not None:
            _state.source = self.source

    def __exit__(self, *exc) -> None:
        _state.source = self.saved


def where(source: SourceInfo | None) -> str:
    return f" at {source}" if source is not None else ""
