"""jit: compile a function once per signature and run it as native code.

A signature is the arguments' pytree structure, each leaf's shape, dtype and
weakness, and the values of the static arguments. Under a transformation (an
argument is a traced value) a jitted function is simply traced through, so
`grad(jit(f))` sees f's operations.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import backend, code_digest, compile_log, config, python_loops, tree
from . import saved_programs as saved
from .api import trace_fn, with_args
from .arguments import as_argnums, flatten_args, leaf_type, wraps
from .forks import renew_in_child
from .trace import Tracer
from .tracebacks import api_boundary


class Program(NamedTuple):
    executable: backend.Executable
    out_tree: tree.TreeDef
    checks: Any = None  # api.WeakIntChecks: weak int arguments to check at every call


class Jitted:
    def __init__(self, f: Callable, static_argnums: Sequence[int],
                 static_argnames: Sequence[str] = ()):
        self.f = f
        self.static = tuple(static_argnums)
        self.static_names = frozenset(static_argnames)
        self.cache: dict[Any, Program] = {}
        # calls whose arguments are contiguous, aligned arrays, by _signature alone
        self.fast: dict[tuple, Program] = {}
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
        leaves, in_tree, _ = flatten_args((tuple(args[i] for i in dyn), kwargs), "args")
        spec = tuple((t.shape, t.dtype, w) for t, w in (leaf_type(x) for x in leaves))
        return leaves, in_tree, dyn, (in_tree, spec, statics, config.backend)

    def _trace(self, args: tuple, leaves, in_tree, dyn, static_kw: dict):
        with compile_log.stage("trace"):
            tr = trace_fn(lambda dyn_args, kw: with_args(self.f, args, dyn, {**kw, **static_kw})(
                *dyn_args), leaves, in_tree)
        compile_log.warn_if_unrolled(tr.region, getattr(self, "__name__", "?"))
        return tr.region, tr.out_tree, tr.checks

    def _program(self, args: tuple, leaves: list, in_tree, dyn, key) -> Program:
        program = self.cache.get(key)
        if program is None:
            with self.lock:  # concurrent first calls compile once
                program = self.cache.get(key)
                if program is None:
                    if self.cache and compile_log.enabled():
                        compile_log.logger.info("jit(%s): %s", self.__name__,
                                                compile_log.explain_miss(list(self.cache), key))
                    with compile_log.call(f"jit({getattr(self, '__name__', '?')}) for "
                                          f"{compile_log.signature(key)}"):
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
        region, out_tree, checks = self._trace(args, leaves, in_tree, dyn, dict(key[2][1]))
        backend.stats["traced"] += 1
        compile_log.event("traced")
        program = Program(backend.current().compile(region), out_tree, checks)
        if k is not None and checks is None:  # a record does not keep checks: trace again
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Replaced, per jitted function, by the native entry of its latest signature;
        the entry comes back here for any other call."""
        return self._general(*args, **kwargs)

    @api_boundary
    def _general(self, *args: Any, **kwargs: Any) -> Any:
        if python_loops.active():
            return self.f(*args, **kwargs)
        if not kwargs and not self.static:  # the common case: arrays in, arrays out
            try:
                program = self.fast[_signature(args)]
            except (AttributeError, KeyError):
                pass
            else:
                return program.out_tree.fill(program.executable.run_exact(args))
        leaves, in_tree, dyn, key = self._split(args, kwargs)
        statics = key[2]
        if any(isinstance(x, Tracer) for x in leaves + tree.leaves(statics)):
            return self.f(*args, **kwargs)  # under a transformation: trace through
        program = self._program(args, leaves, in_tree, dyn, key)
        if program.checks is not None:  # only calls with Python ints get here
            program.checks.check(leaves)
        if not kwargs and not self.static and _exact_arrays(args, leaves):
            self.fast[_signature(args)] = program
            self._install_entry(program)
        outs = program.executable.run(leaves)
        return tree.unflatten(program.out_tree, outs)

    def _install_entry(self, program: Program) -> None:
        """Calls with this signature go straight to the backend's entry from now on."""
        out = program.out_tree
        flat = out.kind is None or (out.kind is tuple and all(c.kind is None
                                                              for c in out.children))
        entry = program.executable.entry(self._general) if flat else None
        if entry is not None:
            # a running entry (this call may come from its slow path) is safe to replace:
            # its caller holds it until it returns
            type(self).__call__ = entry

    @api_boundary
    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """The program's stages for these arguments as text: `.ir` (after the passes the
        backend runs before compiling), and with the CPU backend `.llvm_ir`, `.asm`."""
        leaves, in_tree, dyn, key = self._split(args, kwargs)
        region, _, _ = self._trace(args, leaves, in_tree, dyn, dict(key[2][1]))
        return backend.current().lower(region)


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


def _signature(args: tuple) -> tuple:
    """What the fast path keys on. The type keeps a NumPy scalar (same dtype, shape and
    strides as a 0-d array) from passing as an array; the alignment keeps out arrays
    the compiled code must not read directly."""
    return tuple([(type(a), a.dtype, a.shape, a.strides, a.flags.aligned) for a in args])


def _exact_arrays(args: tuple, leaves: list) -> bool:
    """Every argument a C-contiguous, aligned array, each its own leaf (so the call can
    skip flattening and conversion)."""
    return len(args) == len(leaves) and all(
        type(a) is np.ndarray and a is x and a.flags.c_contiguous and a.flags.aligned
        for a, x in zip(args, leaves))


def _rebuild(f: Callable, static_argnums: tuple, static_argnames: tuple) -> Jitted:
    """A pickled jitted function, in the process that unpickles it."""
    return jit(f, static_argnums=static_argnums, static_argnames=static_argnames)


def jit(f: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Any:
    """Compile `f` to native code, once per signature: the arguments' pytree structure,
    each leaf's shape, dtype and weakness, and the values of the static arguments
    (`static_argnums` by position, `static_argnames` by name: each names the other's
    parameters too, as in JAX; static values must be hashable). Usable as `@jit` or
    `@jit(static_argnums=...)`. Under a transformation, a jitted function is traced
    through: `grad(jit(f))` sees f's operations.

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

