"""NumPy functions library code written for JAX calls: `block`, `digitize`,
`unravel_index`, `diag_indices`, `diag_indices_from`, `save`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .trace import Tracer, state


def block(arrays: Any) -> Any:
    """NumPy's block: nested lists of arrays joined along the last axis at the innermost
    level, the one before it at the next level out, and so on.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), 5.0]]))
    [[1. 0. 0.]
     [0. 1. 0.]
     [1. 1. 5.]]
    """
    from . import numpy as rnp

    depth, ndim = _nesting(arrays, ())
    ndim = max(depth, ndim)

    def joined(x: Any, level: int) -> Any:
        if level == depth:
            a = rnp.asarray(x)
            return rnp.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
        return rnp.concatenate([joined(e, level + 1) for e in x], axis=level - depth)

    return joined(arrays, 0)


def _nesting(x: Any, index: tuple) -> tuple[int, int]:
    """(the list depth, the largest ndim) of block's argument; NumPy's errors for a tuple,
    an empty list and lists nested to different depths, naming where."""
    if isinstance(x, tuple):
        raise TypeError(f"rune_jit.numpy.block: arrays{_at(index)} is a tuple; only lists "
                        "may be used to arrange blocks (as in NumPy)")
    if not isinstance(x, list):
        return 0, np.ndim(x) if not isinstance(x, Tracer) else x.ndim
    if not x:
        raise ValueError(f"rune_jit.numpy.block: arrays{_at(index)} is an empty list")
    inner = [_nesting(e, index + (i,)) for i, e in enumerate(x)]
    depths = {d for d, _ in inner}
    if len(depths) > 1:
        raise ValueError(f"rune_jit.numpy.block: the lists in arrays{_at(index)} are nested "
                         f"to different depths {sorted(depths)}")
    return inner[0][0] + 1, max(n for _, n in inner)


def _at(index: tuple) -> str:
    return "".join(f"[{i}]" for i in index)


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin each x falls in (NumPy's digitize): bins increasing or
    decreasing. Concrete bins that are neither are NumPy's ValueError; traced bins are
    taken as increasing if bins[-1] >= bins[0], else decreasing (as JAX).

    >>> digitize(np.array([0.5, 1.0, 2.5]), np.array([1.0, 2.0, 3.0])).tolist()
    [0, 1, 2]
    """
    from . import numpy as rnp

    bins = rnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"rune_jit.numpy.digitize: bins must be 1-dimensional, got shape "
                         f"{bins.shape}")
    side = "left" if right else "right"
    if not isinstance(bins, Tracer):
        steps = np.diff(bins)
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise ValueError("rune_jit.numpy.digitize: bins must be monotonically "
                             "increasing or decreasing")
        if len(bins) and bins[-1] < bins[0]:
            return len(bins) - rnp.searchsorted(bins[::-1], x, side=side)
        return rnp.searchsorted(bins, x, side=side)
    return rnp.where(bins[-1] >= bins[0], rnp.searchsorted(bins, x, side=side),
                     len(bins) - rnp.searchsorted(bins[::-1], x, side=side))


def unravel_index(indices: Any, shape: Any) -> tuple:
    """The coordinates in an array of `shape` (static) of flat `indices`. NumPy's on
    concrete indices outside a trace (its ValueError out of bounds); under a trace JAX's:
    an index past the end gives the last element's coordinates, one below -size the
    first's, -1 the last's.

    >>> [c.tolist() for c in unravel_index(np.array([1, 5]), (2, 3))]
    [[0, 1], [1, 2]]
    """
    from . import numpy as rnp

    shape = tuple(int(s) for s in np.atleast_1d(shape))
    if not isinstance(indices, Tracer) and state.builder is None:
        return tuple(np.asarray(c) for c in np.unravel_index(indices, shape))
    rest, coords = rnp.asarray(indices), []
    for s in reversed(shape):
        rest, c = rnp.floor_divide(rest, s), rnp.remainder(rest, s)
        coords.append(c)
    past, below = rest > 0, rest < -1
    return tuple(rnp.where(past, s - 1, rnp.where(below, 0, c))
                 for s, c in zip(shape, reversed(coords)))


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """The indices of the main diagonal of an n × ... × n array (NumPy's).

    >>> a = np.zeros((2, 2)); a[diag_indices(2)] = 7.0; print(a.tolist())
    [[7.0, 0.0], [0.0, 7.0]]
    """
    return np.diag_indices(int(n), int(ndim))


def diag_indices_from(arr: Any) -> tuple:
    """diag_indices of an array (traced or not) whose dimensions are all equal.

    >>> [i.tolist() for i in diag_indices_from(np.ones((3, 3)))]
    [[0, 1, 2], [0, 1, 2]]
    """
    shape = arr.shape if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("rune_jit.numpy.diag_indices_from: the array must be at least 2-d "
                         f"with all dimensions equal, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """NumPy's save of a concrete array; a traced value has no data to write yet (save
    the result of the jitted or transformed function instead).

    >>> import io
    >>> buffer = io.BytesIO(); save(buffer, np.arange(3)); _ = buffer.seek(0)
    >>> np.load(buffer).tolist()
    [0, 1, 2]
    """
    if isinstance(arr, Tracer):
        raise TypeError(f"rune_jit.numpy.save: arr is a traced value ({arr!r}), which has "
                        "no data until the function runs; save what the function returns")
    np.save(file, arr, allow_pickle=allow_pickle)
