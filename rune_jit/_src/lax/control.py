"""jax.lax's loops and control flow: rune_jit's own (`scan`, `while_loop`, `fori_loop`,
`associative_scan`, `stop_gradient` have JAX's signatures already), and adapters
where JAX's spelling says more: `cond` and `switch` with the old `operand=`
keyword, `map` with `batch_size=`.
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

from .. import tree
from ..control_flow import associative_scan, fori_loop, while_loop
from ..control_flow import map as _map
from ..control_flow import switch as _switch
from ..control_flow import cond as _cond
from ..control_flow import scan, stop_gradient

__all__ = ["associative_scan", "cond", "fori_loop", "map", "scan", "stop_gradient", "switch",
           "while_loop"]



class _NoOperand:
    """The default of `operand=`: none given (a class, which the eager cache's digest of a
    calling function can name, where an object() would keep the function from caching)."""


_NO_OPERAND = _NoOperand


def _positional(operands: tuple, operand: Any, where: str) -> tuple:
    """JAX's older spelling passes one operand as `operand=`."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{where}: pass the operands positionally or as operand=, not both")
    return (operand,)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands), chosen at run time; both
    branches must return one structure of one shapes and dtypes (a TypeError names the
    first leaf that differs and both types).

    >>> float(cond(2.0 > 1.0, lambda x: x * 10.0, lambda x: -x, 3.0))
    30.0
    """
    return _cond(pred, true_fun, false_fun, *_positional(operands, operand, "lax.cond"))


def switch(index: Any, branches: Sequence[Callable], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """branches[index](*operands), the index clamped into range.

    >>> float(switch(7, [lambda x: x + 1.0, lambda x: x * 10.0], 2.0))
    20.0
    """
    return _switch(index, branches, *_positional(operands, operand, "lax.switch"))


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """f applied to each row of `xs` (a pytree), the results stacked. With batch_size,
    `vmap(f)` runs on batch_size rows per step of a loop, and once on the rows left over.

    >>> import numpy as np
    >>> map(lambda x: x * 2.0, np.arange(7.0), batch_size=3).tolist()
    [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    """
    if batch_size is None:
        return _map(f, xs)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}")
    from ..api import vmap
    from ..numpy import concatenate, reshape

    leaves = tree.flatten(xs)[0]
    sizes = {x.shape[0] for x in leaves if getattr(x, "ndim", 0) >= 1}
    if len(sizes) != 1 or builtins.any(getattr(x, "ndim", 0) < 1 for x in leaves):
        raise ValueError(f"lax.map: the leaves of xs must have one leading size, got shapes "
                         f"{[getattr(x, 'shape', ()) for x in leaves]}")
    n = sizes.pop()
    steps, left = divmod(n, batch_size)
    whole = steps * batch_size
    parts = []
    if steps:
        rows = tree.tree_map(lambda x: reshape(x[:whole], (steps, batch_size) + x.shape[1:]),
                             xs)
        ys = _map(vmap(f), rows)
        parts.append(tree.tree_map(lambda y: reshape(y, (whole,) + y.shape[2:]), ys))
    if left:
        parts.append(vmap(f)(tree.tree_map(lambda x: x[whole:], xs)))
    if len(parts) == 1:
        return parts[0]
    return tree.tree_map(lambda a, b: concatenate([a, b]), *parts)
