"""Programs an earlier process traced, found on disk so that a new process skips the trace.

A record is keyed by the digest of the jitted function and its static arguments
(`code_digest`) and by the signature of the call; it holds the compiled code (its object
code, metadata and disk cache key), the structure of the outputs and the constants
lifted out of the program: one file to read. A function without a digest, or a
structure other than tuples, lists, dicts and None: the call traces, as it would
without records.
"""

from __future__ import annotations

import json
import math
import os
from typing import Callable

import numpy as np

from .. import backend, config, tree
from . import disk_cache as cache
from .code_digest import digest

SUFFIX = ".prog"


def enabled() -> bool:
    """Saved programs are opt-in (RUNE_JIT_SAVE_TRACES=1): the digest sees what a function
    reads through Python values, not what its trace reads from files, the clock or other
    state (see code_digest); compiled code, keyed by the program itself, is always safe."""
    return cache.enabled() and os.environ.get("RUNE_JIT_SAVE_TRACES", "0") not in (
        "0", "", "false", "no", "off")


def record_key(f: Callable, in_tree: tree.TreeDef, spec: tuple, statics: tuple) -> str | None:
    """The key of the record of `f` called with this signature, or None if it has none."""
    if not enabled():
        return None
    code, args = digest(f, statics), tree.to_json(in_tree)
    if code is None or args is None:
        return None
    machine = backend.current()
    # the trace has NaN checks, its repeated layers folded, or not
    return cache.key(json.dumps([code, args, repr(spec), machine.name, config.debug_nans,
                                 config.fold_layers]),
                     machine.fingerprint())


def load(k: str) -> tuple[backend.Executable, tree.TreeDef] | None:
    """(the program, its output structure) that record `k` holds, if there is one."""
    entry = cache.load(k, SUFFIX)
    if entry is None:
        return None
    try:
        return _unpack(*entry)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None  # metadata of another shape: trace again


def _unpack(meta: dict, payload: bytes) -> tuple[backend.Executable, tree.TreeDef] | None:
    at = int(meta["code_bytes"])
    code, constants = payload[:at], []
    for dtype, shape in meta["constants"]:
        c = np.frombuffer(payload, np.dtype(dtype), math.prod(shape), at).reshape(shape)
        constants.append(c.copy())  # aligned, and writable as a traced constant is
        at += c.nbytes
    if at != len(payload):
        raise ValueError("the record's constants do not fill it")
    executable = backend.current().load(meta["backend"], code, constants)
    return None if executable is None else (executable, tree.from_json(meta["out_tree"]))


def save(k: str, executable: backend.Executable, out_tree: tree.TreeDef) -> None:
    """Record the program with its code: a new process reads one file."""
    out, record = tree.to_json(out_tree), executable.record()
    if out is None or record is None:
        return
    meta, code, constants = record
    constants = [np.ascontiguousarray(c) for c in constants]
    cache.store(k, {"backend": meta, "code_bytes": len(code), "out_tree": out,
                    "constants": [[c.dtype.str, list(c.shape)] for c in constants]},
                b"".join([code] + [c.tobytes() for c in constants]), SUFFIX)
