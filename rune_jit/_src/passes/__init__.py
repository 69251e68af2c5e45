"""Transformations of the IR: drivers that walk regions and call each primitive's rule.

The per-primitive rules live with the primitives in rune_jit.ops; nothing here
knows a primitive by name.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .. import source_info
from ..errors import add_note
from ..ir import Eqn


@contextmanager
def at_eqn(pass_name: str, eqn: Eqn) -> Iterator[None]:
    """What a pass builds from `eqn` comes from `eqn`'s source line, and errors raised
    while it does say which pass, which equation, and where the user wrote it."""
    try:
        with source_info.at(eqn.source):
            yield
    except Exception as err:
        note(err, f"(while applying {pass_name} to: {str(eqn).splitlines()[0]}"
                  f"{source_info.where(eqn.source)})")
        raise


def note(err: Exception, text: str) -> None:
    """Add `text` to the error's notes, once per error (the innermost note says most)."""
    if not getattr(err, "_rune_noted", False):
        add_note(err, text)
        err._rune_noted = True
