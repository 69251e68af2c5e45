"""Count the rune_jit frames in the tracebacks users see for three common mistakes under
jit: a scan step returning a carry of another type, an `if` on a traced value, and a
matmul of shapes that do not match.

    python tools/traceback_frames.py
"""

from __future__ import annotations

import traceback
from pathlib import Path

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp

PACKAGE = str(Path(rune.__file__).resolve().parent)


def carry_mismatch(x):
    return rune.scan(lambda c, r: (c * 1.0, None), np.int32(0), x)[0]


def if_on_tracer(x):
    if x[0] > 0:
        return x
    return -x


def matmul_shapes(x):
    return rnp.matmul(x, np.ones((4, 2)))


def frames(f) -> tuple[int, int, str]:
    """(rune_jit frames, all frames, the exception) of f's error under jit."""
    try:
        rune.jit(f)(np.ones(3))
    except Exception as err:  # noqa: BLE001 (any error is what is counted)
        stack = traceback.extract_tb(err.__traceback__)
        ours = sum(1 for fr in stack if str(Path(fr.filename).resolve()).startswith(PACKAGE))
        return ours, len(stack), type(err).__name__
    raise AssertionError(f"{f.__name__} did not fail")


def main() -> None:
    for f in (carry_mismatch, if_on_tracer, matmul_shapes):
        ours, total, kind = frames(f)
        print(f"{f.__name__}: {ours} rune_jit frames of {total} ({kind})")


if __name__ == "__main__":
    main()
