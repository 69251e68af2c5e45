"""The array API's norms and transpose in rune_jit.numpy.linalg (NumPy 2's, JAX's):
`vector_norm`, `matrix_norm` and `matrix_transpose`, over rune_jit.numpy.linalg.norm."""

from __future__ import annotations

from typing import Any


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:  # noqa: A002 (NumPy's name)
    """The vector `ord`-norm along `axis` (None: of all the elements, flattened).

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.vector_norm(np.array([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """
    from . import numpy as rnp

    x = rnp.asarray(x)
    if axis is None:
        out = rnp.linalg.norm(rnp.ravel(x), ord)
        return rnp.reshape(out, (1,) * x.ndim) if keepdims else out
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) == 1:
        return rnp.linalg.norm(x, ord, axes[0], keepdims)
    # several axes: one vector norm over them, moved last and flattened
    moved = rnp.moveaxis(x, axes, tuple(range(-len(axes), 0)))
    out = rnp.linalg.norm(rnp.reshape(moved, moved.shape[:x.ndim - len(axes)] + (-1,)),
                          ord, -1)
    if not keepdims:
        return out
    kept = [1 if i in [a % x.ndim for a in axes] else n for i, n in enumerate(x.shape)]
    return rnp.reshape(out, tuple(kept))


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The matrix `ord`-norm of each matrix in the last two axes of x.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.matrix_norm(np.stack([np.eye(2), 2 * np.eye(2)]), ord=2))
    [1. 2.]
    """
    from . import numpy as rnp

    return rnp.linalg.norm(x, ord, (-2, -1), keepdims)


def matrix_transpose(x: Any, /) -> Any:
    """Each matrix of a stack transposed: the last two axes swapped.

    >>> import rune_jit.numpy as rnp
    >>> rnp.linalg.matrix_transpose(np.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    from . import numpy as rnp

    x = rnp.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"rune_jit.numpy.linalg.matrix_transpose: x must have at least 2 "
                         f"dimensions, got shape {x.shape}")
    return rnp.swapaxes(x, -1, -2)
