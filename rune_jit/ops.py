"""Segment reductions, as `jax.ops`: reduce the rows of `data` that share a segment id.

    >>> import numpy as np, rune_jit as rune
    >>> rune.ops.segment_sum(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), num_segments=2)
    array([3., 3.])
"""

from ._src.segment import segment_max, segment_min, segment_sum

__all__ = ["segment_max", "segment_min", "segment_sum"]
