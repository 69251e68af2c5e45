"""Segment reductions, as `jax.ops`: the rows of `data` combined by the segment each
belongs to.

    segment_sum(data, ids, n)[s] == sum of data[i] for the i with ids[i] == s

Ids outside [0, n) are dropped (as in JAX). Segments no row reaches hold the
reduction's identity: 0 for a sum, the dtype's lowest value for a max, its highest for
a min (-inf and inf for floats).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .numpy._core import accept, as_value
from .ops import elementwise as ew
from .ops.gather import scatter
from .ops.shape import broadcast_in_dim
from .trace import Tracer, current, type_of_value


def _segments(op: str, identity, data: Any, segment_ids: Any, num_segments: int | None) -> Any:

    data = as_value(accept(data, f"rune_jit.ops.segment_{op}"))
    ids = as_value(accept(segment_ids, f"rune_jit.ops.segment_{op}"))
    traced = current() is not None or isinstance(data, Tracer) or isinstance(ids, Tracer)
    if num_segments is None:
        if traced:
            raise TypeError(f"rune_jit.ops.segment_{op}: num_segments is needed under a trace "
                            "(the number of segments fixes the result's shape)")
        num_segments = int(np.max(ids)) + 1 if np.size(ids) else 0
    t = type_of_value(data)
    it = type_of_value(ids)
    if it.dtype.kind not in "iu" or it.shape != t.shape[:1]:
        raise TypeError(f"rune_jit.ops.segment_{op}: segment_ids must be integers, one per "
                        f"row of data ({t.shape[:1]}), got {it}")
    base = broadcast_in_dim(np.asarray(identity(t.dtype), t.dtype),
                            (int(num_segments),) + t.shape[1:], ())
    ids = ew.convert(ids, np.dtype(np.int64)) if it.dtype != np.int64 else ids
    # the scatter would wrap a negative id as NumPy indexing does; JAX drops it, so it is
    # sent past the end, where the scatter drops it
    ids = ew.select(ew.lt(ids, np.int64(0)), np.int64(num_segments), ids)
    return scatter(base, [ids], data, {"sum": "add", "max": "max", "min": "min"}[op], "drop")


def _lowest(dtype: np.dtype):
    return -np.inf if dtype.kind == "f" else (False if dtype.kind == "b" else np.iinfo(dtype).min)


def _highest(dtype: np.dtype):
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None) -> Any:
    """Sums of the rows of `data` by segment (see the module's doc).

    >>> import numpy as np, rune_jit as rune
    >>> rune.ops.segment_sum(np.arange(4.0), np.array([0, 0, 2, 1]), 3).tolist()
    [1.0, 3.0, 2.0]
    """
    return _segments("sum", lambda dt: 0, data, segment_ids, num_segments)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None) -> Any:
    """Maxima of the rows of `data` by segment (empty segments: the lowest value)."""
    return _segments("max", _lowest, data, segment_ids, num_segments)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None) -> Any:
    """Minima of the rows of `data` by segment (empty segments: the highest value)."""
    return _segments("min", _highest, data, segment_ids, num_segments)
