"""`vectorize` as JAX's: the function maps over the loop dimensions of its arguments (those
before the core dimensions its `signature` names), broadcast together, by `rune.vmap`
once per loop dimension; the function is traced once, whatever the number of elements."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The core dimension names of each input and each output of a gufunc signature.

    >>> parse_signature("(m,n),(n)->(m)")
    ([('m', 'n'), ('n',)], [('m',)])
    """
    if not _SIGNATURE.match(signature):
        raise ValueError(f"rune_jit.numpy.vectorize: not a valid gufunc signature: "
                         f"{signature!r} (e.g. '(m,n),(n)->(m)')")
    ins, outs = signature.split("->")
    return _dims(ins), _dims(outs)


def _dims(part: str) -> list[tuple[str, ...]]:
    return [tuple(d for d in re.split(r",\s*", group.strip()) if d)
            for group in re.findall(r"\(([^)]*)\)", part)]


def vectorize(pyfunc: Callable, *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable:
    """`pyfunc` of scalars (or of core dimensions named by `signature`) mapped over the
    leading dimensions of its arguments, broadcast together, as `jnp.vectorize`.
    `excluded` names positions or keywords passed through as they are.

    >>> import rune_jit.numpy as rnp
    >>> clip1 = rnp.vectorize(lambda x, lo: x if lo > 10 else rnp.maximum(x, lo),
    ...                       excluded={1})
    >>> print(clip1(np.array([[0.0, 2.0]]), 1.0))
    [[1. 2.]]
    >>> dots = rnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    >>> print(dots(np.ones((3, 2)), np.arange(2.0)))
    [1. 1. 1.]
    """
    ins, outs = parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        fixed_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
        names = [k for k in kwargs if k not in excluded]
        mapped = [i for i in range(len(args)) if i not in excluded]
        values = [args[i] for i in mapped] + [kwargs[k] for k in names]

        def call(*vs: Any) -> Any:
            full = list(args)
            for i, v in zip(mapped, vs):
                full[i] = v
            return pyfunc(*full, **fixed_kwargs, **dict(zip(names, vs[len(mapped):])))

        return _mapped(call, values, ins, outs)

    return wrapped


def _mapped(call: Callable, values: list, ins: list | None, outs: list | None) -> Any:
    from . import numpy as rnp
    from .api import vmap

    arrays = [rnp.asarray(v) for v in values]
    cores = ins if ins is not None else [()] * len(arrays)
    if len(cores) != len(arrays):
        raise TypeError(f"rune_jit.numpy.vectorize: the signature has {len(cores)} inputs, "
                        f"the call {len(arrays)} vectorized arguments")
    sizes = _core_sizes(arrays, cores)
    loop = rnp.broadcast_shapes(*[a.shape[:a.ndim - len(c)] for a, c in zip(arrays, cores)])
    arrays = [rnp.broadcast_to(a, loop + a.shape[a.ndim - len(c):])
              for a, c in zip(arrays, cores)]
    f = _checked(call, outs, sizes)
    for _ in loop:
        f = vmap(f)
    return f(*arrays)


def _core_sizes(arrays: list, cores: list) -> dict[str, int]:
    """Each core dimension's size, the same wherever its name appears."""
    sizes: dict[str, int] = {}
    for k, (a, core) in enumerate(zip(arrays, cores)):
        if a.ndim < len(core):
            raise ValueError(f"rune_jit.numpy.vectorize: argument {k} has {a.ndim} "
                             f"dimensions, fewer than its core dimensions {core}")
        for name, n in zip(core, a.shape[a.ndim - len(core):]):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"rune_jit.numpy.vectorize: core dimension {name!r} is "
                                 f"{sizes[name]} in one argument and {n} in argument {k}")
    return sizes


def _checked(call: Callable, outs: list | None, sizes: dict[str, int]) -> Callable:
    """`call`, with its results checked against the signature's output core dimensions."""
    if outs is None:
        return call

    def f(*vs: Any) -> Any:
        from . import numpy as rnp

        out = call(*vs)
        results = out if len(outs) > 1 else (out,)
        if len(outs) > 1 and (not isinstance(out, tuple) or len(out) != len(outs)):
            raise ValueError(f"rune_jit.numpy.vectorize: the signature has {len(outs)} "
                             "outputs; the function must return a tuple of that many")
        for k, (r, core) in enumerate(zip(results, outs)):
            shape = rnp.shape(r)
            expected = tuple(sizes.get(n, s) for n, s in zip(core, shape))
            if len(shape) != len(core) or shape != expected:
                raise ValueError(f"rune_jit.numpy.vectorize: output {k} has shape {shape}, "
                                 f"but the signature's core dimensions are {core}")
            sizes.update(zip(core, shape))
        return out

    return f
