"""Guards: a quick check that functions, and all they read, are as they were when traced.

The eager caches (eager_cache.py) keep the programs that eager transformations and loops
trace, and must never give one for a function that has changed since. The digest of a
function (code_digest) sees every change, but walks and hashes all that the function
reaches, each time: tens of µs. A guard is built once, by the digest's rules, from the
same values, and checks only what can have changed: code objects, defaults, closure
cells, the globals and module attributes the code names (present or absent), the
contents of arrays, recursively through the functions reached. What cannot change
(numbers, strings, dtypes, primitives, library code that closes over nothing of the
user's) is compared as it is.

A function made anew from the same code (a step defined inside the function that calls
`scan`) passes when what it closes over passes. A guard holds no function of the user's,
only code objects and copies (or hashes) of what it compares, so a cache of guards keeps
no user function alive. `guard(value)` is None where the digest is None (a list, dict or
set, an object of another class, numpy.random, `globals()`...): the caller does not cache.

>>> k = 2.0
>>> def scale(x):
...     return x * k
>>> check = guard(scale)
>>> check(scale)
True
>>> k = 3.0
>>> check(scale)
False
"""

from __future__ import annotations

import builtins
import hashlib
import sysconfig
import types
import weakref
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..primitive import Primitive
from ..source_info import ours
from . import code_digest as cd

Check = Callable[[Any], bool]
_MISSING = cd.Empty  # an absent global, attribute or cell content
_NEVER = object()  # what no value is (`x is _NEVER` never holds): no value pinned
_BUILTINS = vars(builtins)
ATOMS = (bool, int, float, complex, str, bytes)
SMALL = 1 << 14  # arrays of up to this many bytes are compared by copy; larger by hash
NAMED = (types.BuiltinFunctionType, np.ufunc, type, types.ModuleType)


def guard(value: Any) -> Check | None:
    """A check that a value is, for a trace, what `value` is now; None where the digest
    would be None (the builder refuses what the digest refuses, by the same rules).

    >>> w = np.ones(2)
    >>> check = guard((w, 2.0))
    >>> check((np.ones(2), 2.0)), check((w, 2)), guard([w]) is None
    (True, False, True)
    """
    try:
        return _Builder().match(value)[0]
    except (cd.Uncacheable, RecursionError):
        return None


# stable checks of library functions, made once: rnp.sin's is the same in every guard
_LIBRARY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Builder:
    """Makes checks; each with whether it is *stable*: passed by the very object it was
    made from without looking inside it (nothing in it can change)."""

    def __init__(self):
        # functions and (module, names) being built or built: recursion, cycles
        self.seen: dict[Any, Any] = {}

    def match(self, v: Any) -> tuple[Check, bool]:
        t = type(v)
        if v is None or t in ATOMS:
            return _atom(v), True
        if t is tuple:
            return self.sequence(v)
        if t is frozenset:  # as the digest orders it
            each, stable = self.sequence(tuple(sorted(v, key=repr)))
            return (lambda x: x is v or (type(x) is frozenset and each(
                tuple(sorted(x, key=repr))))), stable
        if t is np.ndarray:
            return _array(v), False
        if t is types.FunctionType:
            return self.function(v)
        if isinstance(v, np.generic):
            return _scalar(v), True
        if isinstance(v, np.dtype):
            s = v.str
            return (lambda x: isinstance(x, np.dtype) and x.str == s), True
        if isinstance(v, Primitive):
            return (lambda x: x is v), True
        if isinstance(v, NAMED) or (t.__module__ == "numpy" and callable(v)):
            cd.named_origin(v)  # trusted code's only, as in the digest
            return (lambda x: x is v), True
        if isinstance(v, ATOMS):  # a subclass (an IntEnum): as the digest, type and repr
            r = repr(v)
            return (lambda x: type(x) is t and repr(x) == r), True
        return self.replayed(v), False

    def sequence(self, v: tuple) -> tuple[Check, bool]:
        parts = [self.pinned(x) for x in v]
        n, stable = len(v), all(p is not _NEVER for p, _ in parts)

        def each(x) -> bool:
            if type(x) is not tuple or len(x) != n:
                return False
            for (p, c), y in zip(parts, x):
                if y is not p and not c(y):
                    return False
            return True

        if stable:  # immutable, and so is all it holds
            return (lambda x: x is v or each(x)), True
        return each, False

    def pinned(self, v: Any, check: tuple[Check, bool] | None = None) -> tuple[Any, Check]:
        """(v, its check) where v is stable, so that the very object passes at once (a
        guard may hold it: nothing of the user's changes in it); else (_NEVER, check)."""
        c, stable = check or self.match(v)
        return (v if stable else _NEVER), c

    def function(self, f: types.FunctionType) -> tuple[Check, bool]:
        found = self.seen.get(id(f)) or _LIBRARY.get(f)
        if found is None:
            library = _library(f)
            if library:
                cd.pure(f.__module__, f.__qualname__)  # not numpy's file functions
            # while f is built, a path back to it (recursion) checks the object itself
            self.seen[id(f)] = (_alive(f), library)
            found = self.seen[id(f)] = self.made(f, library)
            if library and found[1]:
                _LIBRARY[f] = found
        return found

    def made(self, f: types.FunctionType, library: bool) -> tuple[Check, bool]:
        parts = [self.match(f.__defaults__), self.keywords(f.__kwdefaults__),
                 self.keywords(f.__dict__)]
        cells = [self.match(cd.cell_value(c)) for c in f.__closure__ or ()]
        (defaults, _), (kwdefaults, _), (attributes, _) = parts
        # the code held weakly: a table of programs is kept by its code, weakly, and
        # would never go if its guards held that code
        code, cell_checks = weakref.ref(f.__code__), [c for c, _ in cells]

        def same(x) -> bool:
            if (type(x) is not types.FunctionType or x.__code__ is not code()
                    or not defaults(x.__defaults__) or not kwdefaults(x.__kwdefaults__)
                    or not attributes(x.__dict__)):
                return False
            for check, cell in zip(cell_checks, x.__closure__ or ()):
                if not check(cd.cell_value(cell)):
                    return False
            return True

        if library:  # counted by name and code: its globals are library code too
            if all(s for _, s in parts + cells):  # nothing in it can change
                alive = _alive(f)
                return (lambda x: alive(x) or same(x)), True
            return same, False
        names = self.names(f)
        return (lambda x: same(x) and names(x.__globals__)), False

    def keywords(self, d: dict | None) -> tuple[Check, bool]:
        """A dict of a function (keyword defaults, attributes), as the digest takes it."""
        if not d:
            return (lambda x: not x), True
        check, stable = self.match(tuple(sorted(d.items())))
        return (lambda x: check(tuple(sorted((x or {}).items())))), stable

    def names(self, f: types.FunctionType) -> Callable[[dict], bool]:
        """A check of a globals dict: each name f's code may read is what it was (a
        global, else a builtin, else absent from both)."""
        names = cd.code_names(f.__code__)
        present, builtin, absent = [], [], set()
        for name in sorted(names):
            if name in f.__globals__:
                value = f.__globals__[name]
                present.append((name, *self.pinned(value, self.global_value(value, names))))
                continue
            absent.add(name)
            if name in _BUILTINS:
                if name in cd.OPAQUE_BUILTINS:
                    raise cd.Uncacheable(name)
                builtin.append((name, *self.pinned(_BUILTINS[name])))
        absent = frozenset(absent)
        nowhere = frozenset(n for n in absent if n not in _BUILTINS)

        def check(g: dict) -> bool:
            # (a dict's keys view iterates over the smaller side: the names, not the dict)
            if not g.keys().isdisjoint(absent) or not _BUILTINS.keys().isdisjoint(nowhere):
                return False
            return _entries(g, present) and _entries(_BUILTINS, builtin)

        return check

    def global_value(self, value: Any, names: set[str]) -> tuple[Check, bool]:
        """A global or module attribute: a module by the attributes the code may read
        from it (each set of names on its own), anything else whole."""
        if not isinstance(value, types.ModuleType):
            return self.match(value)
        if not cd.trusted(value.__name__) and value.__name__.split(".")[0] in cd.TRUSTED:
            raise cd.Uncacheable(value)  # numpy.random: its results change
        key = (id(value), frozenset(names))
        if key in self.seen:  # a module reached again, for the same names: a cycle
            return (lambda x: x is value), False
        self.seen[key] = lambda x: x is value
        attributes = vars(value)
        present = [(n, *self.pinned(attributes[n], self.global_value(attributes[n], names)))
                   for n in sorted(names) if n in attributes]
        computed = []
        if "__getattr__" in attributes:  # computed attributes: only trusted code's
            if not cd.trusted(value.__name__):
                raise cd.Uncacheable(value)
            for n in sorted(names - attributes.keys()):
                found = getattr(value, n, _MISSING)
                if found is not _MISSING:
                    computed.append((n, self.global_value(found, names)[0]))
        absent = frozenset(names - attributes.keys())

        def check(x) -> bool:
            if x is not value or not vars(x).keys().isdisjoint(absent):
                return False
            if not _entries(vars(x), present):
                return False
            for n, c in computed:
                if not c(getattr(x, n, _MISSING)):
                    return False
            return True

        return check, False  # its attributes may be set

    def replayed(self, v: Any) -> Check:
        """An object the digest walks by a walker of its class (a jitted or transformed
        function, a partial): the walk is made again on the object checked, its tokens
        compared and the values it walks checked."""
        walker = cd.walker_for(v)
        if walker is None:
            raise cd.Uncacheable(type(v))
        record = _Record(self)
        walker(record, v)
        events, cls = record.events, type(v)

        def check(x) -> bool:
            if type(x) is not cls:
                return False
            replay = _Replay(events)
            walker(replay, x)
            return replay.ok and replay.done()

        return check


# where library code lives: rune_jit's, NumPy's and Python's own modules
_LIBRARY_DIRS = tuple(str(Path(p).resolve()) for p in (
    Path(__file__).parents[1], Path(np.__file__).parent, sysconfig.get_paths()["stdlib"]))


def _entries(d: dict, expected: list) -> bool:
    """Each (name, the value pinned or _NEVER, its check) holds of d[name]."""
    for n, v, c in expected:
        x = d.get(n, _MISSING)
        if x is not v and not c(x):
            return False
    return True


def _library(f: types.FunctionType) -> bool:
    """A function of trusted code (the digest counts it by name): rune_jit's, or of a
    trusted module and defined in its files (a function typed at a prompt or in a
    doctest may say its module is rune_jit's, but its code is the user's)."""
    return (ours(f.__code__.co_filename) or (
        cd.trusted(f.__module__) and f.__code__.co_filename.startswith(_LIBRARY_DIRS)))




class _Record:
    """Stands in for a digest while a class's walker runs: keeps what it puts and a check
    of each value it walks."""

    def __init__(self, builder: _Builder):
        self.builder, self.events = builder, []

    def put(self, *tokens: Any) -> None:
        self.events.append((True, repr(tokens)))

    def walk(self, obj: Any) -> None:
        self.events.append((False, self.builder.match(obj)[0]))

    def keywords(self, obj: dict | None) -> None:
        self.walk(tuple(sorted((obj or {}).items())))


class _Replay:
    """Stands in for a digest while the walker runs again: compares with the record."""

    def __init__(self, events: list):
        self.events, self.at, self.ok = events, 0, True

    def _next(self) -> tuple:
        if self.at >= len(self.events):
            self.ok = False
            return (None, None)
        self.at += 1
        return self.events[self.at - 1]

    def put(self, *tokens: Any) -> None:
        is_put, r = self._next()
        self.ok = self.ok and is_put is True and r == repr(tokens)

    def walk(self, obj: Any) -> None:
        is_put, check = self._next()
        self.ok = self.ok and is_put is False and check(obj)

    def keywords(self, obj: dict | None) -> None:
        self.walk(tuple(sorted((obj or {}).items())))

    def done(self) -> bool:
        return self.at == len(self.events)


def _atom(v: Any) -> Check:
    t = type(v)
    if t is float and (v == 0 or v != v):  # -0.0 is not 0.0 to a trace; NaN is not ==
        r = repr(v)
        return lambda x: type(x) is float and repr(x) == r
    if t is complex:
        r = repr(v)
        return lambda x: type(x) is complex and repr(x) == r
    if v is None or t is bool:
        return lambda x: x is v
    return lambda x: x is v or (type(x) is t and x == v)


def _scalar(v: np.generic) -> Check:
    t, data = type(v), v.tobytes()
    return lambda x: type(x) is t and x.tobytes() == data


def _contents(a: np.ndarray) -> bytes:
    data = np.ascontiguousarray(a)
    return data.tobytes() if data.nbytes <= SMALL else hashlib.blake2b(data).digest()


def _array(v: np.ndarray) -> Check:
    dtype, shape, data = v.dtype.str, v.shape, _contents(v)
    return lambda x: (type(x) is np.ndarray and x.shape == shape and x.dtype.str == dtype
                      and _contents(x) == data)


def _alive(f: Any) -> Check:
    """The very object `f` (held weakly: dead, it matches nothing)."""
    ref = weakref.ref(f)
    return lambda x: x is ref()

