"""The emitter: MLIR text from a region, one rule per primitive (RULES, filled by the
modules of this package), with the types, constants, names, nesting and locations every
rule shares.

A value of rune_jit's IR becomes one SSA value: a 0-d value a scalar of its element type
(`f64`, `i1`), any other a `tensor` of static shape. Tensors, not memrefs: the IR is
values (single assignment, no aliasing), which is what tensors are in MLIR, and
bufferization is the consumer's choice (IREE takes tensors as its input). Scalars stay
scalars so that loops carry them as `scf` iter_args, as the CPU backend keeps them in
registers. Signless integers: the operation says signed or unsigned (`arith.divsi`,
`arith.divui`), from the value's NumPy dtype.
"""

from __future__ import annotations

import contextlib
import struct
from typing import Callable, Iterator, NamedTuple, Sequence

import numpy as np

from ...ir import UNBOUNDED, Eqn, Literal, Region, Type, Var
from ...primitive import Primitive
from ...source_info import where

# primitive -> rule(em, args: [Value], out_types: [Type], **params) -> [SSA name]
RULES: dict[Primitive, Callable] = {}

SCALARS = {"float64": "f64", "float32": "f32", "float16": "f16", "bool": "i1",
           **{f"{s}int{b}": f"i{b}" for s in ("", "u") for b in (8, 16, 32, 64)}}


def rule(prim: Primitive) -> Callable:
    """`@rule(prim)`: the function that emits `prim`'s equations."""
    def deco(f: Callable) -> Callable:
        RULES[prim] = f
        return f
    return deco


class Value(NamedTuple):
    """An SSA value of the module and the rune_jit type it holds."""
    name: str
    type: Type

    def __str__(self) -> str:
        return self.name


INDEX = Type(None, ())  # an MLIR `index` (positions and counts), in loops' iter_args


def scalar_type(dtype: np.dtype | None) -> str:
    if dtype is None:
        return "index"
    name = np.dtype(dtype).name
    if name not in SCALARS:
        raise NotImplementedError(f"no MLIR form for values of dtype {name}")
    return SCALARS[name]


def mlir_type(t: Type) -> str:
    """`f64` for a 0-d float64, `tensor<2x3xf64>` for a float64[2,3]; `tensor<?x3xf64>`
    for the tapes of a while_loop without max_steps (their rows are the steps taken)."""
    if not t.shape:
        return scalar_type(t.dtype)
    dims = "".join("?x" if d >= UNBOUNDED else f"{d}x" for d in t.shape)
    return f"tensor<{dims}{scalar_type(t.dtype)}>"


def unsized(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what} of a while_loop without max_steps (tapes as long as "
                               "the steps taken) has no MLIR form here: give max_steps=")


def scalar_literal(value, dtype: np.dtype) -> str:
    """A scalar attribute MLIR parses back to exactly `value` of `dtype`."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":  # signless: the bits (-1 of a uint8 is 255), read as signed
        bits = 8 * dtype.itemsize
        v = int(value) % 2 ** bits
        return str(v - 2 ** bits if v >= 2 ** (bits - 1) else v)
    v = np.asarray(value, dtype)
    if dtype.kind == "b":
        return "true" if v else "false"
    if np.isfinite(v):  # the shortest decimal that reads back to these bits, with the
        text = repr(float(v))  # point MLIR's float literals need (1e-12 -> 1.0e-12)
        return text if "." in text else text.replace("e", ".0e")
    bits = {2: "<H", 4: "<I", 8: "<Q"}[dtype.itemsize]
    return f"0x{struct.unpack(bits, v.tobytes())[0]:0{2 * dtype.itemsize}X}"


def dense_literal(value: np.ndarray) -> str:
    """A tensor attribute: a splat, the elements of a bool array, or its bytes in hex
    (exact, and short for big arrays)."""
    flat = np.ravel(value)
    if flat.size and (flat == flat[0]).all() and not np.isnan(flat.astype(float)).any():
        return f"dense<{scalar_literal(flat[0], value.dtype)}>"
    if value.dtype.kind == "b":
        return f"dense<[{', '.join('true' if b else 'false' for b in flat)}]>"
    data = np.ascontiguousarray(flat).astype(value.dtype.newbyteorder("<")).tobytes()
    return f'dense<"0x{data.hex().upper()}">'


def _escaped(text: str) -> str:
    """`text` inside an MLIR string literal."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


class Emitter:
    """Writes one function's body: `op` emits a line and names its result; `nested`
    indents a region's body; `at` sets the location of what follows."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 2
        self.count = 0
        self.locs: dict[tuple, str] = {}
        self.loc = ""
        self.source = None
        self.env: list[dict[Var, Value]] = [{}]
        self.known: dict[str, np.ndarray] = {}  # SSA name -> the constant it holds

    # ---------------------------------------------------------- text

    def fresh(self, hint: str = "v") -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, text: str, hint: str = "v") -> str:
        """`%name = text loc(...)`; -> %name."""
        name = self.fresh(hint)
        self.line(f"{name} = {text}{self.loc}")
        return name

    def ops(self, text: str, n: int, hint: str = "r") -> list[str]:
        """An op of n results, its body emitted by the caller before `close`; -> the
        results' names (%r3#0, ...)."""
        name = self.fresh(hint)
        self.line(f"{name}:{n} = {text}" if n > 1 else f"{name} = {text}" if n else text)
        return [f"{name}#{i}" for i in range(n)] if n > 1 else [name] * n

    def stmt(self, text: str) -> None:
        self.line(text + self.loc)

    @contextlib.contextmanager
    def nested(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def counted(self, count: str, inits: Sequence[Value],
                body: Callable[[str, list[Value]], list], hint: str = "loop") -> list[Value]:
        """`scf.for` of `count` (an index) steps carrying `inits`: `body(step index,
        values) -> the names it yields`."""
        i = self.fresh("i")
        args = [Value(self.fresh("it"), v.type) for v in inits]
        head = f"scf.for {i} = {self.index(0)} to {count} step {self.index(1)}"
        types = ", ".join(self.ty(v.type) for v in inits)
        if inits:
            carried = ", ".join(f"{a.name} = {v.name}" for a, v in zip(args, inits))
            head += f" iter_args({carried}) -> ({types})"
        names = self.ops(head + " {", len(inits), hint)
        with self.nested():
            yielded = body(i, args)
            self.line(f"scf.yield {', '.join(map(str, yielded))} : {types}" if inits
                      else "scf.yield")
        self.close()
        return [Value(n, v.type) for n, v in zip(names, inits)]

    def close(self, tail: str = "}") -> None:
        """The end of a region op, with its location."""
        self.line(tail + self.loc)

    def at(self, source) -> None:
        """What follows comes from the user's `source` line (a SourceInfo, or None)."""
        self.source = source
        if source is None:
            self.loc = ""
            return
        key = (source.file, source.line)
        if key not in self.locs:
            self.locs[key] = f"#loc{len(self.locs)}"
        self.loc = f" loc({self.locs[key]})"

    def loc_aliases(self) -> list[str]:
        return [f'{alias} = loc("{_escaped(f)}":{line}:0)'
                for (f, line), alias in self.locs.items()]

    # ---------------------------------------------------------- constants

    def const(self, value, dtype: np.dtype) -> Value:
        t = Type(np.dtype(dtype), ())
        typed = "" if t.dtype.kind == "b" else f" : {scalar_type(dtype)}"  # true is an i1
        name = self.op(f"arith.constant {scalar_literal(value, dtype)}{typed}", "c")
        self.known[name] = value
        return Value(name, t)

    def index(self, i: int) -> str:
        return self.op(f"arith.constant {int(i)} : index", "i")

    def literal(self, value: np.ndarray) -> Value:
        t = Type(value.dtype, tuple(value.shape))
        if not value.shape:
            return self.const(value, value.dtype)
        return Value(self.op(f"arith.constant {dense_literal(value)} : {mlir_type(t)}", "k"),
                     t)

    # ---------------------------------------------------------- regions

    def read(self, atom) -> Value:
        if isinstance(atom, Literal):
            return self.literal(atom.value)
        for scope in reversed(self.env):
            if atom in scope:
                return scope[atom]
        raise KeyError(f"a value of type {atom.type} is used before it is defined")

    def region(self, r: Region, args: Sequence[Value]) -> list[Value]:
        """The region's equations emitted in the current block, its params bound to
        `args` (its captures are the enclosing regions' values, in scope in MLIR too)."""
        self.env.append(dict(zip(r.params, args)))
        source = self.source  # the enclosing op's, for the line that closes it
        try:
            for eqn in r.eqns:
                self.equation(eqn)
            return [self.read(o) for o in r.outputs]
        finally:
            self.env.pop()
            self.at(source)

    def equation(self, eqn: Eqn) -> None:
        args = [self.read(a) for a in eqn.inputs]
        self.at(eqn.source)
        emit = RULES.get(eqn.prim)
        out_types = [v.type for v in eqn.outputs]
        try:
            if emit is None:
                raise NotImplementedError(f"{eqn.prim.name} has no MLIR form")
            names = emit(self, args, out_types, **eqn.params)
        except NotImplementedError as e:
            if getattr(e, "located", False):  # an equation nested in this one's regions
                raise
            err = NotImplementedError(f"MLIR export: {e}{where(eqn.source)}")
            err.located = True
            raise err from None
        self.env[-1].update(
            (v, Value(n, t)) for v, n, t in zip(eqn.outputs, names, out_types))

    def ty(self, t: Type) -> str:
        return mlir_type(t)
