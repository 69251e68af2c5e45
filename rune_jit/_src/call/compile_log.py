"""Where compile time goes, and why a call compiles (docs/debugging.md).

With `RUNE_JIT_LOG=compiles` in the environment (or `compile_log.enable()`), each call
of a jitted function that traces, compiles or loads a program logs one line to the
logger "rune_jit.compiles" (on stderr unless you configure logging): the function, its
signature, where the program came from (traced and compiled, the disk cache, a saved
program) and the time of each stage. A call that compiles a function already compiled
for other arguments says what changed, as JAX's explain_cache_misses does.

Whether or not logging is on, tracing a program in which one line of the user's code
was traced hundreds of times (a Python loop unrolled inside jit) warns once per line,
naming `scan`: a loop compiles once whatever its length.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
import warnings
from collections import Counter
from typing import Any, Iterator, Sequence

import numpy as np

from .. import tree
from ..source_info import ours

logger = logging.getLogger("rune_jit.compiles")
_state = threading.local()
# One line that makes this many of a program's equations, repeating each of its kinds
# (primitive and types) REPEATS times on average, is a Python loop the trace unrolled;
# a library function called once (ndtri: 348 equations of 15 kinds) is not.
UNROLLED, REPEATS = 300, 50
_warned: set = set()


def enable(on: bool = True) -> None:
    """Log compiles (INFO on "rune_jit.compiles", to stderr if nothing else handles it).

    >>> rune.compile_log.enable(); rune.compile_log.enable(False)
    """
    if on and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("rune_jit: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO if on else logging.WARNING)


def enabled() -> bool:
    return logger.isEnabledFor(logging.INFO)


@contextlib.contextmanager
def call(what: str) -> Iterator[None]:
    """Record the stages of getting one program (`what`: function and signature), and
    log them when it is ready."""
    if not enabled():
        yield
        return
    _state.record = record = {"events": [], "times": {}}
    start = time.perf_counter()
    try:
        yield
    finally:
        _state.record = None
    total = time.perf_counter() - start
    stages = ", ".join(f"{k} {_ms(v)}" for k, v in record["times"].items())
    logger.info("%s: %s in %s (%s)", what, " + ".join(record["events"]) or "ready",
                _ms(total), stages)


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Time a stage of the program being recorded, if one is."""
    record = getattr(_state, "record", None)
    if record is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        times = record["times"]
        times[name] = times.get(name, 0.0) + time.perf_counter() - start


def event(what: str) -> None:
    """Say where the program being recorded came from ("compiled", "disk cache", ...)."""
    record = getattr(_state, "record", None)
    if record is not None:
        record["events"].append(what)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def signature(key: tuple) -> str:
    """A jit signature as the user wrote it: each leaf's type, and the static values."""
    in_tree, spec, statics, *_ = key
    leaves = [f"{_path(p)}: {_leaf(leaf)}" for p, leaf in zip(tree.leaf_paths(in_tree), spec)]
    shown = ", ".join(leaves)
    return shown + (f"; static {statics}" if any(statics) else "")


def explain_miss(old: Sequence[tuple], new: tuple) -> str:
    """Why `new` misses the signatures compiled before: what differs from the closest."""
    def diffs(k):
        (t0, s0, st0, b0, sk0), (t1, s1, st1, b1, sk1) = k, new
        if t0 != t1:
            return [f"the arguments' structure changed from {t0} to {t1}"]
        out = [f"{_path(p)} changed from {_leaf(a)} to {_leaf(b)}"
               for p, a, b in zip(tree.leaf_paths(t1), s0, s1) if a != b]
        if sk0 != sk1:  # their types or a float's bits, where == holds (3 and 3.0)
            out.append(f"static arguments changed from {st0} to {st1}")
        if b0 != b1:
            out.append(f"the backend changed from {b0} to {b1}")
        return out

    best = min((diffs(k) for k in old), key=len)
    return "recompiling: " + "; ".join(best)


def _path(path: str) -> str:
    """A leaf's path in jit's (args, kwargs) pair as the call wrote it: args[0], n[1]."""
    if path.startswith("[0]"):
        return "args" + path[3:]
    name, _, rest = path[5:].partition("']")
    return name + rest


def _leaf(spec: tuple) -> str:
    shape, dtype, weak = spec
    return f"{np.dtype(dtype).name}{list(shape)}" + (" (a weak Python number)" if weak else "")


def warn_if_unrolled(region: Any, name: str) -> None:
    """Warn, once per line, where one line made UNROLLED or more of the program's
    equations, REPEATS of each kind: a Python loop, unrolled by the trace."""
    counts = Counter(e.source for e in region.eqns if e.source is not None)
    kinds: dict = {}
    for e in region.eqns:
        kinds.setdefault(e.source, set()).add((e.prim.name, tuple(v.type for v in e.outputs)))
    for source, n in counts.items():
        if n >= max(UNROLLED, REPEATS * len(kinds[source])) and (name, source) not in _warned:
            _warned.add((name, source))
            warnings.warn(
                f"rune_jit.jit({name}): {source} was traced {n} times into one program: "
                "a Python loop unrolled by the trace, which compiles in time that grows "
                "with its length. rune_jit.scan (or fori_loop) keeps it a loop, compiled "
                "once whatever its length.", stacklevel=_user_level())


def _user_level() -> int:
    """The stacklevel of warnings.warn that names the first frame outside rune_jit."""
    frame, level = sys._getframe(2), 2
    while frame is not None and ours(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


if "compiles" in os.environ.get("RUNE_JIT_LOG", "").split(","):
    enable()
