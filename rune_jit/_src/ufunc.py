"""NumPy's ufunc interface on rune_jit.numpy's elementwise functions: `rnp.add` is a
`ufunc` object that calls the function and has NumPy's methods (`reduce`, `accumulate`,
`outer`, `at`) and attributes (`nin`, `nout`, `nargs`, `identity`), as `jnp.add` has.

The methods are made of rune_jit.numpy's operations, so they trace, differentiate and
batch as those do: `reduce` of add, multiply, maximum, minimum, logical_and and
logical_or is `sum`, `prod`, `max`, `min`, `all`, `any`; `accumulate` of the first four
is `cumsum`, `cumprod` and the running extrema; other binary ufuncs reduce and
accumulate by a `scan` of the function along the axis. `outer` is a broadcast. `at` is
NumPy's (in place) on a NumPy array, and JAX's `inplace=False` (a new array) on any."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .call.code_digest import register_class
from .trace import Tracer

# ufunc -> (the `x.at[i]` method, how b enters it): `at` on a traced value
_AT_METHODS = {"add": ("add", None), "subtract": ("add", "negative"),
               "multiply": ("multiply", None), "maximum": ("max", None),
               "minimum": ("min", None)}


class ufunc:  # noqa: N801 (NumPy's name)
    """A rune_jit.numpy elementwise function with NumPy's ufunc methods and attributes.

    >>> import rune_jit.numpy as rnp
    >>> x = np.array([3.0, 1.0, 4.0, 1.0])
    >>> print(rnp.maximum.accumulate(x), rnp.add.reduce(x), rnp.add.nin, rnp.add.identity)
    [3. 3. 4. 4.] 9.0 2 0
    >>> print(rnp.multiply.outer(np.arange(2), np.arange(3)))
    [[0 0 0]
     [0 1 2]]
    """

    def __new__(cls, func: Callable, *args: Any, **kwargs: Any) -> "ufunc":
        # each ufunc's own class calls its function as its __call__: no Python frame
        # between a call and the function, which the eager fast path would feel
        own = type(cls.__name__, (cls,), {"__call__": staticmethod(func),
                                          "__module__": cls.__module__})
        return super().__new__(own)

    def __init__(self, func: Callable, nin: int, nout: int = 1, *, name: str | None = None,
                 identity: Any = None):
        functools.update_wrapper(self, func)  # name, docstring, signature (__wrapped__)
        self.__name__ = self.__qualname__ = name or func.__name__
        self._call, self.nin, self.nout, self.identity = func, nin, nout, identity
        if not self.__doc__:
            self.__doc__ = (f"NumPy's {self.__name__} on arrays and traced values, with "
                            "NumPy's ufunc methods (reduce, accumulate, outer, at).")

    @classmethod
    def like_numpy(cls, func: Callable, numpy_ufunc: np.ufunc) -> "ufunc":
        """`func` as a ufunc with NumPy's `numpy_ufunc`'s attributes and method rules."""
        return cls(func, numpy_ufunc.nin, numpy_ufunc.nout, name=numpy_ufunc.__name__,
                   identity=numpy_ufunc.identity)

    @property
    def nargs(self) -> int:
        return self.nin + self.nout

    def __repr__(self) -> str:
        return f"<rune_jit.numpy.ufunc '{self.__name__}'>"

    def __reduce__(self) -> str:
        return self.__name__  # pickled by name: rune_jit.numpy.<name> is this object

    def _binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"rune_jit.numpy.{self.__name__}.{method} is only supported for "
                             f"binary functions ({self.__name__} takes {self.nin} argument)")

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """`a` reduced with this function along `axis` (None: all axes), as NumPy's
        ufunc.reduce; `where` masks elements out, `initial` starts the reduction."""
        from . import ufunc_reduce

        self._binary("reduce")
        _no_out(out, f"{self.__name__}.reduce")
        return ufunc_reduce.reduce(self, a, axis, dtype, keepdims, initial, where)

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running reduction of `a` along `axis` (`maximum.accumulate` is cummax)."""
        from . import ufunc_reduce

        self._binary("accumulate")
        _no_out(out, f"{self.__name__}.accumulate")
        return ufunc_reduce.accumulate(self, a, axis, dtype)

    def outer(self, a: Any, b: Any) -> Any:
        """The function of every element of `a` with every element of `b`: the result's
        shape is a.shape + b.shape."""
        from .numpy import asarray, reshape

        self._binary("outer")
        a, b = asarray(a), asarray(b)
        return self(reshape(a, a.shape + (1,) * b.ndim), b)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """NumPy's unbuffered `a[indices] = f(a[indices], b)`, repeated indices applied
        each time: in place on a NumPy array (None back); with `inplace=False` (JAX's
        form, the one for traced arrays) a new array, `a` unchanged."""
        if (b is None) != (self.nin == 1):
            raise TypeError(f"rune_jit.numpy.{self.__name__}.at takes {self.nin} operand"
                            f"{'s' if self.nin > 1 else ''} (a and b)")
        if inplace:
            return self._at_in_place(a, indices, b)
        from .numpy import at

        method, prepare = _AT_METHODS.get(self.__name__, (None, None))
        if method is None:
            raise TypeError(f"rune_jit.numpy.{self.__name__}.at(..., inplace=False) is not "
                            "supported: the functional form exists for "
                            f"{', '.join(sorted(_AT_METHODS))}")
        if prepare is not None:
            from . import numpy as rnp

            b = getattr(rnp, prepare)(b)
        return getattr(at(a)[indices], method)(b)

    def _at_in_place(self, a: Any, indices: Any, b: Any) -> None:
        where = f"rune_jit.numpy.{self.__name__}.at"
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{where}: a is a {_kind(a)}, which cannot change in place; "
                            "pass inplace=False for the updated array (JAX's form)")
        traced = [n for n, v in (("indices", indices), ("b", b)) if _holds_tracer(v)]
        if traced:
            raise TypeError(f"{where}: {traced[0]} is traced, and a NumPy array changes "
                            "in place only by concrete values; pass inplace=False for the "
                            "updated array (JAX's form)")
        getattr(np, self.__name__).at(a, indices, *([] if b is None else [b]))


def _kind(a: Any) -> str:
    return "traced value" if isinstance(a, Tracer) else type(a).__name__


def _holds_tracer(v: Any) -> bool:
    if isinstance(v, (tuple, list)):
        return any(_holds_tracer(x) for x in v)
    return isinstance(v, Tracer)


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"rune_jit.numpy.{name}: out= is not supported (rune_jit's results "
                        "are new arrays)")


def wrap_ufuncs(namespace: dict, names: list[str]) -> dict[str, ufunc]:
    """Replace in `namespace` each of `names` that NumPy has as a ufunc by a `ufunc` of
    it (aliases, as `mod` of `remainder`, stay one object); -> NumPy's name -> ufunc."""
    made: dict[int, ufunc] = {}
    for name in names:
        numpy_ufunc = getattr(np, name, None)
        # not a gufunc (matmul): NumPy has no reduce or accumulate of those
        if (isinstance(numpy_ufunc, np.ufunc) and numpy_ufunc.signature is None
                and callable(namespace.get(name))):
            f = namespace[name]
            if id(f) not in made:
                made[id(f)] = u = ufunc.like_numpy(f, numpy_ufunc)
                u.__module__ = namespace["__name__"]  # where pickle finds it by name
            namespace[name] = made[id(f)]
    return {u.__name__: u for u in made.values()}


def _digest_walk(d: Any, u: ufunc) -> None:
    d.put("ufunc", u.__name__, u.nin, u.nout, repr(u.identity))
    d.walk(u._call)


register_class(ufunc, _digest_walk)  # a function calling rnp.add can be cached on disk
