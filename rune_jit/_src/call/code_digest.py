"""A digest of everything a traced function's program can depend on, so that a new
process can find on disk the program an earlier process traced, and skip the trace.

The digest covers the function's bytecode and constants, the values it captures (closure
cells, defaults, the globals its code names) and, through them, the functions it calls,
recursively. Values count by content: numbers, strings, bytes, NumPy arrays, scalars and
dtypes, and tuples and frozensets of these. A list, dict or set is state that the trace
may read or change as it runs (a list of calls, say): a function that reaches one has
no digest. The code of rune_jit, NumPy and a few standard modules
counts by name: their versions and rune_jit's source are part of every disk cache key.

A module of the user's that the code names as a global (`mylib.g`) counts by the
attributes the code may read from it. Anything else (an object of another class, a bound
method, a module captured in a closure) could change the trace in ways the digest cannot
see: such a function gets no digest, and is traced in every process, as it would be
without this cache. What a trace reads from
outside Python values (files, the environment, a random generator's state) is not seen:
like a trace in one process, the program keeps what the first trace read.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import sys
import types
from typing import Any, Callable

import numpy as np

from ..source_info import ours

# modules whose code is covered by the versions in the cache key, or is part of Python
TRUSTED = ("rune_jit", "numpy", "math", "builtins", "functools", "operator", "itertools",
           "_operator", "_functools")
# ...but whose functions give other results each call, or read state the digest cannot see
IMPURE = ("numpy.random",)
# ...and their functions that read or write files: a trace calling one depends on (or
# changes) what no Python value holds
IMPURE_FUNCTIONS = frozenset(("numpy", name) for name in (
    "load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "save", "savetxt", "savez",
    "savez_compressed"))
# builtins through which code reads what its bytecode does not name (a global by a computed
# name, a file): a function that calls one has no digest
OPAQUE_BUILTINS = frozenset({"globals", "locals", "vars", "getattr", "eval", "exec", "open",
                             "compile", "__import__", "input", "breakpoint"})


class Uncacheable(Exception):
    """The digest cannot vouch for this value."""


def digest(*values: Any) -> str | None:
    """A hex digest of `values` (functions, static arguments); None if one of them
    reaches something whose effect on a trace the digest cannot see."""
    d = _Digest()
    try:
        for v in values:
            d.walk(v)
    except (Uncacheable, RecursionError):
        return None
    return d.hash.hexdigest()


def trusted(module: str | None) -> bool:
    return (module is not None and module.split(".")[0] in TRUSTED
            and not any(module == m or module.startswith(m + ".") for m in IMPURE))


class _Digest:
    def __init__(self):
        # NumPy's functions count by name: its version must be in the key (Python's
        # for the bytecode; rune_jit's and LLVM's are in every disk cache key)
        self.hash = hashlib.sha256(f"{sys.version}|{np.__version__}".encode())
        self.seen: dict[int, int] = {}
        self.alive: list = []  # keeps walked objects alive, so their ids stay theirs

    def put(self, *tokens: Any) -> None:
        self.hash.update(repr(tokens).encode())

    def walk(self, obj: Any) -> None:
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            self.put(type(obj).__name__, obj)
            return
        if id(obj) in self.seen:  # shared or cyclic (a recursive function)
            self.put("ref", self.seen[id(obj)])
            return
        self.seen[id(obj)] = len(self.seen)
        self.alive.append(obj)
        _WALKERS.get(type(obj), _instance)(self, obj)

    def sequence(self, obj) -> None:
        self.put(type(obj).__name__, len(obj))
        for x in obj:
            self.walk(x)

    def keywords(self, obj: dict | None) -> None:
        """Keyword defaults or arguments (a dict the digest trusts, unlike a user's)."""
        self.walk(tuple(sorted((obj or {}).items())))

    def array(self, obj: np.ndarray) -> None:
        self.put("array", obj.dtype.str, obj.shape)
        self.hash.update(np.ascontiguousarray(obj).tobytes())

    def code(self, co: types.CodeType) -> None:
        self.put("code", co.co_code, co.co_names, co.co_varnames, co.co_freevars,
                 co.co_cellvars, co.co_argcount, co.co_posonlyargcount,
                 co.co_kwonlyargcount, co.co_flags)
        for c in co.co_consts:
            self.walk(c)

    def function(self, f: types.FunctionType) -> None:
        # library code: its name, and what it closes over. rune_jit's own wrappers take
        # the name and module of what they wrap (functools.wraps): known by their file
        if ours(f.__code__.co_filename):
            self.put("rune_jit function", f.__code__.co_qualname if hasattr(
                f.__code__, "co_qualname") else f.__code__.co_name, f.__code__.co_firstlineno)
        elif trusted(f.__module__):
            self.put("library function", *pure(f.__module__, f.__qualname__))
        else:
            self.code(f.__code__)
            self.names(f)
        self.walk(f.__defaults__)
        self.keywords(f.__kwdefaults__)
        self.keywords(f.__dict__)  # attributes the code may read (f.scale, __wrapped__)
        self.walk(tuple(cell_value(c) for c in f.__closure__ or ()))

    def names(self, f: types.FunctionType) -> None:
        """The globals f's code (or code nested in it) may read: attribute names that
        happen to be globals too are walked as well, which costs nothing but caution."""
        names = code_names(f.__code__)
        for name in sorted(names):
            if name in f.__globals__:
                self.put("global", name)
                self.global_value(f.__globals__[name], names)
            elif hasattr(builtins, name):
                if name in OPAQUE_BUILTINS:
                    raise Uncacheable(name)
                self.put("builtin", name)
                self.walk(getattr(builtins, name))  # a patched builtin is not the original

    def global_value(self, value: Any, names: set[str]) -> None:
        """A module counts by the attributes the code may read from it (any of its names,
        `mylib.g` or `mylib.sub.g`: so a patched `np.sin` or a constant set on a module
        counts too); other values count whole."""
        if not isinstance(value, types.ModuleType):
            self.walk(value)
        elif not trusted(value.__name__) and value.__name__.split(".")[0] in TRUSTED:
            raise Uncacheable(value)  # numpy.random: its results change
        elif id(value) in self.seen:
            self.put("ref", self.seen[id(value)])
        else:
            self.seen[id(value)] = len(self.seen)
            self.alive.append(value)
            self.put("module", value.__name__)
            attributes = vars(value)
            for name in sorted(names):
                if name in attributes:
                    self.put("attribute", name)
                    self.global_value(attributes[name], names)
                elif "__getattr__" in attributes:  # computed attributes
                    if not trusted(value.__name__):
                        raise Uncacheable(value)  # unseen
                    found = getattr(value, name, Empty)  # numpy's: submodules, lazily
                    if found is not Empty:
                        self.put("attribute", name)
                        self.global_value(found, names)

    def named(self, obj) -> None:
        """A module, class or builtin function of trusted code: its name."""
        self.put(type(obj).__name__, *named_origin(obj))

    def partial(self, p: functools.partial) -> None:
        self.put("partial")
        self.walk(p.func)
        self.walk(p.args)
        self.keywords(p.keywords)


def named_origin(obj) -> tuple[str, str]:
    """(module, qualified name) of a module, class or builtin function of trusted code;
    Uncacheable for anything else's."""
    module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(
        obj, "__module__", None)
    if isinstance(obj, types.BuiltinFunctionType) and module is None:
        owner = getattr(obj, "__self__", None)  # a module's builtin: math.sin
        module = getattr(owner, "__name__", None)
    if not trusted(module):
        raise Uncacheable(obj)
    return pure(module, getattr(obj, "__qualname__", obj.__name__))


def pure(module: str, qualname: str) -> tuple[str, str]:
    """(module, qualname) of a trusted function, Uncacheable if it reads or writes files."""
    if (module, qualname) in IMPURE_FUNCTIONS:
        raise Uncacheable(f"{module}.{qualname}")
    return module, qualname


def walker_for(obj: Any) -> Callable[["_Digest", Any], None] | None:
    """How the digest walks `obj` by its class's rule, for a partial or an instance of a
    registered class: `walk(digest, obj)`, which calls only the digest's `put`, `walk` and
    `keywords` (so a guard can walk it too: rune_jit/_src/guard.py); else None."""
    if isinstance(obj, functools.partial):
        return _Digest.partial
    return next((w for cls, w in _KNOWN_CLASSES.items() if isinstance(obj, cls)), None)


def cell_value(cell) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # not yet assigned
        return Empty


class Empty:
    pass


def code_names(co: types.CodeType) -> set[str]:
    out = set(co.co_names)
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            out |= code_names(c)
    return out


# classes whose instances (and subclasses' instances) rune_jit knows how to digest:
# class -> walk(digest, obj); a jitted function registers itself (jit.py)
_KNOWN_CLASSES: dict[type, Callable[["_Digest", Any], None]] = {}


def register_class(cls: type, walk: Callable[["_Digest", Any], None]) -> None:
    """Digest instances of `cls` and its subclasses with `walk(digest, obj)`, which calls
    `digest.put(...)` and `digest.walk(...)` on what the object means."""
    _KNOWN_CLASSES[cls] = walk


def _instance(d: _Digest, obj) -> None:
    """An object of a class that has no walker of its own: one registered (a jitted
    function), a primitive, a NumPy function or dtype; anything else has no digest."""
    from ..primitive import Primitive

    known = walker_for(obj)
    if known is not None:
        known(d, obj)
    elif isinstance(obj, Primitive):
        d.put("primitive", obj.name)
    elif isinstance(obj, np.dtype):
        d.put("dtype", obj.str)
    elif isinstance(obj, np.generic):
        d.put("scalar", obj.dtype.str, obj.tobytes())
    elif isinstance(obj, type):
        d.named(obj)
    elif type(obj).__module__ == "numpy" and callable(obj):  # np.sum and such
        d.named(obj)
    else:
        raise Uncacheable(type(obj))


_WALKERS = {
    tuple: _Digest.sequence,
    frozenset: lambda d, s: d.sequence(sorted(s, key=repr)),
    np.ndarray: _Digest.array,
    types.CodeType: _Digest.code,
    types.FunctionType: _Digest.function,
    types.ModuleType: _Digest.named,
    types.BuiltinFunctionType: _Digest.named,
    np.ufunc: _Digest.named,
    functools.partial: _Digest.partial,
    type: _Digest.named,
}
