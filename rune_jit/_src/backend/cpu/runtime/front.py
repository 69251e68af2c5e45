"""A native dispatcher in front of a native entry, for jitted calls of one structure.

A program's entry (entry.py) takes its leaves, positionally. A call made of other things
(a dict of arrays, a static int, keywords: a `dispatch.Plan` describes its structure)
reaches it through a front: a builtin compiled for that structure, which checks each
container's exact type and size, looks up each dict key, checks each static value's
exact type and equality, and calls the entry with the leaves it found; the entry checks
the leaves. Anything else (another structure, another static value, a leaf the entry
refuses: it returns `dispatch.MISSED` then) goes to `slow` with the call as it was made.
A Python dispatcher doing the same cost 2.5 to 4.7 times a call of arrays alone (bench
row Dmix against Dmix-arrays); a front adds some 20 ns to that call.

A front's code names the objects it compares with (types, keys, static values) and
calls (the entry, `slow`) by numbers, which linking resolves and the builtin keeps
alive: the code depends on the plan's shape alone, serves every jitted function called
with that shape, and is kept in the disk cache (compiling it costs a few ms, and a
process that loads its programs from disk need not start LLVM, nor build any IR).
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable

import llvmlite.ir as ir

from ....call import dispatch
from . import entry, llvm
from ..codegen.emit import I8, I32, I64, PTR, declare

# CPython's object layout (64-bit): a variable-size object's size (a tuple's, a list's)
# and a dict's count of items follow the PyObject header; a tuple's items follow the
# size, a list's item array's address does
SIZE, ITEMS = 16, 24
PY_EQ = 2
VECTORCALL_OFFSET = 1 << 63
NAME = b"rune_jit_front"  # lives as long as the module: the fronts' definitions point to it


def _check_layout() -> None:
    t, items, d = (1.5, 2.5), [1.5], {"a": 1}
    word = lambda address: ctypes.c_ssize_t.from_address(address).value  # noqa: E731
    if (word(id(t) + SIZE), word(id(t) + ITEMS + 8), word(id(items) + SIZE),
            word(word(id(items) + ITEMS)), word(id(d) + SIZE)) != (2, id(t[1]), 1,
                                                                   id(items[0]), 1):
        raise RuntimeError("rune_jit: unexpected layout of Python's tuples, lists or dicts; "
                           "cannot call compiled code")


_check_layout()


def front(plan: dispatch.Plan, leaf_entry: Callable, slow: Callable) -> Callable:
    """The builtin for calls of `plan`'s structure: it passes their leaves to
    `leaf_entry`, and hands any other call to `slow`."""
    shape, named = _shape(plan, [leaf_entry, dispatch.MISSED, slow])
    imports = {_symbol(k): id(obj) for k, obj in enumerate(named)}
    image, (address,) = llvm.link(_object_code(shape), ["rune_front"], imports)
    return entry.builtin(address, slow, slow, (image, named), name=NAME)


# the objects a front's code names, by number: these three, then the keywords' names,
# then those of the steps
LEAF_ENTRY, MISSED, SLOW = 0, 1, 2


def _shape(plan: dispatch.Plan, named: list) -> tuple[tuple, list]:
    """(what a front's code depends on: the plan with each object it compares with
    replaced by its number; those objects, after `named`)."""
    def number(obj: Any) -> int:
        named.append(obj)
        return len(named) - 1

    names = tuple(number(n) for n in plan.names)
    steps = []
    for step in plan.steps:
        op, v = step[:2]
        if op == "type":
            steps.append((op, v, number(step[2]), step[3]))
        elif op == "item":  # a tuple's items are in it, a list's elsewhere
            steps.append((op, v, step[2], step[3] is tuple))
        elif op == "key":
            steps.append((op, v, number(step[2])))
        elif op == "equals":
            steps.append((op, v, number(type(step[2])), number(step[2])))
        else:
            steps.append((op, v))
    return (plan.nargs, names, tuple(steps)), named


def _symbol(k: int) -> str:
    return f"rune.front.{k}"


_objects: dict[tuple, bytes] = {}  # object code by shape: the same plan's, linked again


def _object_code(shape: tuple) -> bytes:
    """The object code of a front of this shape: compiled once per process, and kept in
    the disk cache (its code names the objects it compares with, and linking gives them)."""
    obj = _objects.get(shape)
    if obj is None:
        obj = _objects[shape] = llvm.object_code(repr(shape), ".front", lambda: _module(shape))
    return obj


def _module(shape: tuple) -> str:
    """The LLVM IR of a front of this shape."""
    module = ir.Module("rune_front")
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64, PTR]), "rune_front")
    _, args, nargsf, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slow = fn.append_basic_block("slow")

    def named(k: int) -> ir.Value:
        return entry.global_named(module, _symbol(k))

    def fail_unless(cond: ir.Value) -> None:
        ok = fn.append_basic_block("ok")
        b.cbranch(cond, ok, slow)
        b.position_at_end(ok)

    nargs, names, steps = shape
    values = _call(b, nargs, names, args, nargsf, kwnames, named, fail_unless)
    leaves = _steps(b, module, steps, values, named, fail_unless)
    out = _vectorcall(b, module, named(LEAF_ENTRY), leaves)
    missed, done = fn.append_basic_block("missed"), fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("==", out, named(MISSED)), missed, done)
    b.position_at_end(done)
    b.ret(out)  # the result, or NULL with the entry's error set
    b.position_at_end(missed)
    b.call(declare(module, "Py_DecRef", ir.VoidType(), [PTR]), [out])
    b.branch(slow)
    b.position_at_end(slow)
    b.ret(b.call(declare(module, "PyObject_Vectorcall", PTR, [PTR, PTR, I64, PTR]),
                 [named(SLOW), args, nargsf, kwnames]))
    return str(module)


def _call(b, nargs: int, names: tuple, args, nargsf, kwnames, named, fail_unless) -> list:
    """Check the call's number of arguments and its keywords (in its order: their names
    are interned strings, compared as pointers); -> its arguments, then its keywords."""
    fail_unless(b.icmp_unsigned("==", b.and_(nargsf, ir.Constant(I64, VECTORCALL_OFFSET - 1)),
                                ir.Constant(I64, nargs)))
    fail_unless(b.icmp_unsigned("!=" if names else "==", kwnames, ir.Constant(PTR, None)))
    if names:
        fail_unless(b.icmp_signed("==", _load(b, kwnames, SIZE, I64),
                                  ir.Constant(I64, len(names))))
        for j, k in enumerate(names):
            fail_unless(b.icmp_unsigned("==", _load(b, kwnames, ITEMS + 8 * j), named(k)))
    return [b.load(b.gep(args, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
            for i in range(nargs + len(names))]


def _vectorcall(b, module, callee, leaves: list) -> ir.Value:
    """callee(*leaves), through an array of them in the function's frame. The leaves are
    held meanwhile: those found in a dict or list are borrowed from it, and the entry
    releases the GIL, during which another thread may take them out of it."""
    with b.goto_entry_block():
        array = b.alloca(ir.ArrayType(PTR, max(len(leaves), 1)))
        holder = b.alloca(PTR)  # read back as an untyped pointer (as emit.Fn.buffer does)
        b.store(array, holder)
        at = b.load(holder, typ=PTR)
    hold = declare(module, "Py_IncRef", ir.VoidType(), [PTR])
    for k, v in enumerate(leaves):
        b.store(v, b.gep(at, [ir.Constant(I64, k)], source_etype=PTR))
        b.call(hold, [v])
    vectorcall = declare(module, "PyObject_Vectorcall", PTR, [PTR, PTR, I64, PTR])
    out = b.call(vectorcall, [callee, at, ir.Constant(I64, len(leaves)),
                              ir.Constant(PTR, None)])
    release = declare(module, "Py_DecRef", ir.VoidType(), [PTR])
    for v in leaves:
        b.call(release, [v])
    return out


def _load(b, obj: ir.Value, offset: int, typ: ir.Type = PTR) -> ir.Value:
    return b.load(b.gep(obj, [ir.Constant(I64, offset)], source_etype=I8), typ=typ)


def _steps(b, module, steps, values: list, named, fail_unless) -> list:
    """Emit the steps of a front's shape: each checks a value or finds a new one (values
    grows); -> the leaves."""
    leaves = []
    for step in steps:
        op, v = step[0], values[step[1]]
        if op == "type":  # a container: its exact type and size
            fail_unless(b.icmp_unsigned("==", _load(b, v, entry.OB_TYPE), named(step[2])))
            fail_unless(b.icmp_signed("==", _load(b, v, SIZE, I64), ir.Constant(I64, step[3])))
        elif op == "item":  # item i of a tuple or list (its size checked)
            items = b.gep(v, [ir.Constant(I64, ITEMS)], source_etype=I8) if (
                step[3]) else _load(b, v, ITEMS)
            values.append(b.load(b.gep(items, [ir.Constant(I64, step[2])], source_etype=PTR),
                                 typ=PTR))
        elif op == "key":  # a dict's value at a key (borrowed), if it has it
            get = declare(module, "PyDict_GetItem", PTR, [PTR, PTR])
            values.append(b.call(get, [v, named(step[2])]))
            fail_unless(b.icmp_unsigned("!=", values[-1], ir.Constant(PTR, None)))
        elif op == "equals":  # a static value: its exact type, then ==
            fail_unless(b.icmp_unsigned("==", _load(b, v, entry.OB_TYPE), named(step[2])))
            compare = declare(module, "PyObject_RichCompareBool", I32, [PTR, PTR, I32])
            equal = b.call(compare, [v, named(step[3]), ir.Constant(I32, PY_EQ)])
            fail_unless(b.icmp_signed("==", equal, ir.Constant(I32, 1)))
        else:
            leaves.append(v)
    return leaves
