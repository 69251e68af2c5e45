"""`ravel_pytree`: a pytree of arrays as one flat vector, and the function back."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .dtypes import result_type
from .tree import flatten, unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(the leaves of `pytree` raveled and joined into one 1-D array of their promoted
    dtype, a function from such an array back to a pytree of the original structure,
    shapes and dtypes). Works on traced values: under jit, grad and vmap.

    >>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "n": np.int32(3)})
    >>> flat.dtype, flat.tolist()
    (dtype('float64'), [3.0, 1.0, 1.0, 1.0, 1.0])
    >>> back = unravel(2 * flat)
    >>> back["n"].dtype, back["w"].tolist()
    (dtype('int32'), [[2.0, 2.0], [2.0, 2.0]])
    """
    import rune_jit._src.numpy as rnp  # the array library sits above the tree layer
    from rune_jit._src.numpy._core import dtype_weak

    leaves, treedef = flatten(pytree)
    shapes = [getattr(x, "shape", ()) for x in leaves]  # () for a Python number
    kinds = [dtype_weak(x) for x in leaves]
    dtypes = [d for d, _ in kinds]
    dtype = result_type(*kinds) if leaves else np.dtype(np.float64)
    flat = (rnp.concatenate([rnp.ravel(rnp.asarray(x, dtype)) for x in leaves]) if leaves
            else rnp.zeros(0, dtype))
    sizes = [int(np.prod(s)) for s in shapes]

    def unravel(arr: Any) -> Any:
        shape = getattr(arr, "shape", ())
        if shape != (sum(sizes),):
            raise ValueError(f"unravel: expected a 1-D array of {sum(sizes)} elements, got "
                             f"shape {shape}")
        got = dtype_weak(arr)[0]
        if got != dtype:
            raise TypeError(f"unravel: expected an array of dtype {dtype} (the leaves' "
                            f"promoted dtype), got {got}")
        starts = np.cumsum([0] + sizes)
        return unflatten(treedef, [rnp.reshape(arr[a:b], s).astype(d) for a, b, s, d in
                                   zip(starts[:-1], starts[1:], shapes, dtypes)])

    return flat, unravel
