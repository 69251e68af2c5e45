"""The typed IR: values, equations, regions; captures, printing and verification.

Grammar (what `print(region)` shows):

    region ::= { lambda param* . eqn* in ( atom* ) }
    eqn    ::= var* = prim[param=value ...] atom*      (nested regions follow, indented)
    atom   ::= var | literal

Every value has a dtype and a static shape. A region is a typed function; its
body may use values of the enclosing regions (captures). Structured equations
(loops, cond, remat, root) hold regions among their static params.

Passes and rules never see captures: `Eqn.closed` presents an equation whose
regions capture values as one that takes those values as leading inputs, with
each region taking them as leading params (JAX's "consts"). Storing regions
open keeps the IR as written (a step that reads `w` shows `w`); presenting them
closed gives every loop rule one form.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from .dtypes import name as dtype_name
from .errors import IRError

if TYPE_CHECKING:
    from .primitive import Primitive


# The leading size of the tapes of a loop with no step limit (while_loop without
# max_steps), printed "?": known once the loop ran. A value of such a type holds the rows
# of the steps taken, and only loops read it, within their counts (ops/loops.py).
UNBOUNDED = 2 ** 62
UNSIZED = ("its leading size is the steps a while_loop without max_steps takes, known once "
           "it ran: give while_loop max_steps=")


@dataclass(frozen=True)
class Type:
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def unsized(self) -> bool:
        """Whether values of this type are such tapes (see UNBOUNDED)."""
        return any(d >= UNBOUNDED for d in self.shape)

    def __str__(self) -> str:
        dims = ("?" if d >= UNBOUNDED else str(d) for d in self.shape)
        return f"{dtype_name(self.dtype)}[{','.join(dims)}]"

    def with_shape(self, shape: Sequence[int]) -> "Type":
        return Type(self.dtype, tuple(shape))

    def with_dtype(self, dtype: np.dtype) -> "Type":
        return Type(np.dtype(dtype), self.shape)


def type_of(value: np.ndarray) -> Type:
    return Type(value.dtype, tuple(value.shape))


class Var:
    """A value defined once: a region's param or an equation's output."""

    __slots__ = ("type",)

    def __init__(self, type: Type):
        self.type = type

    def __repr__(self) -> str:
        return f"Var({self.type})"


class Literal:
    """A constant operand: a NumPy array (0-d for scalars)."""

    __slots__ = ("value", "type")

    def __init__(self, value: np.ndarray):
        self.value = value
        self.type = type_of(value)

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Var | Literal


@dataclass(frozen=True, eq=False, repr=False)
class Region:
    params: tuple[Var, ...]
    eqns: tuple["Eqn", ...]
    outputs: tuple[Atom, ...]

    @property
    def in_types(self) -> list[Type]:
        return [p.type for p in self.params]

    @property
    def out_types(self) -> list[Type]:
        return [o.type for o in self.outputs]

    @cached_property
    def captures(self) -> tuple[Var, ...]:
        """Values the body uses but does not define, in order of first use."""
        defined = set(self.params)
        free: dict[Var, None] = {}

        def use(atom):
            if isinstance(atom, Var) and atom not in defined:
                free.setdefault(atom, None)

        for eqn in self.eqns:
            for a in eqn.inputs:
                use(a)
            for r in eqn.regions:
                for c in r.captures:
                    use(c)
            defined.update(eqn.outputs)
        for o in self.outputs:
            use(o)
        return tuple(free)

    def closed(self, captures: Sequence[Var] | None = None) -> "Region":
        """This region with `captures` (default: its own) as leading params."""
        captures = self.captures if captures is None else captures
        if not captures:
            return self
        return Region(tuple(captures) + self.params, self.eqns, self.outputs)

    def __str__(self) -> str:
        return Printer().region(self, 0)

    __repr__ = __str__  # what make_ir returns, echoed at the prompt

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython
        printer.text(str(self))

    def _repr_html_(self) -> str:  # notebooks
        import html

        return f"<pre>{html.escape(str(self))}</pre>"


@dataclass(frozen=True, eq=False)
class Eqn:
    prim: "Primitive"
    inputs: tuple[Atom, ...]
    outputs: tuple[Var, ...]
    params: dict[str, Any] = field(default_factory=dict)
    source: Any = None  # source_info.SourceInfo: the user's line that bound it

    def rebuilt(self, **changes: Any) -> "Eqn":
        """This equation with some fields changed, from the same source."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def regions(self) -> tuple[Region, ...]:
        return tuple(r for _, r in region_params(self.params))

    @cached_property
    def captures(self) -> tuple[Var, ...]:
        seen: dict[Var, None] = {}
        for r in self.regions:
            for c in r.captures:
                seen.setdefault(c, None)
        return tuple(seen)

    @cached_property
    def closed(self) -> tuple[tuple[Atom, ...], dict[str, Any]]:
        """(captures + inputs, params with every region closed over the captures)."""
        if not self.regions:
            return self.inputs, self.params
        caps = self.captures
        params = map_regions(self.params, lambda r: r.closed(caps))
        params["num_captures"] = len(caps)
        return caps + self.inputs, params

    def __str__(self) -> str:
        return Printer().eqn(self, 0)


def _is_region_value(v: Any) -> bool:
    """A parameter that holds regions: a region or a non-empty tuple of them."""
    return isinstance(v, Region) or (
        isinstance(v, tuple) and bool(v) and all(isinstance(x, Region) for x in v))


def region_params(params: dict[str, Any]) -> Iterator[tuple[str, Region]]:
    """The regions among `params`, each with its parameter's name."""
    for key, value in params.items():
        if _is_region_value(value):
            for r in (value,) if isinstance(value, Region) else value:
                yield key, r


def map_regions(params: dict[str, Any], f) -> dict[str, Any]:
    def one(value):
        if not _is_region_value(value):
            return value
        return f(value) if isinstance(value, Region) else tuple(f(v) for v in value)

    return {k: one(v) for k, v in params.items()}


def renamed(region: Region) -> Region:
    """A copy of `region` with new variables throughout, its nested regions' too: a
    program may hold it beside the original and still assign each variable once."""
    env: dict[Var, Var] = {}

    def new(v: Var) -> Var:
        env[v] = Var(v.type)
        return env[v]

    def atom(a: Atom) -> Atom:
        return env.get(a, a) if isinstance(a, Var) else a

    def copy(r: Region) -> Region:
        params = tuple(new(p) for p in r.params)
        eqns = tuple(e.rebuilt(inputs=tuple(atom(a) for a in e.inputs),
                               params=map_regions(e.params, copy),
                               outputs=tuple(new(o) for o in e.outputs)) for e in r.eqns)
        return Region(params, eqns, tuple(atom(o) for o in r.outputs))

    return copy(region)


# ---------------------------------------------------------------- printing


class Printer:
    """Names values a, b, ..., z, ba, ... in order of appearance, stable across runs."""

    def __init__(self):
        self.names: dict[Var, str] = {}

    def name(self, var: Var) -> str:
        if var not in self.names:
            n, s = len(self.names), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n //= 26
                if n == 0:
                    break
            self.names[var] = s
        return self.names[var]

    def atom(self, a: Atom) -> str:
        if isinstance(a, Var):
            return self.name(a)
        if a.value.ndim == 0:
            return f"{a.value.item()!r}:{dtype_name(a.type.dtype)}"
        return f"const{a.type}"

    def binder(self, v: Var) -> str:
        return f"{self.name(v)}:{v.type}"

    def region(self, r: Region, indent: int) -> str:
        pad = " " * indent
        params = " ".join(self.binder(p) for p in r.params)
        lines = [f"{{ lambda {params} ."]
        lines += [self.eqn(e, indent + 2) for e in r.eqns]
        outs = ", ".join(self.atom(o) for o in r.outputs)
        lines.append(f"{pad}  in ({outs}) }}")
        return "\n".join(lines)

    def eqn(self, e: Eqn, indent: int) -> str:
        pad = " " * indent
        outs = " ".join(self.binder(v) for v in e.outputs)
        statics = {k: v for k, v in e.params.items() if not _is_region_value(v)}
        pstr = " ".join(f"{k}={_show(v)}" for k, v in sorted(statics.items()))
        head = f"{e.prim.name}[{pstr}]" if pstr else e.prim.name
        args = " ".join(self.atom(a) for a in e.inputs)
        line = f"{pad}{outs} = {head} {args}".rstrip()
        for key, r in region_params(e.params):
            line += f"\n{pad}    {key} = " + self.region(r, indent + 4)
        return line



def _show(v) -> str:
    if isinstance(v, np.dtype):
        return dtype_name(v)
    if isinstance(v, tuple):
        return "(" + ",".join(_show(x) for x in v) + ")"
    return repr(v) if not isinstance(v, str) else v


def digest(region: Region) -> str:
    """A hash of exactly this program, values named by order of appearance: two regions
    have one digest when they compute the same thing the same way. Unlike the printer,
    it leaves nothing out (every param, every element of an array, literals included),
    so that compiled code keyed by it is the code of this program."""
    h = hashlib.sha256()
    names: dict[Var, int] = {}

    def name(v: Var) -> int:
        return names.setdefault(v, len(names))

    def atom(a: Atom) -> tuple:
        if isinstance(a, Var):
            return ("var", name(a))
        return ("literal", *_array_token(a.value))

    def param(v: Any) -> Any:
        if isinstance(v, Region):
            walk(v)
            return ("region",)
        if isinstance(v, (tuple, list)):
            return tuple(param(x) for x in v)
        if isinstance(v, np.ndarray):
            return ("array", *_array_token(v))
        if isinstance(v, np.dtype):
            return ("dtype", v.str)
        return (type(v).__name__, repr(v))

    def walk(r: Region) -> None:
        h.update(repr(("params", [(name(p), str(p.type)) for p in r.params])).encode())
        for e in r.eqns:
            head = (e.prim.name, [atom(a) for a in e.inputs],
                    [(name(v), str(v.type)) for v in e.outputs], tuple(e.source or ()))
            h.update(repr(head).encode())
            for k in sorted(e.params):
                h.update(repr((k, param(e.params[k]))).encode())
        h.update(repr(("outputs", [atom(o) for o in r.outputs])).encode())

    walk(region)
    return h.hexdigest()


def _array_token(value: np.ndarray) -> tuple:
    data = np.ascontiguousarray(value).tobytes()
    return value.dtype.str, value.shape, hashlib.sha256(data).hexdigest()


def count_eqns(region: Region) -> int:
    """Equations in `region` and every region nested in it."""
    return sum(1 + sum(count_eqns(r) for r in e.regions) for e in region.eqns)


# ---------------------------------------------------------------- verification


def verify(region: Region, outer: Sequence[Var] = ()) -> Region:
    """Check types, single assignment and the scoping of captures; return `region`.

    `outer` are the values of enclosing regions that `region` may capture.
    """
    _Verifier().region(region, frozenset(outer))
    return region


class _Verifier:
    def __init__(self):
        self.defined_anywhere: set[Var] = set()
        self.printer = Printer()

    def define(self, var: Var, where: str):
        if var in self.defined_anywhere:
            raise IRError(f"{self.printer.name(var)} is assigned twice ({where})")
        self.defined_anywhere.add(var)

    def region(self, r: Region, outer: frozenset):
        local: set[Var] = set()
        for p in r.params:
            self.define(p, "region param")
            local.add(p)
        for i, e in enumerate(r.eqns):
            self.eqn(r, i, e, outer | local)
            local.update(e.outputs)
        for o in r.outputs:
            self.check_scope(o, outer | local, "region output", r, len(r.eqns))

    def check_scope(self, atom: Atom, scope, what: str, r: Region, i: int):
        if isinstance(atom, Var) and atom not in scope:
            raise IRError(f"{what} {self.printer.name(atom)} is not in scope\n{self.context(r, i)}")

    def eqn(self, r: Region, i: int, e: Eqn, scope: frozenset):
        for a in e.inputs:
            self.check_scope(a, scope, f"input of {e.prim.name}", r, i)
        for reg in e.regions:
            self.region(reg, scope)
        ins, params = e.closed
        try:
            expected = e.prim.shape(*[a.type for a in ins], **params)
        except Exception as err:  # the shape rule's own message says what is wrong
            raise IRError(
                f"{e.prim.name} rejects its operands: {err}\n{self.context(r, i)}") from err
        got = [v.type for v in e.outputs]
        if list(expected) != got:
            exp = ", ".join(map(str, expected))
            raise IRError(
                f"{e.prim.name} outputs ({', '.join(map(str, got))}) but its shape rule gives "
                f"({exp})\n{self.context(r, i)}"
            )
        for v in e.outputs:
            self.define(v, f"output of {e.prim.name}")

    def context(self, r: Region, i: int) -> str:
        lo, hi = max(0, i - 2), min(len(r.eqns), i + 3)
        lines = []
        for j in range(lo, hi):
            mark = ">> " if j == i else "   "
            lines.append(mark + self.printer.eqn(r.eqns[j], 0).split("\n")[0])
        return "\n".join(lines)
