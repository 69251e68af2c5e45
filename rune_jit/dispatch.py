"""Jitted calls of one structure (pytrees, static values, keywords) straight to a native
entry.

A native entry (backend/cpu/entry.py) takes a program's leaves, positionally. A call
made of other things (a dict of arrays, a static int, keywords) reaches it through a
dispatcher written for the structure of the call that compiled the program: a Python
function that checks each container's exact type and size (a dict's keys by looking
them up), each static value's exact type and value, and passes the leaves to the entry,
which checks them. Anything else (another structure, another static value, a leaf the
entry refuses) goes to the jitted function's general path, as the call was made: the
general path finds or compiles the program, never this one by mistake. A dispatcher
costs about 0.4 µs on top of the entry; flattening on the general path costs several.

    >>> import numpy as np, rune_jit as rune
    >>> f = rune.jit(lambda d, n: d["a"] * n, static_argnums=1)
    >>> f({"a": np.ones(2)}, 3).tolist(), f({"a": np.ones(2)}, 3).tolist()
    ([3.0, 3.0], [3.0, 3.0])
    >>> type(type(f).__call__).__name__  # the dispatcher of dicts with key "a", n = 3
    'function'
"""

from __future__ import annotations

from typing import AbstractSet as Set, Any, Callable, Sequence

import numpy as np

from .tracebacks import hidden

MISSED = object()  # what an entry made for a dispatcher returns for a call it refuses
_ATOMS = frozenset((int, float, bool, str, bytes))


def missed(*args: Any) -> object:
    """The slow path of an entry made for a dispatcher: the dispatcher takes over."""
    return MISSED


def dispatcher(args: tuple, kwargs: dict, static: Sequence[int], static_names: Set[str],
               n_leaves: int, entry: Callable) -> Callable | None:
    """The `__call__` of a jitted function for calls structured as this one (`static`
    and `static_names` its static arguments, the others flattened by jit to `n_leaves`
    leaves), which passes their leaves to `entry`; None where the call holds what it
    does not check (a namedtuple, a static object): the general path keeps those."""
    w = _Writer()
    names = [w.const(k) for k in sorted(kwargs)]
    parts = [(f"a{i}", a, i in static) for i, a in enumerate(args)] + [
        (f"kwargs[{n}]", kwargs[k], k in static_names) for n, k in zip(names, sorted(kwargs))]
    if not all(w.static(e, x) if is_static else w.tree(e, x) for e, x, is_static in parts
               ) or len(w.leaves) != n_leaves:
        return None
    shape = " and ".join([f"len(args) == {len(args)}", f"len(kwargs) == {len(kwargs)}"]
                         + [f"{n} in kwargs" for n in names])
    unpack = "".join(f"a{i}, " for i in range(len(args)))
    source = (f"def __call__(self, *args, **kwargs):\n"
              f"    if {shape}:\n"
              f"        {unpack or '_'} = args\n"
              f"        try:\n"
              f"            if {' and '.join(w.conds) or 'True'}:\n"
              f"                out = entry({', '.join(w.leaves)})\n"
              f"                if out is not MISSED:\n"
              f"                    return out\n"
              f"        except Exception as err:\n"
              f"            raise hidden(err)  # an API boundary, as the general path\n"
              f"    return self._general(*args, **kwargs)\n")
    namespace = {"entry": entry, "MISSED": MISSED, "hidden": hidden, **w.consts}
    # named as rune_jit's code (its frame is hidden from tracebacks), but not as this file
    exec(compile(source, f"{__file__} (a dispatcher)", "exec"), namespace)
    return namespace["__call__"]


class _Writer:
    """Writes the checks of a call's structure as Python expressions (`conds`), and the
    expressions of its leaves (`leaves`)."""

    def __init__(self):
        self.conds: list[str] = []
        self.leaves: list[str] = []
        self.consts: dict[str, Any] = {}

    def const(self, value: Any) -> str:
        """A name for `value` in the dispatcher's namespace."""
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def tree(self, e: str, x: Any) -> bool:
        """Check that `e` is structured as x: tuples, lists and dicts (of str keys) by
        exact type and size, None as itself, leaves by the entry."""
        t = type(x)
        if t is tuple or t is list or (t is dict and all(type(k) is str for k in x)):
            self.conds.append(f"type({e}) is {t.__name__} and len({e}) == {len(x)}")
            if t is dict:  # its keys, then their values
                keys = {k: self.const(k) for k in sorted(x)}
                self.conds.extend(f"{n} in {e}" for n in keys.values())
                return all(self.tree(f"{e}[{n}]", x[k]) for k, n in keys.items())
            return all(self.tree(f"{e}[{i}]", c) for i, c in enumerate(x))
        if x is None:
            self.conds.append(f"{e} is None")
            return True
        if not takes(x):
            return False  # a container jit takes apart (a namedtuple), an array-like
        self.leaves.append(e)
        return True

    def static(self, e: str, x: Any) -> bool:
        """Check that `e` is the static value x: a number, string, None or a tuple of
        them, by exact type and equality (as jit's cache compares them)."""
        if not _plain(x):
            return False
        if x is None:
            self.conds.append(f"{e} is None")
        else:
            self.conds.append(f"type({e}) is {type(x).__name__} and {e} == {self.const(x)}")
        return True


def takes(x: Any) -> bool:
    """Whether an entry takes `x` as it is, so that calls like this one are worth
    sending to it: an exact, C-contiguous and aligned ndarray, a NumPy scalar, or a
    Python float, int or bool (of exactly these types)."""
    t = type(x)
    if t is np.ndarray:
        return x.flags.c_contiguous and x.flags.aligned
    return t is float or t is int or t is bool or isinstance(x, np.generic)


def _plain(x: Any) -> bool:
    return x is None or type(x) in _ATOMS or (type(x) is tuple and all(map(_plain, x)))
