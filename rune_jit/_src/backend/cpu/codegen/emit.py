"""IRBuilder helpers: types, constants, loops with carried values, buffers, failure exits.

A compiled function has this shape:

    prologue:  the arena (one block for every buffer the function needs: on the
               stack, or scratch memory the caller passes and keeps) -> entry
    entry:     buffer addresses within the arena -> body
    body ...   the program; loops; a failure stores a status and jumps to exit
    exit:      free the arena and the growable buffers; return the status

Every buffer size is static, so all allocation happens once per call, before
the program runs: nothing is allocated inside a loop step.
"""

from __future__ import annotations

from typing import Callable, Sequence

import llvmlite.ir as ir
import numpy as np



class UIntType(ir.IntType):
    """An unsigned integer register. LLVM's integers have no sign (this is its iN), but the
    instructions do: the tag, carried by every value built from one (an instruction takes
    its operand's type), makes the arithmetic on it choose unsigned division, comparison,
    shift and conversion (arith.is_unsigned)."""

    _instance_cache: dict = {}  # its own: IntType's cache would hand back a signed type


I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
U8, U16, U32, U64 = (UIntType(n) for n in (8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
FLOAT_TYPES = (F16, F32, F64)
PTR = ir.PointerType()
# float16 lives in half registers: LLVM computes each operation on them in float32 and
# rounds the result to half (as NumPy does); see arith.in_float32 for the rest
REGISTER = {"f8": F64, "f4": F32, "f2": F16, "i8": I64, "i4": I32, "i2": I16, "i1": I8,
            "u8": U64, "u4": U32, "u2": U16, "u1": U8, "b1": I1}
MEMORY = {**REGISTER, "b1": I8}  # NumPy stores bool as a byte
STACK_LIMIT = 64 * 1024  # an arena this small lives on the stack
ALIGN = 64
# A buffer this small is a stack slot of its own rather than a part of the arena: read and
# written at constant offsets (Lowerer.elements unrolls small shapes), LLVM keeps it in
# registers
SMALL_BYTES = 128  # 16 float64: vectors.SMALL_ELEMENTS

# A failed call returns kind | site << 8 | lane << 32 (see runtime.py for the errors).
OK = 0
NO_SITE = 0xFFFFFF  # a failure with no site of its own (no line to name)
UNLIKELY = 1 << 20  # a failure branch's weight against: so LLVM lays the passing path out
KINDS = {"iterate": 1, "memory": 2, "singular": 3, "negative_power": 4, "index": 5,
         "callback": 6, "interrupt": 7, "check": 8}


def dtype_of(t: ir.Type) -> np.dtype:
    """The dtype whose register type `t` is (a scalar type)."""
    for k, reg in REGISTER.items():
        if reg == t and type(reg) is type(t):
            return np.dtype(k)  # "b1" is NumPy's bool
    raise TypeError(f"no dtype has registers of type {t}")


def key(dtype: np.dtype) -> str:
    return f"{dtype.kind}{dtype.itemsize}"


def reg_type(dtype: np.dtype, width: int | None = None) -> ir.Type:
    t = REGISTER[key(dtype)]
    return t if width is None else ir.VectorType(t, width)


def mem_type(dtype: np.dtype, width: int | None = None) -> ir.Type:
    t = MEMORY[key(dtype)]
    return t if width is None else ir.VectorType(t, width)


def declare(module: ir.Module, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name)
    return fn


class Indirect:
    """A call through a function pointer (llvmlite's IRBuilder.call wants a callee that
    knows its function type, which an opaque pointer does not)."""

    def __init__(self, ptr: ir.Value, ftype: ir.FunctionType):
        self.ptr, self.function_type, self.type = ptr, ftype, ptr.type

    def get_reference(self) -> str:
        return self.ptr.get_reference()


class _Distinct(ir.values.MDValue):
    """A metadata node LLVM keeps apart from every equal one (`distinct !{...}`)."""

    def descr(self, buf) -> None:
        buf.append("distinct ")
        super().descr(buf)

    # equal to itself alone, also as a key of the module's cache of uniqued nodes
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


def _distinct(module: ir.Module, operands: list) -> _Distinct:
    return _Distinct(module, operands, name=str(len(module.metadata)))


def _loop_id(module: ir.Module, group: ir.MDValue) -> ir.MDValue:
    """A loop's ID (itself first, by LLVM's convention) saying its steps are independent
    in the accesses of `group`."""
    node = _distinct(module, [])
    node.operands = (node, module.add_metadata([
        ir.MetaDataString(module, "llvm.loop.parallel_accesses"), group]))
    return node


class Fn:
    """One LLVM function being built, with its arena, exit and loop helpers."""

    def __init__(self, module: ir.Module, name: str, arg_types: Sequence[ir.Type]):
        self.module = module
        # the last argument is scratch memory from the caller for an arena too big for the
        # stack: kept between calls, it spares each call a large allocation and its page faults
        self.func = ir.Function(module, ir.FunctionType(I64, list(arg_types) + [PTR]), name)
        self.scratch = self.func.args[-1]
        self.prologue = self.func.append_basic_block("prologue")
        self.entry = self.func.append_basic_block("entry")
        self.start = start = self.func.append_basic_block("start")
        self.exit = self.func.append_basic_block("exit")
        self.at_entry = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(start)
        self.status = ir.IRBuilder(self.prologue).alloca(I64, name="status")
        self.arena_size = 0
        self.growable: list[ir.Value] = []  # slots of buffers that grow (realloc'd)
        self.interrupt_site: int | None = None  # the failure site of Ctrl-C, once polled
        # allocate an arena too big for the stack itself (malloc), for want of a caller
        # that passes scratch memory (an outlined part of a program, run by the pool)
        self.own_arena = False
        self.loops = 0  # loops whose body is being emitted (threads.may_start)
        # their (preheader, header) blocks, outermost first (outline.py: values that do
        # not change in a loop are put in a context before the loop)
        self.loop_blocks: list[tuple[ir.Block, ir.Block]] = []
        # the access group of the innermost parallel loop being emitted (`while_loop`)
        self.access_group: ir.MDValue | None = None

    # ------------------------------------------------------------- buffers

    def buffer(self, nbytes: int, slot: bool = True) -> ir.Value:
        """The address of `nbytes` of scratch for this call (valid until it returns): a
        stack slot of its own if it is small, unless not `slot` (a buffer read and written
        at indices that vary: LLVM could not keep it in registers anyway)."""
        if nbytes <= SMALL_BYTES and slot:
            return self.slot(nbytes)
        offset = self.arena_size
        self.arena_size += -(-max(nbytes, 1) // ALIGN) * ALIGN
        return self.at_entry.gep(self._arena_param(), [ir.Constant(I64, offset)], source_etype=I8)

    def slot(self, nbytes: int) -> ir.Value:
        """The address of a stack slot of `nbytes` of its own for this call."""
        pro = ir.IRBuilder(self.prologue)
        slot = pro.alloca(ir.ArrayType(I8, max(nbytes, 1)))
        slot.align = ALIGN
        holder = pro.alloca(PTR)  # read back as an untyped pointer, as the arena is
        pro.store(slot, holder)
        return self.at_entry.load(holder, typ=PTR)

    def _arena_param(self) -> ir.Value:
        if not hasattr(self, "_arena"):
            self._arena_slot = ir.IRBuilder(self.prologue).alloca(PTR, name="arena.slot")
            self._arena = self.at_entry.load(self._arena_slot, typ=PTR)
        return self._arena

    def global_i64(self, name: str) -> ir.Value:
        """An int64 of this process that the linker resolves by `name`."""
        g = self.module.globals.get(name)
        return g if g is not None else ir.GlobalVariable(self.module, I64, name)

    def signals_at_start(self) -> ir.Value:
        """The SIGINT count when this call began (interrupt.py)."""
        if not hasattr(self, "_signals"):
            self._signals = self.at_entry.load_atomic(self.global_i64("rune.interrupts"),
                                                      "monotonic", 8, typ=I64)
        return self._signals

    def inherit_signals(self, count: ir.Value) -> None:
        """Take the SIGINT count at the start of the call from the function that runs
        this one as a part of itself (outline.py)."""
        self._signals = count

    def growable_slot(self) -> ir.Value:
        """A pointer slot (null at first) whose buffer is freed at exit."""
        slot = ir.IRBuilder(self.prologue).alloca(PTR)
        self.growable.append(slot)
        return slot

    # ------------------------------------------------------------- control

    def fail(self, condition: ir.Value, status: ir.Value) -> None:
        """If `condition`, return `status` (after freeing); else carry on."""
        bad = self.func.append_basic_block("fail")
        ok = self.func.append_basic_block("ok")
        self.b.cbranch(condition, bad, ok).set_weights([1, UNLIKELY])
        self.b.position_at_end(bad)
        self.b.store(status, self.status)
        self.b.branch(self.exit)
        self.b.position_at_end(ok)

    def loop(self, start: ir.Value, stop: ir.Value, step: int, carried: Sequence[ir.Value],
             body: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
             parallel: bool = False) -> list[ir.Value]:
        """for t in range(start, stop, step): carried = body(t, carried); -> final carried.
        `parallel`: see `while_loop`."""
        cmp = "<" if step > 0 else ">"

        def advance(regs):
            new = list(body(regs[0], regs[1:]))
            return [self.b.add(regs[0], ir.Constant(I64, step))] + new

        return self.while_loop([start] + list(carried),
                               lambda regs: self.b.icmp_signed(cmp, regs[0], stop), advance,
                               parallel)[1:]

    def counted_loop(self, n: ir.Value, reverse: bool, carried: Sequence[ir.Value],
                     body: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]]
                     ) -> list[ir.Value]:
        """`loop` over range(n), or over it backwards if `reverse`."""
        if reverse:
            return self.loop(self.b.sub(n, ir.Constant(I64, 1)), ir.Constant(I64, -1), -1,
                             carried, body)
        return self.loop(ir.Constant(I64, 0), n, 1, carried, body)

    def while_loop(self, carried: Sequence[ir.Value],
                   test: Callable[[list[ir.Value]], ir.Value],
                   body: Callable[[list[ir.Value]], Sequence[ir.Value]],
                   parallel: bool = False) -> list[ir.Value]:
        """while test(carried): carried = body(carried); -> final carried.

        `parallel`: the memory accesses the body makes in `access_group` (the loads of
        Lowerer.load_at, and the stores it is told are the loop's own) touch no location
        another step writes. LLVM then vectorizes a loop it cannot prove that of (a
        store beside a gather, whose addresses no runtime check can compare); any other
        access in the loop (a scratch store, a call that writes memory) makes it serial
        again, as LLVM sees it."""
        b = self.b
        pre = b.block
        header = self.func.append_basic_block("while")
        inside = self.func.append_basic_block("while.body")
        after = self.func.append_basic_block("while.end")
        b.branch(header)
        b.position_at_end(header)
        phis = [b.phi(v.type) for v in carried]
        for p, v in zip(phis, carried):
            p.add_incoming(v, pre)
        b.cbranch(test(list(phis)), inside, after)
        b.position_at_end(inside)
        self.loops += 1
        self.loop_blocks.append((pre, header))
        outer_group = self.access_group
        if parallel:
            self.access_group = _distinct(self.module, [])
        try:
            new = list(body(list(phis)))
        finally:
            self.loops -= 1
            self.loop_blocks.pop()
            group, self.access_group = self.access_group, outer_group
        latch = b.block
        for p, v in zip(phis, new):
            p.add_incoming(v, latch)
        back = b.branch(header)
        if parallel:
            back.set_metadata("llvm.loop", _loop_id(self.module, group))
        b.position_at_end(after)
        return list(phis)

    def if_else(self, pred: ir.Value, then: Callable[[], Sequence[ir.Value]],
                otherwise: Callable[[], Sequence[ir.Value]]) -> list[ir.Value]:
        b = self.b
        yes = self.func.append_basic_block("then")
        no = self.func.append_basic_block("else")
        join = self.func.append_basic_block("join")
        b.cbranch(pred, yes, no)
        results = []
        for block, fn in ((yes, then), (no, otherwise)):
            b.position_at_end(block)
            results.append((list(fn()), b.block))
            b.branch(join)
        b.position_at_end(join)
        phis = []
        for i, v in enumerate(results[0][0]):
            p = b.phi(v.type)
            for vals, block in results:
                p.add_incoming(vals[i], block)
            phis.append(p)
        return phis

    # ------------------------------------------------------------- libc

    def call(self, name: str, ret: ir.Type, args: Sequence[ir.Value]) -> ir.Value:
        return self.b.call(declare(self.module, name, ret, [a.type for a in args]), list(args))

    def memcpy(self, dst: ir.Value, src: ir.Value, nbytes: int | ir.Value) -> None:
        n = ir.Constant(I64, nbytes) if isinstance(nbytes, int) else nbytes
        fn = self.module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
        self.b.call(fn, [dst, src, n, ir.Constant(I1, 0)])

    def memset0(self, dst: ir.Value, nbytes: int | ir.Value) -> None:
        n = ir.Constant(I64, nbytes) if isinstance(nbytes, int) else nbytes
        fn = self.module.declare_intrinsic("llvm.memset", [PTR, I64])
        self.b.call(fn, [dst, ir.Constant(I8, 0), n, ir.Constant(I1, 0)])

    # ------------------------------------------------------------- closing

    def _malloc_arena(self, pro: ir.IRBuilder) -> None:
        """The arena from malloc (kept in the last growable slot), or the "memory" status."""
        arena = pro.call(declare(self.module, "malloc", PTR, [I64]),
                         [ir.Constant(I64, self.arena_size + ALIGN)])
        pro.store(arena, self.growable[-1])
        aligned = pro.and_(pro.add(pro.ptrtoint(arena, I64), ir.Constant(I64, ALIGN - 1)),
                           ir.Constant(I64, -ALIGN))
        pro.store(pro.inttoptr(aligned, PTR), self._arena_slot)
        none = self.func.append_basic_block("no.arena")
        pro.cbranch(pro.icmp_unsigned("==", arena, ir.Constant(PTR, None)), none, self.entry)
        b = ir.IRBuilder(none)
        b.store(ir.Constant(I64, KINDS["memory"] | NO_SITE << 8), self.status)
        b.branch(self.exit)

    @property
    def scratch_bytes(self) -> int:
        """Scratch memory the caller must pass (0: the arena fits on the stack)."""
        return self.arena_size if self.arena_size > STACK_LIMIT else 0

    def finish(self) -> ir.Function:
        """Fill the prologue (arena) and exit (frees, return) once the body is done."""
        self.b.branch(self.exit)
        pro = ir.IRBuilder(self.prologue)
        heap = self.own_arena and hasattr(self, "_arena") and self.scratch_bytes
        if heap:
            self.growable.append(pro.alloca(PTR))  # freed at exit
        elif hasattr(self, "_arena"):
            if self.scratch_bytes:
                arena = self.scratch
            else:
                arena = pro.alloca(ir.ArrayType(I8, self.arena_size), name="arena")
                arena.align = ALIGN
            pro.store(arena, self._arena_slot)
        for slot in self.growable:
            pro.store(ir.Constant(PTR, None), slot)
        pro.store(ir.Constant(I64, OK), self.status)
        if heap:
            self._malloc_arena(pro)
        else:
            pro.branch(self.entry)
        self.at_entry.branch(self.start)
        ex = ir.IRBuilder(self.exit)
        free = declare(self.module, "free", ir.VoidType(), [PTR])
        for slot in self.growable:
            ex.call(free, [ex.load(slot, typ=PTR)])
        ex.ret(ex.load(self.status, typ=I64))
        return self.func


def mark_pure(fn: ir.Function) -> None:
    """Mark a function that reads and writes no memory and always returns."""
    # llvmlite checks attribute names against a list; these it does not know, so they go
    # into the underlying set directly
    for attr in ("nounwind", "willreturn", "memory(none)"):
        set.add(fn.attributes, attr)
