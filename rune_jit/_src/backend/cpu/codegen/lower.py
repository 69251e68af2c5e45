"""Regions to LLVM: each equation through its primitive's lowering rule, values fused lazily.

The Lowerer walks a region as the interpreter does, but each value becomes a
`Scalar`, an `Array` or a `Lazy` (see values.py). Elementwise primitives lower
one element at a time (their rules take and return registers), so a chain of
them stays one lazy expression; the Lowerer decides where values are stored: a
lazy value with arithmetic in it is stored once when it is read more than once
or from inside a nested region (a loop step), and everything is stored where a
primitive needs memory (a product, a loop's carry, an output). A group of
elementwise equations of one shape whose values are read only inside the group
(`elementwise_clusters`: threefry's rounds, where each value is read twice) is one
lazy value whose element applies each member once, in registers. A small value (4 to
SMALL_ELEMENTS elements) is also computed whole where it can be (`Lowerer.vector`):
its elementwise rules applied once to LLVM vectors of all its elements, so that its
code does not grow with its element count (issue 42; products: small_products.py).

The rules live in one table per kind, filled by the modules that define them
(elementwise.py, views.py, reduce.py, linalg.py, control.py, loops.py):

- `LOWERINGS[prim](lw, values, out_types, **params) -> values` for any primitive;
  loops lower their regions with `lw.lower_region`;
- `ELEMENTS[prim](lw, *registers, **params) -> register` for an elementwise one. An
  elementwise primitive without a row here is lowered through its portable `element`
  rule (ops/), which computes one element with the other primitives' rules.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Sequence

import llvmlite.ir as ir
import numpy as np

from ....ir import UNSIZED, Eqn, Literal, Region, Type, Var
from ....passes import note
from ....source_info import where
from ....primitive import Primitive
from . import arith, emit, reuse
from ..runtime import interrupt
from .demand import read_whole
from .emit import I64, Fn, reg_type
from .values import Array, Lazy, Scalar, Value, cost, row_bytes, strides

LOWERINGS: dict[Primitive, Callable] = {}
ELEMENTS: dict[Primitive, Callable] = {}
# Other ways than one loop nest on this thread to store a lazy value, tried in order:
# `store(lw, value, dest) -> whether it did` (parallel_maps.py: the pool's threads)
STORES: list[Callable] = []
# Other ways than one function to lower a long region, tried in order: `split(walk, env,
# sinks) -> the outputs it stored through their sinks (their positions), or None if it
# did not lower the region` (chunks.py: in parts, each a function; walk: a RegionWalk)
IN_PARTS: list[Callable] = []


def lowering(prim: Primitive, table: dict = LOWERINGS) -> Callable:
    """Register the decorated function as `prim`'s rule in `table` (default LOWERINGS)."""
    def register(rule: Callable) -> Callable:
        if prim in table:
            raise ValueError(f"{prim.name} has two CPU lowering rules")
        table[prim] = rule
        return rule
    return register


def element_lowering(prim: Primitive) -> Callable:
    return lowering(prim, ELEMENTS)


class Elements:
    """What a portable element rule computes with: each elementwise primitive by name,
    on registers (`e.mul(x, y)`), `e.const(like, value)` and `e.dtype(x)`."""

    def __init__(self, lw: "Lowerer"):
        self.lw = lw

    def const(self, like: ir.Value, value) -> ir.Value:
        return arith.const_like(like, value)

    @staticmethod
    def dtype(x: ir.Value) -> np.dtype:
        """The dtype of the elements a register holds (a rule may depend on it)."""
        return emit.dtype_of(arith.element(x.type))

    def __getattr__(self, name: str) -> Callable:
        prim = Primitive.registry.get(name)
        if prim is None or "elementwise" not in prim.traits:
            raise AttributeError(f"no elementwise primitive {name!r}")
        rule = self.lw.element_rule(prim)
        return lambda *xs, **params: rule(self.lw, *xs, **params)


# up to a 4 x 4 matrix: unrolled in a Kalman filter's step, its 4 x 4 products and
# solve stay in registers (bench KF: 31 -> 17 ms on znver4; 8, one vector of float64,
# kept them in memory; 32 was no faster than 16)
SMALL_ELEMENTS = 16
# fewer elements than this stay one scalar register each: their code is short anyway, and
# bench W7's 2-vector carry (a stack of two scalars, read back whole) ran 14 -> 20 ms as
# vectors
FEWEST_IN_VECTORS = 4
UNROLLED_OPERATIONS = 256  # at most this many operations are unrolled to store a value
SHORT_AXIS = 16  # a value stored whose last axis is shorter is stored in one flat loop
# A lazy value computes an element by calling the rules of the values it reads, in Python:
# a chain of fused operations this long is stored, so that lowering a long chain never
# runs out of Python stack (a loop that reads and writes memory once per this many
# operations costs nothing measurable).
FUSION_DEPTH = 64


class ErrorSites:
    """What each failure status of a compiled function means (iterate sites, ...), with
    the user's line of the equation that can fail there."""

    def __init__(self):
        self.sites: list[tuple[str, dict]] = []
        self.source = None  # of the equation being lowered

    def add(self, kind: str, **info) -> int:
        where = str(self.source) if self.source is not None else None
        self.sites.append((kind, {**info, "source": where}))
        return len(self.sites) - 1


class Lowerer:
    def __init__(self, fn: Fn, errors: ErrorSites, width: int | None = None):
        self.fn = fn
        self.errors = errors
        self.width = width  # lanes per block when lowering a per-lane region, else None
        # per output of the equation being lowered: the function's output buffer it is
        # (None if it is not one, or once claimed), so it is computed in place
        self.pending: list[ir.Value | None] = []
        self.whole: list[bool] = []  # per output of that equation: read whole (demand.py)

    @property
    def b(self) -> ir.IRBuilder:
        return self.fn.b

    def with_width(self, width: int | None) -> "Lowerer":
        return Lowerer(self.fn, self.errors, width)

    # ------------------------------------------------------------- failures

    def fail_if_any(self, condition: ir.Value, kind: str, site: int | None = None,
                    lane: ir.Value | None = None) -> None:
        """Return a failure status from the function if `condition` holds (in any lane);
        `site` (default: a new one) says where and what."""
        b = self.b
        site = self.errors.add(kind) if site is None else site
        condition = self.any_lane(condition)
        status = ir.Constant(I64, emit.KINDS[kind] | site << 8)
        if lane is not None:
            status = b.or_(status, b.shl(lane, self.i64(32)))
        self.fn.fail(condition, status)

    def any_lane(self, condition: ir.Value) -> ir.Value:
        """Whether `condition` holds in some lane (a scalar holds in its only one)."""
        if isinstance(condition.type, ir.VectorType):
            return arith.intrinsic(self.b, "vector.reduce.or", condition, ret=emit.I1)
        return condition

    def poll_interrupt(self, step: ir.Value, region: Region) -> None:
        """Every few steps of a loop whose step is `region` (interrupt.interval): return
        the "interrupt" status if a SIGINT came since the call began."""
        b = self.b
        every = interrupt.interval(region)
        due = b.icmp_unsigned("==", b.and_(step, self.i64(every - 1)), self.i64(0))
        with b.if_then(due, likely=False):
            now = b.load_atomic(self.fn.global_i64(interrupt.SYMBOL), "monotonic", 8, typ=I64)
            if self.fn.interrupt_site is None:
                self.fn.interrupt_site = self.errors.add("interrupt")
            self.fail_if_any(b.icmp_unsigned("!=", now, self.fn.signals_at_start()),
                             "interrupt", self.fn.interrupt_site)

    # ------------------------------------------------------------- constants

    def const(self, dtype: np.dtype, value: Any) -> ir.Constant:
        v = bool(value) if dtype.kind == "b" else value
        return arith.constant(reg_type(dtype, self.width), v)

    @staticmethod
    def i64(n: int) -> ir.Constant:
        return ir.Constant(I64, int(n))

    def splat(self, v: ir.Value) -> ir.Value:
        """A scalar register as one value for every lane of the block."""
        if self.width is None or isinstance(v.type, ir.VectorType):
            return v
        vec = ir.VectorType(v.type, self.width)
        one = self.b.insert_element(ir.Constant(vec, ir.Undefined), v, self.i64(0))
        return self.b.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                                     ir.Constant(ir.VectorType(ir.IntType(32), self.width),
                                                 [0] * self.width))

    # ------------------------------------------------------------- memory

    def offset(self, shape: Sequence[int], idx: Sequence[ir.Value]) -> ir.Value:
        """The flat offset of index `idx`; its constant part folded here (unrolled
        elements index at constants: no instructions for LLVM to fold again)."""
        fixed, total = 0, None
        for i, s in zip(idx, strides(tuple(shape))):
            if isinstance(i, ir.Constant):
                fixed += i.constant * s
                continue
            term = i if s == 1 else self.b.mul(i, self.i64(s))
            total = term if total is None else self.b.add(total, term)
        if total is None:
            return self.i64(fixed)
        return total if fixed == 0 else self.b.add(total, self.i64(fixed))

    def address(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value) -> ir.Value:
        return self.b.gep(ptr, [offset], source_etype=emit.mem_type(dtype))

    def load_at(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value,
                width: int | None = None) -> ir.Value:
        """The element at `offset`, or the `width` elements from there as one vector."""
        v = self.b.load(self.address(ptr, dtype, offset), typ=emit.mem_type(dtype, width),
                        align=dtype.itemsize)
        if self.fn.access_group is not None:
            v.set_metadata("llvm.access.group", self.fn.access_group)
        # NumPy stores a bool as a byte; a register holds it as an i1
        return self.b.icmp_unsigned("!=", v, arith.const_like(v, 0)) if dtype.kind == "b" else v

    def store_at(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value, v: ir.Value,
                 own: bool = False) -> None:
        """Write `v`, one element or a vector of them, at `offset`. `own`: the store is
        the parallel loop's own (emit.Fn.while_loop): no other step touches `offset`."""
        if dtype.kind == "b":
            v = self.b.zext(v, emit.mem_type(dtype, arith.lanes(v.type)))
        st = self.b.store(v, self.address(ptr, dtype, offset), align=dtype.itemsize)
        if own and self.fn.access_group is not None:
            st.set_metadata("llvm.access.group", self.fn.access_group)

    def load(self, v: Value, idx: Sequence[ir.Value]) -> ir.Value:
        """Element `idx` of a value (a scalar operand broadcasts: any index reads it)."""
        if isinstance(v, Scalar):
            return self.splat(v.v)
        if isinstance(v, Lazy):
            return v.at(list(idx))
        if v.rows is not None:  # a tape: rows past those it holds are unspecified, and
            # not there at all (it grows with the steps taken): read its last row instead
            last = self.b.sub(v.rows, self.i64(1))
            idx = [arith.maximum(self.b, idx[0], last, False)] + list(idx[1:])
        return self.load_at(v.ptr, v.type.dtype, self.offset(v.type.shape, idx))

    # ------------------------------------------------------------- small values whole

    def vectorizable(self, v: Value) -> bool:
        """Whether `vector(v)` can compute `v` (read with operands of its shape)."""
        if self.width is not None or not FEWEST_IN_VECTORS <= v.type.size <= SMALL_ELEMENTS:
            return False  # (in a lane block each register is already a vector of lanes)
        if isinstance(v, Array):
            return v.rows is None
        return isinstance(v, Lazy) and v.whole is not None

    def vector(self, v: Value) -> ir.Value:
        """All of a small value (`vectorizable`) as one LLVM vector, its elements in
        row-major order: code whose size does not grow with the element count (LLVM
        legalises `<16 x double>` to the target's registers)."""
        if isinstance(v, Array):
            return self.load_at(v.ptr, v.type.dtype, self.i64(0), v.type.size)
        return v.whole()

    def operand_vector(self, v: Value, size: int) -> ir.Value:
        """An elementwise operand of `size` elements as a vector: a scalar in every lane."""
        return self.vsplat(v.v, size) if isinstance(v, Scalar) else self.vector(v)

    def operands_vectorizable(self, vals: Sequence[Value], out: Type) -> bool:
        return self.width is None and FEWEST_IN_VECTORS <= out.size <= SMALL_ELEMENTS and all(
            isinstance(v, Scalar) or (v.type.shape == out.shape and self.vectorizable(v))
            for v in vals)

    # ------------------------------------------------------------- explicit vectors

    def lanes_for(self, dtype: np.dtype) -> int:
        """How many elements of `dtype` one vector register holds here."""
        from ..runtime.llvm import vector_bits

        return vector_bits() // (8 * dtype.itemsize)

    def vsplat(self, v: ir.Value, width: int) -> ir.Value:
        return self.with_width(width).splat(v)

    def hsum(self, v: ir.Value) -> ir.Value:
        """The sum of a vector's elements (in any order)."""
        zero = ir.Constant(v.type.element, 0.0)
        fn = emit.declare(self.fn.module, f"llvm.vector.reduce.fadd.{arith.suffix(v.type)}",
                          v.type.element, [v.type.element, v.type])
        return self.b.call(fn, [zero, v], fastmath=("reassoc",))

    def scalar(self, v: Value) -> ir.Value:
        if isinstance(v, Scalar):
            return self.splat(v.v)
        return self.load(v, [self.i64(0)] * v.type.ndim)

    def buffer(self, t: Type) -> ir.Value:
        if t.unsized:
            raise NotImplementedError(f"rune_jit: {t} cannot be held whole here: {UNSIZED}")
        return self.fn.buffer(t.nbytes)

    def claim(self, i: int) -> ir.Value | None:
        """The function's output buffer that output `i` of the equation being lowered is,
        unless it is none or already claimed."""
        dest = self.pending[i] if i < len(self.pending) else None
        if dest is not None:
            self.pending[i] = None
        return dest

    def read_whole(self, i: int) -> bool:
        """Whether output `i` of the equation being lowered is read whole (demand.py)."""
        return i < len(self.whole) and self.whole[i]

    def out_buffer(self, i: int, t: Type) -> ir.Value:
        """A buffer for output `i` of the equation being lowered: where the function's
        caller wants it, if it is one of the function's outputs (no copy at the end)."""
        dest = self.claim(i)
        return dest if dest is not None else self.buffer(t)

    def fold(self, shape: Sequence[int], carried: Sequence[ir.Value],
             body: Callable[[list[ir.Value], list[ir.Value]], Sequence[ir.Value]],
             small: int = SMALL_ELEMENTS, flat: bool = False, parallel: bool = False
             ) -> list[ir.Value]:
        """carried = body(idx, carried) for every index of `shape`, in order; -> the final
        registers. A shape of at most `small` elements is unrolled: at constant indices,
        its buffers stay in registers (see emit.SMALL_BYTES). `flat`: one loop over all
        the elements when the last axis is short (see `_flat`). `parallel`: the loops
        are (emit.Fn.while_loop)."""
        if math.prod(shape) <= small:
            vals = list(carried)
            for idx in np.ndindex(*shape):
                vals = list(body([self.i64(i) for i in idx], vals))
            return vals
        if flat and len(shape) > 1 and shape[-1] < SHORT_AXIS:
            return self._flat(shape, carried, body, parallel)

        def level(d: int, idx: list[ir.Value], vals: list[ir.Value]) -> list[ir.Value]:
            if d == len(shape):
                return list(body(idx, vals))
            return self.fn.loop(self.i64(0), self.i64(shape[d]), 1, vals,
                                lambda t, v: level(d + 1, idx + [t], v), parallel)

        return level(0, [], list(carried))

    def _flat(self, shape: Sequence[int], carried: Sequence[ir.Value],
              body: Callable[[list[ir.Value], list[ir.Value]], Sequence[ir.Value]],
              parallel: bool) -> list[ir.Value]:
        """`fold` as one loop over the flat index, each axis' index its quotient and
        remainder by constants: LLVM vectorizes that loop (a (300, 5) map runs in vectors,
        its calls to exp too), where a loop of 5 inside one of 300 it would not."""
        b = self.b

        def at(t: ir.Value, vals: list[ir.Value]) -> list[ir.Value]:
            idx = []
            for n in reversed(shape[1:]):
                idx.append(b.urem(t, self.i64(n)))
                t = b.udiv(t, self.i64(n))
            return list(body([t] + idx[::-1], vals))

        return self.fn.loop(self.i64(0), self.i64(math.prod(shape)), 1, list(carried), at,
                            parallel)

    def elements(self, shape: Sequence[int], body: Callable[[list[ir.Value]], None]) -> None:
        """body(idx), which reads or writes one element, for every index of `shape`."""
        self.fold(shape, [], lambda idx, _: body(idx) or [])

    def loop_nest(self, shape: Sequence[int], body: Callable[[list[ir.Value]], None],
                  parallel: bool = False) -> None:
        """body(idx) for every index of `shape`, as loops however small the shape (a
        kernel's tiles: unrolled, they would only make the code bigger)."""
        self.fold(shape, [], lambda idx, _: body(idx) or [], small=0, parallel=parallel)

    def store(self, v: Value, dest: ir.Value) -> None:
        """Write all of `v` to the buffer at `dest`."""
        t = v.type
        if isinstance(v, Array) and v.rows is not None:  # only the rows a tape holds
            self.fn.memcpy(dest, v.ptr, self.b.mul(v.rows, self.i64(row_bytes(t))))
        elif isinstance(v, Array):
            if v.ptr is not dest:
                self.fn.memcpy(dest, v.ptr, t.nbytes)
        elif isinstance(v, Scalar) and t.shape == ():
            self.store_at(dest, t.dtype, self.i64(0), v.v)
        elif isinstance(v, Lazy) and self.vectorizable(v):
            self.store_at(dest, t.dtype, self.i64(0), self.vector(v), own=True)
        elif not (isinstance(v, Lazy) and any(store(self, v, dest) for store in STORES)):
            # a long chain over a few elements is a loop: unrolled, its code would be
            # that many times longer, for LLVM's vectorizer to fold back together
            small = SMALL_ELEMENTS if cost(v) * t.size <= UNROLLED_OPERATIONS else 0
            self.fold(t.shape, [], lambda idx, _: self.store_element(v, dest, idx) or [],
                      small, flat=t.size > small, parallel=True)

    def store_element(self, v: Value, dest: ir.Value, idx: Sequence[ir.Value]) -> None:
        """Element `idx` of `v` to the buffer at `dest`, in a parallel loop over the
        elements: no element of `v` reads what another writes (`dest` is a buffer of its
        own, or v's operand's in place, element for element: reuse.py)."""
        self.store_at(dest, v.type.dtype, self.offset(v.type.shape, idx), self.load(v, idx),
                      own=True)

    def materialize(self, v: Value, dest: ir.Value | None = None) -> Array:
        """`v` in memory (a buffer of this call unless `dest` is given)."""
        if isinstance(v, Array) and dest is None:
            return v
        dest = dest if dest is not None else self.buffer(v.type)
        self.store(v, dest)
        return Array(v.type, dest)

    def settle(self, v: Value) -> Value:
        """A 0-d value in a register; any other value as it is."""
        if v.type.shape == () and not isinstance(v, Scalar):
            return Scalar(v.type, self.scalar(v))
        return v

    # ------------------------------------------------------------- regions

    def lower_region(self, region: Region, args: Sequence[Value | Callable[[], Value]],
                     dests: dict[Var, ir.Value] | None = None,
                     sinks: Sequence[Callable[[Value], None] | None] = ()
                     ) -> list[Value | None]:
        """Lower a closed region on lowered arguments; -> its outputs, lowered. `dests`
        offers buffers to write some outputs into (the function's own outputs). An
        argument may be a function that lowers it where it is read (a loop step's row),
        and `sinks[i]` a function that stores output i where it belongs (a loop step's
        y row), which is then None. A long region is lowered in parts, each a function
        of its own (IN_PARTS), which read those rows and store those outputs themselves."""
        env: dict[Var, Any] = dict(zip(region.params, args))
        uses = _uses(region)
        clusters = elementwise_clusters(region, uses)
        sinks = list(sinks) + [None] * (len(region.outputs) - len(sinks))
        enclosing = self.pending, self.whole  # of the equation whose rule lowers this region
        walk, sunk = RegionWalk(self, region, dests, uses, clusters), None
        for split in IN_PARTS if self.width is None else ():
            sunk = split(walk, env, sinks)
            if sunk is not None:
                break
        else:
            env = {v: a() if callable(a) else a for v, a in env.items()}
            walk.lower(0, len(region.eqns), env)
            sunk = set()
        self.pending, self.whole = enclosing
        outs: list[Value | None] = []
        for i, (o, sink) in enumerate(zip(region.outputs, sinks)):
            v = None if i in sunk else env[o] if isinstance(o, Var) else self.literal(o.value)
            v = v() if callable(v) else v
            if sink is not None and v is not None:
                sink(v)
                v = None
            outs.append(v)
        return outs

    def cluster(self, members: list[Eqn], read: Callable[[Any], Value]) -> Lazy:
        """The last member's value, each element computed from the cluster's inputs with
        every member applied once, in order (elementwise_clusters)."""
        inputs = cluster_inputs(members)
        vals = [read(a) for a in inputs]
        out = members[-1].outputs[0].type

        def apply(load: Callable[[Value], ir.Value]) -> ir.Value:
            env = {a: load(v) for a, v in zip(inputs, vals)}
            for eqn in members:
                ins, params = eqn.closed
                saved, self.errors.source = self.errors.source, eqn.source
                try:
                    x = self.element_rule(eqn.prim)(
                        self, *[env[a] if isinstance(a, Var) else load(self.literal(a.value))
                                for a in ins], **params)
                except Exception as err:
                    note(err, f"(while lowering: {str(eqn).splitlines()[0]}"
                              f"{where(eqn.source)})")
                    raise
                finally:
                    self.errors.source = saved
                env[eqn.outputs[0]] = x
            return env[members[-1].outputs[0]]

        whole = None
        if self.operands_vectorizable(vals, out) and all(
                a.value.shape in ((), out.shape) for e in members for a in e.inputs
                if isinstance(a, Literal)):
            whole = lambda: apply(lambda v: self.operand_vector(v, out.size))  # noqa: E731
        return Lazy(out, lambda idx: apply(lambda v: self.load(v, idx)),
                    len(members) + sum(cost(v) for v in vals), whole=whole)

    def lower_at(self, eqn: Eqn, vals: list[Value], out_types: list[Type], params: dict
                 ) -> list[Value]:
        """Lower `eqn`; its failure sites, and errors raised lowering it, name its line."""
        saved, self.errors.source = self.errors.source, eqn.source
        try:
            return self.lower_eqn(eqn.prim, vals, out_types, params)
        except Exception as err:
            note(err, f"(while lowering: {str(eqn).splitlines()[0]}{where(eqn.source)})")
            raise
        finally:
            self.errors.source = saved

    def lower_eqn(self, prim: Primitive, vals: list[Value], out_types: list[Type],
                  params: dict) -> list[Value]:
        if "elementwise" in prim.traits:
            return [self.elementwise(prim, vals, out_types[0], params)]
        rule = LOWERINGS.get(prim)
        if rule is None:
            raise NotImplementedError(f"no CPU lowering rule for {prim.name}")
        return list(rule(self, vals, out_types, **params))

    @staticmethod
    def element_rule(prim: Primitive) -> Callable:
        """`prim`'s rule on registers: the CPU's own, else its portable element rule."""
        rule = ELEMENTS.get(prim)
        if rule is not None:
            return rule
        portable = prim.rules.get("element")
        if portable is None:
            raise NotImplementedError(f"no CPU lowering rule for {prim.name} (and no "
                                      "portable element rule)")
        return lambda lw, *xs, **params: portable(Elements(lw), *xs, **params)

    def elementwise(self, prim: Primitive, vals: list[Value], out: Type, params: dict) -> Value:
        rule = self.element_rule(prim)
        if out.shape == ():
            return Scalar(out, rule(self, *[self.scalar(v) for v in vals], **params))
        whole = None
        if self.operands_vectorizable(vals, out):
            whole = lambda: rule(  # noqa: E731
                self, *[self.operand_vector(v, out.size) for v in vals], **params)
        return Lazy(out, lambda idx: rule(self, *[self.load(v, idx) for v in vals], **params),
                    1 + sum(cost(v) for v in vals), whole=whole)

    def literal(self, value: np.ndarray) -> Value:
        t = Type(value.dtype, value.shape)
        if value.ndim == 0:
            return Scalar(t, self.const(value.dtype, value.item()))
        return Array(t, self.constant_array(value))

    def constant_array(self, value: np.ndarray) -> ir.Value:
        """An array constant, as a global of the module."""
        mt = emit.mem_type(value.dtype)
        flat = value.reshape(-1)
        data = [ir.Constant(mt, int(x) if value.dtype.kind in "iub" else float(x)) for x in flat]
        arr_t = ir.ArrayType(mt, len(data))
        g = ir.GlobalVariable(self.fn.module, arr_t, self.fn.module.get_unique_name("const"))
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(arr_t, data)
        return g


class RegionWalk:
    """A region's equations lowered in order, fused lazily (Lowerer.lower_region)."""

    def __init__(self, lw: Lowerer, region: Region, dests: dict[Var, ir.Value] | None,
                 uses: Counter, clusters: dict[int, tuple]):
        self.lw, self.region, self.dests = lw, region, dests
        self.uses, self.clusters = uses, clusters
        self.captured = {c for e in region.eqns for c in e.captures}
        self.whole = read_whole(region)
        self.over = reuse.homes(region, dests, clusters) if dests else {}
        self.home = {o: dests[o] for o in self.over.values()}
        self.depth: dict[Var, int] = {}  # lazy values read through, from each lazy value

    def reads(self) -> list[list[Var]]:
        """What lowering each equation reads: none for a cluster's member but its last,
        which reads the cluster's inputs."""
        return [[] if self.clusters.get(k) == () else
                cluster_inputs(self.clusters[k]) if k in self.clusters else
                [a for a in e.closed[0] if isinstance(a, Var)]
                for k, e in enumerate(self.region.eqns)]

    def lower(self, lo: int, hi: int, env: dict, made_in: dict | None = None) -> None:
        """Equations lo:hi, reading and filling `env`; `made_in`: more buffers that some
        values are computed in (a part's results, chunks.py)."""
        lw, dests = self.lw, {**(self.dests or {}), **(made_in or {})}

        def read(a) -> Value:
            return lw.literal(a.value) if isinstance(a, Literal) else env[a]

        for k in range(lo, hi):
            eqn, members = self.region.eqns[k], self.clusters.get(k)
            if members == ():
                continue  # computed in the element of its cluster's last equation
            ins, params = eqn.closed
            out_types = [v.type for v in eqn.outputs]
            lw.pending = [dests.get(v) if dests else None for v in eqn.outputs]
            lw.whole = [v in self.whole for v in eqn.outputs]
            if members:
                outs, ins = [lw.cluster(members, read)], cluster_inputs(members)
            else:
                outs = lw.lower_at(eqn, [read(a) for a in ins], out_types, params)
            below = 1 + max((self.depth.get(a, 0) for a in ins
                             if isinstance(a, Var) and isinstance(env[a], Lazy)), default=0)
            for i, (var, val) in enumerate(zip(eqn.outputs, outs)):
                env[var] = lw.settle(self._placed(i, var, val, below))

    def _placed(self, i: int, var: Var, val: Value, below: int) -> Value:
        """Output `i` of the equation, stored where it must be: once rather than computed
        (or copied) again in every loop step, in the temporary it reuses, or where a
        chain of lazy values would grow too deep."""
        lw, home, over = self.lw, self.home, self.over
        inside_loops = var in self.captured and isinstance(val, Lazy) and not val.cheap
        if var in home:  # made over the temporary it reads (reuse.py)
            val = lw.materialize(val, home[var])
        elif (inside_loops or (cost(val) > 0 and self.uses[var] > 1)
                or (isinstance(val, Lazy) and below > FUSION_DEPTH)):
            dest = lw.claim(i)
            val = lw.materialize(val, home[over[var]] if var in over else dest)
        if isinstance(val, Lazy):
            self.depth[var] = below
        return val


def _fusible(eqn: Eqn) -> bool:
    return ("elementwise" in eqn.prim.traits and len(eqn.outputs) == 1
            and eqn.outputs[0].type.shape != () and not eqn.prim.effectful(eqn.params))


def elementwise_clusters(region: Region, uses: Counter) -> dict[int, tuple]:
    """Groups of elementwise equations of one shape whose values, but the last's, are
    read only inside the group: each group becomes one lazy value whose element applies
    every member once (a value read twice is computed once per element, not stored).
    -> {index of a group's last equation: its members, in order; index of any other
    member: ()}; equations alone in their group are absent."""
    consumers: dict[Var, list[int]] = {}
    for k, eqn in enumerate(region.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var):
                consumers.setdefault(a, []).append(k)
    producer = {v: k for k, e in enumerate(region.eqns) for v in e.outputs}
    out: dict[int, tuple] = {}
    for root in reversed(range(len(region.eqns))):
        eqn = region.eqns[root]
        if root in out or not _fusible(eqn):
            continue
        shape, group, todo = eqn.outputs[0].type.shape, {root}, [root]
        while todo:
            for a in region.eqns[todo.pop()].inputs:
                k = producer.get(a)
                if (k is None or k in group or k in out or not _fusible(region.eqns[k])
                        or a.type.shape != shape
                        or uses[a] != len(consumers[a])  # read by a region or an output
                        or not all(c in group for c in consumers[a])):
                    continue
                group.add(k)
                todo.append(k)
        if len(group) > 1:
            out.update(dict.fromkeys(group, ()))
            out[root] = tuple(region.eqns[k] for k in sorted(group))
    return out


def cluster_inputs(members: Sequence[Eqn]) -> list:
    """What a cluster reads from outside it: its members' operands made by none of them."""
    made = {e.outputs[0] for e in members}
    seen: dict = {}
    for e in members:
        for a in e.inputs:
            if isinstance(a, Var) and a not in made:
                seen.setdefault(a, None)
    return list(seen)


def _uses(region: Region) -> Counter:
    """How often each value is read; a read from a nested region counts as many."""
    uses: Counter = Counter()
    for eqn in region.eqns:
        for a in eqn.inputs:
            if isinstance(a, Var):
                uses[a] += 1
        for c in eqn.captures:
            uses[c] += 2
    for o in region.outputs:
        if isinstance(o, Var):
            uses[o] += 1
    return uses

