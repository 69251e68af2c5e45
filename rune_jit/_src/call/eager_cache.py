"""Eager transformations and loops, cached by signature as `jit` caches its calls.

Outside jit, a call of a transformed function (`rune.grad(f)(x)`, `rune.vmap(f)(xs)`,
...), of `rune.scan` or of `rune.iterate` runs the program jit would make of that call,
kept for the next call that finds it:

- **Keyed by its functions and static values, through a guard.** A table per function
  (weakly: by its code object, so a step defined anew at each call of the function that
  holds it finds its table) holds up to ENTRIES entries, most recent first. An entry
  is a guard (rune_jit/_src/guard.py) of the functions, the transformation's parameters and
  the arguments it does not trace (grad's arguments outside `argnums`, its keywords; a
  loop's `length`, `reverse`, `max_steps`), compared by value (arrays by contents), and
  the program table of a jit for the arguments it traces: one program per signature,
  found on the quick path of jitted calls. A changed closure cell, global, default or
  captured array fails the guard: the call makes a new entry, which traces again.
- **Compiled when it pays.** A transformation's first call with a signature runs its
  traced program in the interpreter (as the eager path always did: no compilation for
  a function called once); its second compiles it. A loop compiles at its first call,
  as loops called outside jit always have.
- **Traced as jit traces them.** A transformation's traced arguments are those it
  transforms (grad's `argnums`) and every other one that holds an array, as under jit:
  a NumPy array cannot be indexed with a traced index, a traced array can, and the
  same program must compute on both paths. Python numbers outside `argnums` stay
  static, as in JAX.
- **Not cached**: a transformation whose functions the guard cannot vouch for (no
  digest: they read lists, dicts, objects of other classes, numpy.random, ...) is
  traced as above at every call, and not kept; a loop of such functions, arguments that
  are not plain arrays and numbers (or pytrees of them), calls under a trace (the
  transformation is staged into it) or with jit disabled run as before at every call.

Like a jitted function's, a cached call runs what the first trace recorded: Python side
effects of `f` (a `print`) happen when it is traced, not at every call (use
`rune.debug.print`); what `f` reads from outside Python values (files, the clock) is
read when it is traced.
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import backend, eager, tree
from ..passes.simplify import simplify
from ..trace import state
from . import compile_log, python_mode
from .arguments import Transformed, checked_argnums, quick_flatten
from .guard import Check, guard
from .jitted import Jitted, Program

ENTRIES = 8  # guards kept per function: a closure that changes at every call evicts
NOT_CACHED = eager.NOT_CACHED


class _Entry(NamedTuple):
    structure: tree.TreeDef | None  # of the static arguments (None: there are none)
    check: Check  # of the functions, the parameters and the static arguments' leaves
    program: "EntryPrograms"


# id(key) -> (a weak reference to the key, its entries, most recent first): a dict by id
# is looked up without making a weak reference per call, as a WeakKeyDictionary would
_tables: dict[int, tuple[weakref.ref, list[_Entry]]] = {}
# keys whose guard could not be made: not tried again (the digest's walk is the cost)
_refused: weakref.WeakSet = weakref.WeakSet()


class _Calls(threading.local):
    def __init__(self):
        self.stack: list[Callable] = []


_calls = _Calls()  # this thread's calls in progress: what their programs trace


def _traced(*dynamic: Any) -> Any:
    """What every eager program traces: the call in progress (it holds the functions,
    which the program table must not: a cache of them would keep them alive)."""
    return _calls.stack[-1](*dynamic)


class EntryPrograms(Jitted):
    """jit's program table for the traced arguments of one entry. `tiered`: a program is
    interpreted at its first call and compiled at its second. Its traces are never saved
    (RUNE_JIT_SAVE_TRACES): its function is `_traced`, whose digest would not tell
    entries apart (compiled code goes to the disk cache, keyed by the program, as ever)."""

    def __init__(self, name: str, tiered: bool):
        super().__init__(_traced, ())
        self.__name__ = self.__qualname__ = name
        self.tiered = tiered

    def _saved_or_new(self, args: tuple, leaves: list, in_tree, dyn, key) -> Program:
        tr = self._trace(args, leaves, in_tree, dyn, {})
        backend.stats["traced"] += 1
        compile_log.event("traced")
        if self.tiered:
            run = backend.get("interpret").compile(simplify(tr.region))
            return Program(run, tr.out_tree, tr.checks, pending=tr.region)
        return Program(backend.current().compile(tr.region), tr.out_tree, tr.checks)


def call(fn: Any, guarded: tuple, static: Any, dynamic: tuple, run: Callable, name: Any,
         tiered: bool) -> Any:
    """`run(*dynamic)`, through the cache of `fn`'s table: `guarded` (fn among them) and
    `static`, a pytree, hold every value besides `dynamic` that `run` depends on;
    `str(name)` names the program in compile logs. NOT_CACHED if the call is not one
    to cache (the caller then runs it as before)."""
    if state.builder is not None or python_mode.active():
        return NOT_CACHED
    flat = quick_flatten(dynamic)
    if flat is None:
        return NOT_CACHED
    key = fn.__code__ if type(fn) is types.FunctionType else _key(fn)
    found = _tables.get(id(key))
    leaves, structure = tree.flatten(static) if static else ((), None)
    value = (*guarded, tuple(leaves))
    entry = None
    if found is not None and found[0]() is key:
        for e in found[1]:
            if e.structure == structure and e.check(value):
                entry = e
                break
    if entry is None:
        entry = _new_entry(key, structure, value, name, tiered)
    if entry is not None:
        program = entry.program
        quick = program.quick_run(flat[0])  # a program it has compiled (jit.py)
        if quick is not None:
            return quick(flat[1])
    elif tiered:  # a transformation the guard cannot vouch for: traced as jit traces it
        program = _programs(name, tiered)  # (its arguments traced), and not kept
    else:
        return NOT_CACHED
    _calls.stack.append(run)
    try:
        return program(*dynamic)
    finally:
        _calls.stack.pop()


def _programs(name: Any, tiered: bool) -> EntryPrograms:
    # a class of its own, whose __call__ may become its native entry (jit.py)
    return type("EntryPrograms", (EntryPrograms,), {})(str(name), tiered)


def _new_entry(key: Any, structure: tree.TreeDef | None, value: tuple, name: Any,
               tiered: bool) -> _Entry | None:
    if key is None or key in _refused:
        return None
    check = guard(value)
    if check is None:
        if guard(value[:-1]) is None:  # the functions, not the static arguments
            _refused.add(key)
        return None
    entry = _Entry(structure, check, _programs(name, tiered))
    found = _tables.get(id(key))
    if found is None or found[0]() is not key:
        found = _tables[id(key)] = (weakref.ref(key, _forget(id(key))), [])
    found[1].insert(0, entry)
    del found[1][ENTRIES:]
    return entry


def _forget(k: int) -> Callable[[weakref.ref], None]:
    tables = _tables  # held here: at exit the module's globals are gone before the keys

    def forget(ref: weakref.ref) -> None:  # the key died: its table goes with it
        if tables.get(k, (None,))[0] is ref:
            del tables[k]

    return forget


def _key(fn: Any) -> Any:
    """What a function's table is kept under, weakly: a Python function's code (shared by
    the functions made from it), else the object itself; None if it cannot be."""
    while isinstance(fn, Transformed):
        fn = fn.transformation[1]
    if isinstance(fn, types.FunctionType):
        return fn.__code__
    try:
        weakref.ref(fn)
    except TypeError:
        return None
    return fn


def transformed(t: Transformed, args: tuple, kwargs: dict) -> Any:
    """A transformed function called outside jit: its traced arguments are those its
    function names in `argnums` (grad, jacfwd, ...) or all (vmap); the others, and the
    keywords, are static."""
    make, f, params, options = t.transformation
    nums = getattr(t._fn, "argnums", None)
    if type(nums) is int and 0 <= nums < len(args) and len(args) == 1:  # the usual case
        traced: tuple | None = (nums,)
    else:
        traced = _traced_positions(t, args)
    if traced is None:
        return NOT_CACHED
    fn = t._fn
    if len(traced) == len(args):
        static, dynamic, run = (), args, (lambda *values: fn(*values, **kwargs))
    else:
        dynamic = tuple(args[i] for i in traced)
        static = tuple(a for i, a in enumerate(args) if i not in traced)

        def run(*values: Any) -> Any:
            full, it = list(args), iter(values)
            for i in traced:
                full[i] = next(it)
            return fn(*full, **kwargs)

    # the transformation's parameters are a pytree too (vmap's in_axes may be a dict)
    fixed = (params, options, static, kwargs) if params or options or static or kwargs else ()
    return call(f, (make, f), fixed, dynamic, run, _Name(make, f), tiered=True)


class _Name(NamedTuple):
    """A transformed function's name in compile logs (made when a program is)."""
    make: Callable
    f: Any

    def __str__(self) -> str:
        return f"{self.make.__name__}({getattr(self.f, '__name__', '?')})"


def _traced_positions(t: Transformed, args: tuple) -> tuple[int, ...] | None:
    """The positional arguments the transformation traces (its `argnums`), and those
    that hold arrays: under jit those are traced values, and so they are here, so that
    the function sees what it sees under jit (a NumPy array cannot be indexed with a
    traced index: `y[rnp.argmax(x)]` computes under jit(grad(f)) and must here). Python
    numbers outside `argnums` stay as they are, as in JAX. None if `argnums` are out of
    range (the call itself says so)."""
    fn, nargs = t._fn, len(args)
    while isinstance(fn, Transformed):
        fn = fn._fn
    nums = getattr(fn, "argnums", None)
    if nums is None:
        return tuple(range(nargs))
    try:
        chosen = set(checked_argnums(nums, nargs, "grad"))
    except ValueError:
        return None
    return tuple(i for i in range(nargs) if i in chosen or _holds_array(args[i]))


def _holds_array(x: Any) -> bool:
    return any(isinstance(leaf, np.ndarray) for leaf in tree.leaves(x))


eager.install_cache(call, transformed)
