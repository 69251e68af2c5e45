"""What a jitted call's structure is, for the backend's fast dispatch of calls like it.

A native entry (backend/cpu/runtime/entry.py) takes a program's leaves, positionally: a call of
leaves alone (arrays, NumPy scalars, Python numbers) goes to it directly. A call made of
other things (a dict of arrays, a static int, keywords) is described by a `Plan`: the
checks that tell a call of the same structure (each container's exact type and size, a
dict's keys, each static value's exact type and equality) and where its leaves are. The
backend compiles a front for the plan (backend/cpu/runtime/front.py) that makes the checks and
calls the entry with the leaves; any other call goes to the general path as it was made,
which finds or compiles its program, never this one by mistake.

    >>> import numpy as np, rune_jit as rune
    >>> f = rune.jit(lambda d, n: d["a"] * n, static_argnums=1)
    >>> f({"a": np.ones(2)}, 3).tolist(), f({"a": np.ones(2)}, 3).tolist()
    ([3.0, 3.0], [3.0, 3.0])
    >>> for step in plan((np.ones(2), {"a": (2.0, None)}), {"n": 3}, (), {"n"}).steps:
    ...     print(step)
    ('equals', 2, 3)
    ('leaf', 0)
    ('type', 1, <class 'dict'>, 1)
    ('key', 1, 'a')
    ('type', 3, <class 'tuple'>, 2)
    ('item', 3, 0, <class 'tuple'>)
    ('leaf', 4)
    ('item', 3, 1, <class 'tuple'>)
    ('equals', 5, None)
"""

from __future__ import annotations

from typing import AbstractSet as Set, Any, NamedTuple, Sequence

import numpy as np

MISSED = object()  # what an entry made for a front returns for a call it refuses
_ATOMS = frozenset((int, float, bool, str, bytes))


class Plan(NamedTuple):
    """A call's structure. Its `nargs` positional arguments, then its keywords `names`
    (in the call's order), are values 0, 1, ...; each step checks a value or finds a new
    one (numbered on): ("type", v, type, size) a container of exactly this type and size;
    ("item", v, i, type) item i of a tuple or list; ("key", v, key) a dict's value at the
    key (refused if absent); ("equals", v, x) a static value of x's exact type equal to
    x; ("leaf", v) the next leaf, which the entry checks."""

    nargs: int
    names: tuple[str, ...]
    steps: tuple[tuple, ...]


def missed(*args: Any) -> object:
    """The slow path of an entry made for a front: the front takes over."""
    return MISSED


def plan(args: tuple, kwargs: dict, static: Sequence[int], static_names: Set[str]
         ) -> Plan | None:
    """The plan of calls structured as this one (`static` and `static_names` its static
    arguments), or None where it holds what a plan does not check (a namedtuple, an
    array-like, a static object): the general path keeps those."""
    names = tuple(kwargs)
    w = _Writer(len(args) + len(names))
    at = {k: len(args) + j for j, k in enumerate(names)}  # keywords: sorted, as jit's leaves
    parts = [(i, a, i in static) for i, a in enumerate(args)] + [
        (at[k], kwargs[k], k in static_names) for k in sorted(kwargs)]
    # static values first: comparing them may run a user's __eq__ (in a tuple), before
    # any value borrowed from a container is found
    ok = all(w.static(v, x) for v, x, is_static in parts if is_static) and all(
        w.tree(v, x) for v, x, is_static in parts if not is_static)
    return Plan(len(args), names, tuple(w.steps)) if ok else None


class _Writer:
    """Writes the steps of a plan, given the number of values the call starts with."""

    def __init__(self, values: int):
        self.values, self.steps = values, []

    def new(self, step: tuple) -> int:
        self.steps.append(step)
        self.values += 1
        return self.values - 1

    def tree(self, v: int, x: Any) -> bool:
        """Steps that check value v is structured as x (tuples, lists and dicts of str
        keys; None) and find its leaves, in the order jit flattens them."""
        t = type(x)
        if t is tuple or t is list or (t is dict and all(type(k) is str for k in x)):
            self.steps.append(("type", v, t, len(x)))
            if t is dict:  # keys in order, as pytrees flatten dicts
                return all(self.tree(self.new(("key", v, k)), x[k]) for k in sorted(x))
            return all(self.tree(self.new(("item", v, i, t)), c) for i, c in enumerate(x))
        if x is None:
            self.steps.append(("equals", v, None))
            return True
        self.steps.append(("leaf", v))
        return takes(x)  # else a container jit takes apart (a namedtuple), an array-like

    def static(self, v: int, x: Any) -> bool:
        """A step that checks value v is the static value x: a number, string, None or
        a tuple of them (compared as jit's cache compares them, by type and ==)."""
        self.steps.append(("equals", v, x))
        return plain(x) and not _signed_zero(x)  # the front compares by type and ==


def _signed_zero(x: Any) -> bool:
    """Whether x is or holds a float zero, which == does not tell from the other zero."""
    return (type(x) is float and x == 0.0) or (type(x) is tuple and any(map(_signed_zero, x)))


def takes(x: Any) -> bool:
    """Whether an entry takes `x` as it is, so that calls like this one are worth
    sending to it: an exact, C-contiguous and aligned ndarray, a NumPy scalar, or a
    Python float, int or bool (of exactly these types)."""
    t = type(x)
    if t is np.ndarray:
        return x.flags.c_contiguous and x.flags.aligned
    return t is float or t is int or t is bool or isinstance(x, np.generic)


def static_key(x: Any) -> Any:
    """What tells static values apart in a cache key, beside `==`: their types and, for
    floats, their bits. 3, 3.0 and True are equal, and so are 0.0 and -0.0, but a program
    traced with one is wrong for the other (an int32 result where float64 is due; 1 / n
    giving inf for -inf)."""
    t = type(x)
    if t is float:
        return t, x.hex()  # every NaN one key: it equals no value, a cache hit needs one
    if t is tuple:
        return t, tuple(map(static_key, x))
    return t, x


def plain(x: Any) -> bool:
    """Whether x is a static value fast paths may key on: a number, string, None or a
    tuple of them (hashable, compared by value, never a traced value)."""
    return x is None or type(x) in _ATOMS or (type(x) is tuple and all(map(plain, x)))
