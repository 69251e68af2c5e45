"""jit: compile a function once per signature and run it as native code.

A signature is the arguments' pytree structure, each leaf's shape, dtype and
weakness, and the values of the static arguments. Called inside a trace (a
transformation's, an outer jit's, a loop step's) a jitted function is staged into
it, so `grad(jit(f))` sees f's operations, and a jitted function may close over the
enclosing trace's values: `grad(lambda a: jit(lambda x: x * a)(2.0))`.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Callable, NamedTuple, Sequence

from . import backend, code_digest, compile_log, config, dispatch, gc_pause, python_mode
from . import tree
from . import saved_programs as saved
from .api import Traced, trace_fn, with_args
from .arguments import (as_argnums, as_value, flatten_args, is_python_scalar, leaf_type,
                        quick_flatten, wraps)
from .forks import renew_in_child
from .interpret import eval_region
from .trace import current, state as trace_state
from .tracebacks import api_boundary, hidden


class Program(NamedTuple):
    executable: backend.Executable
    out_tree: tree.TreeDef
    checks: Any = None  # api.WeakIntChecks: weak int arguments to check at every call
    # a program interpreted for now (an eager call's first: eager_cache.py), and the
    # region to compile when it is called again
    pending: Any = None


class Jitted:
    def __init__(self, f: Callable, static_argnums: Sequence[int],
                 static_argnames: Sequence[str] = ()):
        self.f = f
        self.static = tuple(static_argnums)
        self.static_names = frozenset(static_argnames)
        self.cache: dict[Any, Program] = {}
        # calls of plain values (arrays, numbers, NumPy scalars, tuples and dicts of them,
        # plain static values), by `_quick_key`: the backend and how to run its program
        # on the leaves
        self.quick: dict[tuple, tuple[str, Callable[[list], Any]]] = {}
        renew_in_child(self, "lock")
        wraps(f)(self)

    def _split(self, args: tuple, kwargs: dict):
        static_kw = {k: v for k, v in kwargs.items() if k in self.static_names}
        kwargs = {k: v for k, v in kwargs.items() if k not in self.static_names}
        # (the static positional arguments, the static keyword ones)
        statics = (tuple(args[i] for i in self.static if i < len(args)),
                   tuple(sorted(static_kw.items())))
        try:
            hash(statics)
        except TypeError:
            raise TypeError(f"jit: static arguments must be hashable, got {statics!r}") from None
        dyn = tuple(i for i in range(len(args)) if i not in self.static)
        try:
            leaves, in_tree, _ = flatten_args((tuple(args[i] for i in dyn), kwargs), "args")
        except TypeError as e:
            raise (_argument_error(args, dyn, kwargs) or e) from None
        spec = tuple((t.shape, t.dtype, w) for t, w in (leaf_type(x) for x in leaves))
        return leaves, in_tree, dyn, (in_tree, spec, statics, config.backend,
                                      dispatch.static_key(statics))

    def _trace(self, args: tuple, leaves, in_tree, dyn, static_kw: dict) -> Traced:
        with compile_log.stage("trace"):
            tr = trace_fn(lambda dyn_args, kw: with_args(self.f, args, dyn, {**kw, **static_kw})(
                *dyn_args), leaves, in_tree)
        compile_log.warn_if_unrolled(tr.region, getattr(self, "__name__", "?"))
        return tr

    def _staged(self, args: tuple, leaves: list, in_tree, dyn, static_kw: dict) -> Any:
        """The call inside an enclosing trace (a transformation's, an outer jit's, a loop
        step's): the function traced on abstract arguments, as at the top level (so the
        same programs fail the same way), and its region inlined into the enclosing
        trace with the values it closes over (the enclosing trace's tracers, maybe), as
        JAX inlines a jit into the jaxpr it is called in. Nothing is compiled or cached:
        the captures are the enclosing trace's values of this call."""
        tr = self._trace(args, leaves, in_tree, dyn, static_kw)
        tr.check(leaves)
        outs = eval_region(tr.region, tr.captures + [as_value(x) for x in leaves])
        return tree.unflatten(tr.out_tree, outs)

    def _program(self, args: tuple, leaves: list, in_tree, dyn, key) -> Program:
        program = self.cache.get(key)
        if program is not None and program.pending is not None:  # its second call
            with self.lock:  # (once, if two threads make it at once)
                program = self.cache[key]
                if program.pending is not None:
                    with compile_log.call(f"jit({getattr(self, '__name__', '?')}) for "
                                          f"{compile_log.signature(key)}, called again"):
                        program = self.cache[key] = _compiled(program)
        if program is None:
            with self.lock:  # concurrent first calls compile once
                program = self.cache.get(key)
                if program is None:
                    if self.cache and compile_log.enabled():
                        compile_log.logger.info("jit(%s): %s", self.__name__,
                                                compile_log.explain_miss(list(self.cache), key))
                    with compile_log.call(f"jit({getattr(self, '__name__', '?')}) for "
                                          f"{compile_log.signature(key)}"), gc_pause.paused():
                        program = self._saved_or_new(args, leaves, in_tree, dyn, key)
                    self.cache[key] = program
        return program

    def _saved_or_new(self, args: tuple, leaves: list, in_tree, dyn, key) -> Program:
        """The program an earlier process saved for this function and signature, else
        a new one: traced, compiled (or loaded from the disk cache) and saved."""
        k = saved.record_key(self.f, *key[:3])
        found = saved.load(k) if k is not None else None
        if found is not None:
            compile_log.event("saved program")
            return Program(*found)
        tr = self._trace(args, leaves, in_tree, dyn, dict(key[2][1]))
        backend.stats["traced"] += 1
        compile_log.event("traced")
        program = Program(backend.current().compile(tr.region), tr.out_tree, tr.checks)
        if k is not None and tr.checks is None:  # a record does not keep checks: trace again
            saved.save(k, program.executable, program.out_tree)
        return program

    def __repr__(self) -> str:
        return f"rune_jit.jit({self.f!r})"

    def __reduce__(self) -> str | tuple:
        """Pickled by name where its module holds it (`@jit def f`), else by the function
        it wraps and its static arguments; never with its compiled programs, which the
        receiving process finds in the disk cache or compiles."""
        owner: Any = sys.modules.get(self.__module__)
        for part in self.__qualname__.split("."):
            owner = getattr(owner, part, None)
        if owner is self:
            return self.__qualname__
        return _rebuild, (self.f, self.static, tuple(sorted(self.static_names)))

    def _general(self, *args: Any, **kwargs: Any) -> Any:
        """A call (one the native entry does not take): on the quick path if it can be."""
        quick = None
        if not python_mode.active() and trace_state.builder is None:
            quick = self._quick_key(args, kwargs)
            run = None if quick is None else self.quick_run(quick[0])
            if run is not None:
                try:
                    return run(quick[1])
                except Exception as err:  # an API boundary, as _slow's
                    raise hidden(err)  # noqa: B904 (itself)
        return self._slow(quick, args, kwargs)

    # replaced, per jitted function, by the native entry of its latest signature; the
    # entry comes back to _general for any other call
    __call__ = _general

    @api_boundary
    def _slow(self, quick: tuple | None, args: tuple, kwargs: dict) -> Any:
        if python_mode.active():
            return self.f(*args, **kwargs)
        leaves, in_tree, dyn, key = self._split(args, kwargs)
        if current() is not None:  # inside a trace: staged into it
            return self._staged(args, leaves, in_tree, dyn, dict(key[2][1]))
        program = self._program(args, leaves, in_tree, dyn, key)
        if program.checks is not None:  # only calls with Python ints get here
            program.checks.check(leaves)
        if program.pending is None:  # compiled: later calls may take a quicker way
            if quick is not None:
                self.quick[quick[0]] = (config.backend, _runner(program, leaves))
            self._install_entry(program, args, kwargs, leaves)
        # Python numbers as the arrays they are traced as (the interpreter takes no others)
        outs = program.executable.run([as_value(x) for x in leaves])
        return tree.unflatten(program.out_tree, outs)

    def quick_run(self, key: tuple) -> Callable[[list], Any] | None:
        """How to run the program of the calls whose quick key is `key`, if there is one
        (for the backend now chosen)."""
        found = self.quick.get(key)
        return found[1] if found is not None and found[0] == config.backend else None

    def _quick_key(self, args: tuple, kwargs: dict) -> tuple[tuple, list] | None:
        """(the key of this call on the quick path, its leaves): its plain arguments'
        `quick_flatten` and its static values, if they are plain too; else None."""
        if not self.static and not kwargs:
            return quick_flatten(args)
        n = len(args)
        statics = tuple([args[i] for i in self.static if i < n])
        dyn: Any = tuple([a for i, a in enumerate(args) if i not in self.static])
        static_kw: tuple = ()
        if kwargs:  # as _split divides them
            static_kw = tuple(sorted([kv for kv in kwargs.items() if kv[0] in self.static_names]))
            dyn = (dyn, {k: v for k, v in kwargs.items() if k not in self.static_names})
        if not dispatch.plain(statics) or (static_kw and not dispatch.plain(static_kw)):
            return None
        flat = quick_flatten(dyn)
        return None if flat is None else ((flat[0], dispatch.static_key((statics, static_kw))),
                                          flat[1])

    def _install_entry(self, program: Program, args: tuple, kwargs: dict, leaves: list
                       ) -> None:
        """Calls like this one go straight to the backend's entry from now on: it is this
        function's `__call__`, called with the leaves alone or (made for the plan of the
        call's structure: dispatch.py) with calls of that structure. (A running entry,
        this call's maybe, is safe to replace: its caller holds it until it returns.)"""
        weak = _weak_bits(leaves)
        if (program.checks is not None or not _flat(program.out_tree) or weak is None
                or not all(map(dispatch.takes, leaves))):
            return
        plan = None
        if kwargs or self.static or len(args) != len(leaves) or not all(
                map(dispatch.takes, args)):  # not each argument a leaf
            plan = dispatch.plan(args, kwargs, self.static, self.static_names)
            if plan is None:
                return
        entry = program.executable.entry(self._general, weak, plan)
        if entry is not None:
            type(self).__call__ = entry

    @api_boundary
    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """The program's stages for these arguments as text: `.ir` (after the passes the
        backend runs before compiling), `.mlir` (the same program in upstream MLIR
        dialects: docs/mlir.md), and with the CPU backend `.llvm_ir`, `.asm`;
        `.as_text(dialect)` names them ("mlir", the default, "ir", "llvm", "asm")."""
        leaves, in_tree, dyn, key = self._split(args, kwargs)
        return backend.current().lower(self._trace(args, leaves, in_tree, dyn,
                                                   dict(key[2][1])).region)


code_digest.register_class(Jitted, lambda d, j: (d.put("jit", j.static, sorted(
    j.static_names)), d.walk(j.f)))


def _static_both_ways(f: Callable, nums: tuple[int, ...], names: tuple[str, ...]
                      ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Static positions and names, each completed from the other by f's signature."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):  # a builtin, say: no signature to read
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
    by_name = {n: i for i, n in enumerate(positional)}
    all_nums = tuple(sorted(set(nums) | {by_name[n] for n in names if n in by_name}))
    all_names = tuple(sorted(set(names) | {positional[i] for i in nums
                                            if 0 <= i < len(positional)}))
    return all_nums, all_names


def _argument_error(args: tuple, dyn: tuple, kwargs: dict) -> TypeError | None:
    """The error of the bad leaf among the arguments, naming its path from the argument
    as the caller numbered or named it (args[2]['w'], kwargs['lr'])."""
    try:
        for i in dyn:
            flatten_args(args[i], f"args[{i}]")
        for k, v in kwargs.items():
            flatten_args(v, f"kwargs[{k!r}]")
    except TypeError as e:
        return e
    return None


def _runner(program: Program, leaves: list) -> Callable[[list], Any]:
    """How the quick path runs `program` on the leaves of a call like this one: the
    program's native entry if it has one and its outputs are one array or a tuple of
    them (told which leaves are Python numbers), else the program itself."""
    ex, out, checks = program.executable, program.out_tree, program.checks

    def run(values: Sequence[Any]) -> Any:
        return out.fill(ex.run(values))

    weak = _weak_bits(leaves)
    entry = ex.entry(lambda *values: run(values), weak) if _flat(out) and weak is not None else None
    call = entry if entry is not None else (lambda *values: run(values))

    def quick(values: list) -> Any:
        if checks is not None:
            checks.check(values)
        return call(*values)

    return quick


def _weak_bits(leaves: list) -> int | None:
    """A bit for each leaf that is a Python number (traced weakly), as entries take it;
    None if one is past the 64 bits an entry reads."""
    bits = sum(1 << i for i, x in enumerate(leaves) if is_python_scalar(x))
    return None if bits >> 64 else bits


def _flat(out: tree.TreeDef) -> bool:
    """Outputs a native entry returns as they are: one array, or a tuple of two or more
    arrays (an entry returns a single output bare: not a tuple of one)."""
    return out.kind is None or (out.kind is tuple and len(out.children()) > 1
                                and all(c.kind is None for c in out.children()))


def _compiled(program: Program) -> Program:
    """An interpreted program compiled (kept interpreted if the backend cannot)."""
    try:
        executable = backend.current().compile(program.pending)
    except NotImplementedError:
        return program._replace(pending=None)
    return program._replace(executable=executable, pending=None)


def _rebuild(f: Callable, static_argnums: tuple, static_argnames: tuple) -> Jitted:
    """A pickled jitted function, in the process that unpickles it."""
    return jit(f, static_argnums=static_argnums, static_argnames=static_argnames)


def jit(f: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Any:
    """Compile `f` to native code, once per signature: the arguments' pytree structure,
    each leaf's shape, dtype and weakness, and the values of the static arguments
    (`static_argnums` by position, `static_argnames` by name: each names the other's
    parameters too, as in JAX; static values must be hashable). Usable as `@jit` or
    `@jit(static_argnums=...)`. Inside a trace (a transformation, an outer jit, a loop
    step), a jitted function is staged into it, as JAX inlines it: `grad(jit(f))` sees
    f's operations, and f may close over the enclosing trace's traced values.

    >>> import numpy as np, rune_jit as rune
    >>> power = rune.jit(lambda x, n: x ** n, static_argnames="n")
    >>> power(np.arange(3.0), n=2).tolist()
    [0.0, 1.0, 4.0]
    """
    nums = as_argnums(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)

    def make(g: Callable) -> Jitted:
        all_nums, all_names = _static_both_ways(g, nums, names)
        # a class of its own, whose __call__ can become this function's native entry
        return type("Jitted", (Jitted,), {})(g, all_nums, all_names)

    return make if f is None else make(f)

