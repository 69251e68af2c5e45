"""The library's error classes and the helpers that word their messages once."""

from __future__ import annotations


class ConcretizationError(TypeError):
    """A traced value was used where Python needs a concrete one."""


class IterateError(ValueError):
    """An `iterate` ran `max_steps` steps and its `until` still did not hold."""


class GradCheckError(AssertionError):
    """`check_grads` found a derivative that disagrees with finite differences."""


class UnsupportedPlatformError(RuntimeError):
    """Compiled code cannot run on this operating system or CPU (docs/platforms.md); the
    NumPy interpreter (RUNE_JIT_BACKEND=interpret) still can."""


class IRError(Exception):
    """The IR failed verification: a pass produced something ill-formed."""


def add_note(err: BaseException, text: str) -> None:
    """`err.add_note(text)`; on Python 3.10, which has no notes, the same `__notes__` list
    (tracebacks there do not print it, but code that reads the notes sees them)."""
    if hasattr(err, "add_note"):
        err.add_note(text)
    else:
        err.__notes__ = [*getattr(err, "__notes__", ()), text]


def concretization_message(operation: str, type_str: str) -> str:
    return (
        f"{operation} needs a concrete value, but got a traced value of type {type_str}. "
        "Inside a traced function, use rune_jit.cond for control flow and "
        "rune_jit.numpy.where to select values."
    )


def lane_suffix(lane: tuple[int, ...] | None) -> str:
    """', in lane 3' under one map, ', in lane (1, 2)' under nested maps, '' outside."""
    if lane is None or len(lane) == 0:
        return ""
    if len(lane) == 1:
        return f", in lane {lane[0]}"
    return f", in lane {tuple(lane)}"


def user_lane(flat: int, lanes: tuple[int, ...], shown: tuple[bool, ...]
              ) -> tuple[int, ...] | None:
    """The lane, as the user's vmaps number it, of lane number `flat` of a loop with these
    lane axes: the axes a pass added (not `shown`) are left out."""
    import numpy as np

    index = np.unravel_index(flat, lanes) if lanes else ()
    return tuple(int(i) for i, s in zip(index, shown) if s) or None


def iterate_message(max_steps: int, lane: tuple[int, ...] | None) -> str:
    return (
        f"rune_jit.iterate: until is still false after max_steps = {max_steps} steps"
        f"{lane_suffix(lane)}"
    )


class CheckError(ValueError):
    """A `rune_jit.check` failed: its message formatted with the failing values, then the
    lane under vmap and the step of each enclosing loop (`check_message`)."""

    def __init__(self, text: str, lane: tuple[int, ...] | None = None,
                 steps: tuple[tuple[int, str, str], ...] = ()):
        self.text, self.lane, self.steps = text, lane, tuple(steps)
        super().__init__(check_message(text, lane, self.steps))

    def at_step(self, step: int, kind: str, where: str) -> None:
        """Name the step of a loop the failure happened in (loops add theirs innermost
        first, as the error leaves them)."""
        self.steps += ((step, kind, where),)
        self.args = (check_message(self.text, self.lane, self.steps),)

    def __reduce__(self):  # pickled (a Dask worker's error) with its parts
        return CheckError, (self.text, self.lane, self.steps)


def check_message(text: str, lane: tuple[int, ...] | None,
                  steps: tuple[tuple[int, str, str], ...]) -> str:
    """'x is -1.0, in lane 2, at step 3 of the scan at f.py:7': `steps` as (step, loop
    kind, file:line), innermost first."""
    return text + lane_suffix(lane) + "".join(
        f", at step {step} of the {kind}{' at ' + where if where else ''}"
        for step, kind, where in steps)
