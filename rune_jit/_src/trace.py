"""Staging: tracers, the builders that record equations, and `bind`.

A `Builder` records the equations of one region. Builders nest: tracing a
loop's step while tracing its enclosing function opens a child builder, and a
tracer of an enclosing builder used inside the child becomes a capture. While
any builder is current, every `bind` is staged (omnistaging), so constants
stay small and the IR shows the whole program; with none current, `bind` runs
the primitive's NumPy `impl` (the eager path).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .errors import ConcretizationError, concretization_message
from . import config, source_info
from .ir import UNBOUNDED, Atom, Eqn, Literal, Region, Type, Var, map_regions, type_of, verify
from .primitive import Primitive

class _State(threading.local):
    builder: "Builder | None" = None  # every thread starts outside any trace
    transforming: int = 0  # passes running (`transforming`): they trace no user code


# this thread's builder: `current()`, or `state.builder` where a call costs too much
# (rune_jit.numpy's fast path)
state = _State()


def current() -> "Builder | None":
    return state.builder


@contextmanager
def using(builder: "Builder | None") -> Iterator["Builder | None"]:
    saved = current()
    state.builder = builder
    try:
        yield builder
    finally:
        state.builder = saved


@contextmanager
def transforming() -> Iterator[None]:
    """While a pass (jvp, partial evaluation, transposition, vmap) runs: the regions it
    traces are its rewriting of a program traced before, not the user's code, and are
    kept as the pass builds them (`finishing` does not run)."""
    state.transforming += 1
    try:
        yield
    finally:
        state.transforming -= 1


class Tracer:
    """A staged value: a `Var` of some builder. Operators come from rune_jit.numpy."""

    __slots__ = ("ir_var", "builder", "weak")
    __array_priority__ = 1000

    def __init__(self, var: Var, builder: "Builder", weak: bool = False):
        self.ir_var = var
        self.builder = builder
        self.weak = weak  # a Python scalar argument: promotes as NEP 50 says

    @property
    def type(self) -> Type:
        return self.ir_var.type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.ir_var.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self.ir_var.type.dtype

    @property
    def ndim(self) -> int:
        return len(self.ir_var.type.shape)

    @property
    def size(self) -> int:
        return self.ir_var.type.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced value")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Traced<{self.type}>"

    def _concrete(self, operation: str):
        raise ConcretizationError(concretization_message(operation, str(self.type)))

    def __bool__(self):
        self._concrete("bool() (an `if`, `while`, `and`/`or` or `not` on a traced value)")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __index__(self):
        self._concrete("Using a traced value as a Python index (__index__)")

    def __complex__(self):
        self._concrete("complex()")

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        raise ConcretizationError(
            concretization_message("Converting to a NumPy array (np.asarray)", str(self.type))
            + " To index a NumPy array with a traced index, index a rune_jit array: "
            "rnp.asarray(table)[i] (or rnp.take(table, i, axis=)).")


class Builder:
    """Records the equations of one region while its function is traced.

    It deduplicates identical equations (CSE) and evaluates those whose operands
    are all constants and whose results are scalars (folding) as it records.
    """

    def __init__(self, parent: "Builder | None", lift: Callable | None = None, lift_from=None):
        self.parent = parent
        self.eqns: list[Eqn] = []
        self.params: list[Var] = []
        self.captured: dict[Var, Tracer] = {}  # outer values this region uses
        self.seen: dict[tuple, list[Tracer]] = {}  # equations recorded, for CSE
        self.producers: dict[Var, Eqn] = {}  # for peephole simplifications
        self.kept: set[Var] = set()  # values read from outside the region (weak-int checks)
        # partial evaluation: tracers of `lift_from` used here become params via `lift`
        self.lift = lift
        self.lift_from = lift_from

    def new_param(self, type: Type, weak: bool = False) -> Tracer:
        var = Var(type)
        self.params.append(var)
        return Tracer(var, self, weak)

    def accept(self, t: Tracer) -> Var:
        """The var of `t` as used here: its own, a capture, or a lifted residual."""
        if t.builder is self:
            return t.ir_var
        path = []
        node = self
        while node is not None:
            if t.builder is node:
                break
            if node.lift is not None and t.builder is node.lift_from:
                t = node.lift(t)
                break
            path.append(node)
            node = node.parent
        else:
            raise escaped(t)
        for n in path:  # every builder between here and the owner captures it
            n.captured[t.ir_var] = t
        return t.ir_var

    def atom(self, value: Any) -> Atom:
        if isinstance(value, Tracer):
            return self.accept(value)
        return Literal(baked(value))

    def emit(self, prim: Primitive, args: Sequence[Any], params: dict,
             fold: bool = True) -> list:
        """The equation's results as tracers; with `fold`, NumPy values where its operands
        are constants and its results scalars."""
        atoms = [self.atom(a) for a in args]
        types = prim.shape(*[a.type for a in atoms], **params)
        k = params.get("num_captures")
        if k is None:
            if (fold and all(isinstance(a, Literal) for a in atoms)
                    and all(t.size <= 1 for t in types)
                    and not prim.effectful(params)):  # an effect happens when the program runs
                return [np.asarray(o) for o in prim.impl(*[a.value for a in atoms], **params)]
            key = _cse_key(prim, atoms, params)
            if key is not None and key in self.seen:
                return self.seen[key]
        else:
            params = {key: v for key, v in params.items() if key != "num_captures"}
            params = map_regions(params, lambda r: self.open(r, args[:k], atoms[:k]))
            atoms = atoms[k:]
        outs = [Var(t) for t in types]
        eqn = Eqn(prim, tuple(atoms), tuple(outs), params, source_info.current())
        self.eqns.append(eqn)
        self.producers.update(dict.fromkeys(outs, eqn))
        tracers = [Tracer(v, self) for v in outs]
        if k is None and key is not None:
            self.seen[key] = tracers
        if after_staging is not None:
            after_staging(prim, args, tracers, params)
        return tracers

    def open(self, region: Region, caps: Sequence[Any], cap_atoms: Sequence[Atom]) -> Region:
        """A closed region whose first params take `caps`, as a region that captures them."""
        k = len(caps)
        if all(a is p for a, p in zip(cap_atoms, region.params[:k])):
            return Region(region.params[k:], region.eqns, region.outputs)
        from .interpret import eval_region

        return trace_flat(
            lambda *xs: eval_region(region, list(caps) + list(xs)),
            [p.type for p in region.params[k:]],
        )


def baked(value: Any) -> np.ndarray:
    """A constant as a trace keeps it: its value now. A NumPy array the traced function
    captures is copied (once: the copy is read-only, and passes re-tracing the program
    keep it), so that changing the array later changes no program, whichever way it was
    read (as JAX does)."""
    a = np.asarray(value)
    if a.ndim == 0 or (not a.flags.writeable and a.flags.owndata):
        return a
    a = a.copy()
    a.flags.writeable = False
    return a


def _cse_key(prim: Primitive, atoms: Sequence[Atom], params: dict) -> tuple | None:
    """A key equal for equations that compute the same thing, or None if unhashable."""
    def atom_key(a):
        if isinstance(a, Var):
            return a
        v = a.value
        return (v.dtype.str, v.shape, v.tobytes()) if v.size <= 16 else id(v)

    try:
        key = (prim, tuple(atom_key(a) for a in atoms), tuple(sorted(params.items())))
        hash(key)
    except TypeError:
        return None
    return key


def escaped(t: Tracer) -> Exception:
    return ConcretizationError(
        f"a traced value of type {t.type} escaped the function or loop step that made it: "
        "it is used after that trace ended (stored in a global or a closure?). "
        "Return it from the function instead."
    )


def producer(x: Any) -> Eqn | None:
    """The equation of the current trace that made `x`, if any (for peepholes)."""
    if isinstance(x, Tracer) and x.builder is current():
        return x.builder.producers.get(x.ir_var)
    return None


def bind(prim: Primitive, *args: Any, **params: Any) -> list:
    """Apply `prim`: staged into the current builder, or run by its NumPy impl."""
    builder = current()
    if builder is not None:
        return builder.emit(prim, args, params)
    for a in args:
        if isinstance(a, Tracer):
            raise escaped(a)
    outs = [np.asarray(o) for o in prim.impl(*args, **params)]
    if config.verify_regions:  # the tests check each impl against its shape rule
        _check_impl(prim, args, params, outs)
    if after_eager is not None:
        after_eager(prim, args, outs)
    return outs


# Called after each equation a builder stages, and after each primitive run eagerly, when
# set: RUNE_JIT_DEBUG_NANS's checks (ops/nan_checks.py installs them; the core imports no
# primitive).
after_staging: Callable[[Primitive, Sequence[Any], list, dict], None] | None = None
after_eager: Callable[[Primitive, Sequence[Any], list], None] | None = None
# Called with each builder whose function (the user's: not a pass's, see `transforming`)
# has been traced, and its results, before its region is made: folds repeated layers into a loop (ops/repeated_layers.py installs it).
finishing: Callable[["Builder", list], None] | None = None


def _check_impl(prim: Primitive, args, params: dict, outs: list) -> None:
    expected = prim.shape(*[type_of_value(a) for a in args], **params)
    got = [type_of_value(o) for o in outs]
    if len(expected) != len(got) or not all(map(_holds, expected, got)):
        raise AssertionError(f"{prim.name}: impl gives {got}, its shape rule {expected}")


def _holds(expected: Type, got: Type) -> bool:
    """`got` is `expected`, but for the rows a tape of a loop with no step limit holds."""
    return expected.dtype == got.dtype and expected.ndim == got.ndim and all(
        e == g or e >= UNBOUNDED for e, g in zip(expected.shape, got.shape))


def bind1(prim: Primitive, *args: Any, **params: Any) -> Any:
    (out,) = bind(prim, *args, **params)
    return out


def trace_open(fn, in_types, weak=None) -> tuple[Region, Builder]:
    """Trace `fn` into an open region; -> (region, its builder, which knows the captures)."""
    builder = Builder(current())
    weak = weak or [False] * len(in_types)
    with using(builder):
        params = [builder.new_param(t, w) for t, w in zip(in_types, weak)]
        outs = [builder.atom(o) for o in fn(*params)]
    if finishing is not None and not state.transforming:
        finishing(builder, outs)
    region = Region(tuple(p.ir_var for p in params), tuple(builder.eqns), tuple(outs))
    return checked(region), builder


def checked(region: Region) -> Region:
    """`region`, verified first when RUNE_JIT_VERIFY is set (as the tests set it)."""
    if config.verify_regions:
        verify(region, region.captures)
    return region


def trace_flat(
    fn: Callable[..., Sequence[Any]],
    in_types: Sequence[Type],
    weak: Sequence[bool] | None = None,
) -> Region:
    """Trace `fn` (flat arguments to a flat list of results) into an open region."""
    return trace_open(fn, in_types, weak)[0]


def trace_closed(
    fn: Callable[..., Sequence[Any]],
    in_types: Sequence[Type],
    weak: Sequence[bool] | None = None,
) -> tuple[Region, list[Tracer]]:
    """Trace `fn` into a closed region; -> (region, the captured values it takes first)."""
    region, builder = trace_open(fn, in_types, weak)
    return region.closed(), [builder.captured[v] for v in region.captures]


def trace_regions(
    fns: Sequence[Callable[..., Sequence[Any]]], in_types: Sequence[Sequence[Type]]
) -> tuple[list[Region], list[Tracer]]:
    """Trace several functions into regions closed over the union of their captures."""
    return close_together([trace_open(fn, types, None) for fn, types in zip(fns, in_types)])


def close_together(traced: Sequence[tuple[Region, Builder]]) -> tuple[list[Region], list[Tracer]]:
    """Regions from `trace_open`, closed over the union of their captures."""
    captured: dict[Var, Tracer] = {}
    for _, builder in traced:
        captured.update(builder.captured)
    caps: dict[Var, None] = {}
    for region, _ in traced:
        caps.update(dict.fromkeys(region.captures))
    return [r.closed(tuple(caps)) for r, _ in traced], [captured[v] for v in caps]


def type_of_value(x: Any) -> Type:
    if isinstance(x, Tracer):
        return x.type
    return type_of(np.asarray(x))
