"""A jitted function's call, from its arguments to its results, through the tiers in
order (`Jitted._slow` reads top to bottom; docs/caching.md names each tier): the
native entry of the latest signature (`__call__` itself, once installed), the quick
key of plain arguments (`_general`), the signature cache (`Jitted.cache`), the program
an earlier process saved (saved_programs.py), and a new trace, compiled by the backend
(which keeps object code in the disk cache). Called inside a trace, a jitted function
is staged into it instead (`_staged`).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, NamedTuple, Sequence

from .. import backend, config, tree
from ..interpret import eval_region
from ..trace import current, state as trace_state
from ..tracebacks import api_boundary, hidden
from ..values import as_value, is_python_scalar
from . import code_digest, compile_log, dispatch, gc_pause, python_mode
from . import saved_programs as saved
from .arguments import flatten_args, leaf_type, quick_flatten, wraps
from .forks import renew_in_child
from .tracing import Traced, trace_fn, with_args


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
        return jitted, (self.f, self.static, tuple(sorted(self.static_names)))

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
        """A call the quicker tiers did not take, from its arguments to its results: its
        signature, its program (cached, saved, or traced and compiled), the weak ints
        checked, the quicker tiers readied for the calls like it, the program run."""
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
        backend runs before compiling), and with the CPU backend `.llvm_ir`, `.asm`."""
        leaves, in_tree, dyn, key = self._split(args, kwargs)
        return backend.current().lower(self._trace(args, leaves, in_tree, dyn,
                                                   dict(key[2][1])).region)


code_digest.register_class(Jitted, lambda d, j: (d.put("jit", j.static, sorted(
    j.static_names)), d.walk(j.f)))


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


def jitted(f: Callable, static_argnums: tuple[int, ...], static_argnames: tuple[str, ...]
           ) -> Jitted:
    """`f` jitted with these static arguments (each already naming the other's too), in
    a class of its own, whose `__call__` can become this function's native entry."""
    return type("Jitted", (Jitted,), {})(f, static_argnums, static_argnames)
