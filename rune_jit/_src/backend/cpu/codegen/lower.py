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

from collections import Counter
from typing import Any, Callable, Sequence

import llvmlite.ir as ir
import numpy as np

from ....ir import Eqn, Literal, Region, Type, Var
from ....passes import note
from ....source_info import where
from ....primitive import Primitive
from . import arith, emit, reuse
from .demand import read_whole
from .emit import Fn
from .failures import ErrorSites, Failures
from .memory import Memory
from .storing import Storing
from .values import Array, Lazy, Scalar, Value, cost, rowwise
from .vectors import Vectors

LOWERINGS: dict[Primitive, Callable] = {}
ELEMENTS: dict[Primitive, Callable] = {}
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


# A lazy value computes an element by calling the rules of the values it reads, in Python:
# a chain of fused operations this long is stored, so that lowering a long chain never
# runs out of Python stack (a loop that reads and writes memory once per this many
# operations costs nothing measurable).
FUSION_DEPTH = 64


class Lowerer(Failures, Memory, Vectors, Storing):
    """Lowers regions into one LLVM function (`fn`): the walk is here; failures,
    registers and memory, vectors and stores are its bases' (failures.py, memory.py,
    vectors.py, storing.py)."""

    def __init__(self, fn: Fn, errors: ErrorSites, width: int | None = None):
        self.fn = fn
        self.errors = errors
        self.width = width  # lanes per block when lowering a per-lane region, else None
        # per output of the equation being lowered: the function's output buffer it is
        # (None if it is not one, or once claimed), so it is computed in place
        self.pending: list[ir.Value | None] = []
        self.whole: list[bool] = []  # per output of that equation: read whole (demand.py)
        # the lanes of a block still running, while its loop's step is lowered (a vector
        # mask, lane_blocks.py): a check fails in those lanes only
        self.running: ir.Value | None = None

    @property
    def b(self) -> ir.IRBuilder:
        return self.fn.b

    def with_width(self, width: int | None) -> "Lowerer":
        return Lowerer(self.fn, self.errors, width)

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
                    len(members) + sum(cost(v) for v in vals), whole=whole,
                    rowwise=rowwise(vals, out))

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
                    1 + sum(cost(v) for v in vals), whole=whole, rowwise=rowwise(vals, out))

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

