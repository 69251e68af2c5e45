"""Transformations of the IR: drivers that walk regions and call each primitive's rule.

The per-primitive rules live with the primitives in rune_jit.ops; nothing here
knows a primitive by name.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..ir import Eqn


@contextmanager
def at_eqn(pass_name: str, eqn: Eqn) -> Iterator[None]:
    """Errors raised while transforming `eqn` say which pass and which equation."""
    try:
        yield
    except Exception as err:
        if hasattr(err, "add_note") and not getattr(err, "_rune_noted", False):
            err.add_note(f"(while applying {pass_name} to: {str(eqn).splitlines()[0]})")
            err._rune_noted = True
        raise
