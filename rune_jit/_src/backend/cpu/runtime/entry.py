"""A native entry for jitted calls: a Python builtin, compiled with LLVM once per
signature, that checks its arguments and runs the program without running Python.

Through Python a jitted call costs about 2 µs; NumPy's `ctypes` attributes alone
cost 1.5 µs an array. The entry is a `METH_FASTCALL | METH_KEYWORDS` builtin for
one signature: it reads each argument's ndarray struct (type, dtype, shape,
flags) or, for a 0-d one, the value of a NumPy scalar of its dtype or (where the
signature has a Python number, weakly typed) of a Python float, int or bool;
allocates the outputs with NumPy's C API, releases the GIL around the program
and returns the result. Anything else (another signature, keywords) goes to
the Python path, and a failure status to a Python function that raises the
right error. Addresses that differ between processes (NumPy's types, dtypes
and API table, Python's number types) are resolved by linking, so the object
code stays cacheable on disk; those of the two Python functions and of the
program are read from the builtin's table, and so are which arguments are
Python numbers (one program serves a Python float and a NumPy float64: the trace
tells them apart, the program may not). The entry's code thus depends on the
signature alone: the programs of one signature share it.
"""

from __future__ import annotations

import ctypes
import itertools
import weakref
from functools import lru_cache
from typing import Callable, Sequence

import llvmlite.ir as ir
import numpy as np

from .... import config
from ....call import python_mode
from ....dtypes import SUPPORTED
from ....ir import Type
from . import llvm
from ..codegen.emit import I8, I32, I64, PTR, Indirect, declare

# PyArrayObject_fields (64-bit CPython): ob_type at 8, data at 16 (after PyObject_HEAD),
# nd at 24, dimensions at 32, descr at 56, flags at 64; NPY_ARRAY_C_CONTIGUOUS | ALIGNED
OB_TYPE, DATA, ND, DIMS, DESCR, FLAGS = 8, 16, 24, 32, 56, 64
CARRAY = 0x0001 | 0x0100
METH_FASTCALL_KEYWORDS = 0x0080 | 0x0002
PY_ARRAY_EMPTY = 184  # index of PyArray_Empty in NumPy's C API table (fixed by its ABI)


def _check_layout() -> None:
    """Arrays hold their data pointer at DATA; a float, and NumPy's scalars, their value."""
    a = np.zeros(3)
    values = [1.5] + [np.dtype(d).type(1) for d in SUPPORTED]
    if ctypes.c_void_p.from_address(id(a) + DATA).value != a.ctypes.data or any(
            ctypes.string_at(id(v) + DATA, 8 if type(v) is float else v.itemsize)
            != np.asarray(v).tobytes() for v in values):
        raise RuntimeError("rune_jit: unexpected NumPy array layout; cannot call compiled code")


_check_layout()


def eligible(in_types: Sequence[Type], out_types: Sequence[Type], scratch: int) -> bool:
    """Programs with small outputs and no scratch memory: their calls are short enough
    that dispatch matters (large results come from the pool instead), where this Python
    exports what an entry calls."""
    from .pool import MIN_BYTES

    return (not scratch and bool(out_types) and all(t.nbytes < MIN_BYTES for t in out_types)
            and all(exported(name) for name in C_API))


SYMBOL = "rune_entry"
SLOW, ON_ERROR, WEAK, KERNEL = range(4)  # the words of an entry's table (_Table)


class Code:
    """The entry of the programs of one structure (`kinds`), mapped as long as this lives
    (each program of the structure whose entry was asked for holds it)."""

    def __init__(self, in_kinds: tuple[Type, ...], out_kinds: tuple[Type, ...]):
        structure = (f"entry {', '.join(map(_named, in_kinds))} -> "
                     f"{', '.join(map(_named, out_kinds))}")
        obj = llvm.object_code(structure, ".entry", lambda: module_ir(in_kinds, out_kinds))
        self.image, (self.address,) = llvm.link(obj, [SYMBOL], imports())


_codes: weakref.WeakValueDictionary[tuple, Code] = weakref.WeakValueDictionary()


def code(in_types: Sequence[Type], out_types: Sequence[Type]) -> Code:
    """The entry of the programs of these argument types. Its code depends on their dtypes
    and ranks alone (it calls the program its table names, and checks and allocates the
    dimensions the table holds: `dims`), so it is compiled once per structure and kept in
    the disk cache: a small program compiles in a third of the time its entry would add to
    it, and programs that differ only in their operations or shapes share one."""
    key = (tuple(map(kind, in_types)), tuple(map(kind, out_types)))
    found = _codes.get(key)
    if found is None:
        found = _codes[key] = Code(*key)
    return found


def kind(t: Type) -> Type:
    """What an entry's code knows of a type: its dtype and rank (shape all zeros)."""
    return Type(t.dtype, (0,) * t.ndim)


def _named(k: Type) -> str:
    return f"{k.dtype.str}/{k.ndim}"


def dims(in_types: Sequence[Type], out_types: Sequence[Type]) -> list[int]:
    """The words of an entry's table after its header (from SHAPES on): each input's
    dimensions, then each output's."""
    return [n for t in [*in_types, *out_types] for n in t.shape]


def module_ir(in_kinds: Sequence[Type], out_kinds: Sequence[Type]) -> str:
    """The LLVM IR of `SYMBOL`, the entry of the programs of these kinds of arguments."""
    module = ir.Module(SYMBOL)
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64, PTR]), SYMBOL)
    table_obj, args, nargsf, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slow = fn.append_basic_block("slow")
    c = lambda n: ir.Constant(I64, n)  # noqa: E731
    table = data_pointer(b, table_obj)  # the builtin's self: an int64 array

    def word(i):
        return b.load(b.gep(table, [c(i)], source_etype=I64), typ=I64)

    def fail_unless(cond):
        ok = fn.append_basic_block("ok")
        b.cbranch(cond, ok, slow)
        b.position_at_end(ok)

    # with jit disabled (in some thread), or another backend chosen, every call takes the
    # Python path, which knows
    for flag in ("rune.jit_disabled", "rune.not_native"):
        fail_unless(b.icmp_signed("==", b.load(global_named(module, flag), typ=I32),
                                  ir.Constant(I32, 0)))
    nargs = b.and_(nargsf, c((1 << 63) - 1))  # less PY_VECTORCALL_ARGUMENTS_OFFSET
    fail_unless(b.and_(b.icmp_unsigned("==", kwnames, ir.Constant(PTR, None)),
                       b.icmp_unsigned("==", nargs, c(len(in_kinds)))))
    weak = word(WEAK)  # Python numbers' bits
    at = list(itertools.accumulate([t.ndim for t in [*in_kinds, *out_kinds]], initial=SHAPES))
    objs = [_input(b, module, b.load(b.gep(args, [c(i)], source_etype=PTR), typ=PTR), t,
                   lambda d, i=i: word(at[i] + d), _bit(b, weak, i), fail_unless)
            for i, t in enumerate(in_kinds)]
    empty = declare(module, "rune.empty", PTR, [I32, PTR, PTR, I32])
    outs = [_new_array(b, module, empty, t, b.gep(table, [c(at[len(in_kinds) + k])],
                                                  source_etype=I64))
            for k, t in enumerate(out_kinds)]
    _fail_if_null(b, fn, module, outs)
    kernel = Indirect(b.inttoptr(word(KERNEL), PTR), ir.FunctionType(I64, [PTR] * (
        len(objs) + len(outs) + 1)))
    state = b.call(declare(module, "PyEval_SaveThread", PTR, []), [])
    status = b.call(kernel, objs + outs + [ir.Constant(PTR, None)])
    b.call(declare(module, "PyEval_RestoreThread", ir.VoidType(), [PTR]), [state])
    failed, done = fn.append_basic_block("failed"), fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("!=", status, c(0)), failed, done)
    b.position_at_end(failed)
    _release(b, module, outs)
    number = b.call(declare(module, "PyLong_FromLongLong", PTR, [I64]), [status])
    # the error, made (not raised: raised here, its traceback has no frame of ours)
    err = b.call(declare(module, "PyObject_CallOneArg", PTR, [PTR, PTR]),
                 [b.inttoptr(word(ON_ERROR), PTR), number])
    _release(b, module, [number])
    with b.if_then(b.icmp_unsigned("!=", err, ir.Constant(PTR, None))):
        b.call(declare(module, "PyErr_SetObject", ir.VoidType(), [PTR, PTR]),
               [_field(b, err, OB_TYPE, PTR), err])
        _release(b, module, [err])
    b.ret(ir.Constant(PTR, None))  # with the error set
    b.position_at_end(done)
    b.ret(outs[0] if len(outs) == 1 else _tuple(b, module, outs))
    b.position_at_end(slow)
    vectorcall = declare(module, "PyObject_Vectorcall", PTR, [PTR, PTR, I64, PTR])
    b.ret(b.call(vectorcall, [b.inttoptr(word(SLOW), PTR), args, nargsf, kwnames]))
    return str(module)


# ------------------------------------------------------------- calls into Python
#
# The entry calls Python through PyObject_Vectorcall (its slow path) and
# PyObject_CallOneArg (its error path), which CPython exports from 3.11 on; 3.10 defines
# them in its headers only (static inline). There jitted calls take the Python path,
# about 2 µs where the entry takes 0.2 µs, and mean the same.

C_API = ("PyObject_Vectorcall", "PyObject_CallOneArg")


def exported(name: str) -> bool:
    """Whether this process defines the C API function `name` (where the loader looks)."""
    return hasattr(ctypes.pythonapi, name)


def descr_symbol(dtype: np.dtype) -> str:
    return f"rune.dtype.{dtype.str[1:]}"


def scalar_symbol(dtype: np.dtype) -> str:
    """The name of the type of NumPy's scalars of `dtype` (np.float32, ...)."""
    return f"rune.scalar.{dtype.str[1:]}"


def global_named(module: ir.Module, name: str) -> ir.Value:
    """An object of this process, by a name the linker resolves (see `imports`)."""
    g = module.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(module, I8, name)
    return g


def _field(b: ir.IRBuilder, obj: ir.Value, offset: int, t: ir.Type) -> ir.Value:
    return b.load(b.gep(obj, [ir.Constant(I64, offset)], source_etype=I8), typ=t)


def data_pointer(b: ir.IRBuilder, array: ir.Value) -> ir.Value:
    """The address of the elements of the ndarray object at `array`."""
    return _field(b, array, DATA, PTR)


def _is_array_of(b, module, obj, t: Type, dim: Callable, fail_unless) -> ir.Value:
    """obj is an exact ndarray with t's dtype (descriptor) and rank, its dimension d
    `dim(d)`, C order, aligned; each field read only once those before it say that it
    may be."""
    def field(offset, typ):
        return _field(b, obj, offset, typ)

    fail_unless(b.icmp_unsigned("==", field(OB_TYPE, PTR), global_named(module, "rune.ndarray")))
    fail_unless(b.and_(b.icmp_signed("==", field(ND, I32), ir.Constant(I32, t.ndim)),
                       b.icmp_unsigned("==", field(DESCR, PTR),
                                       global_named(module, descr_symbol(t.dtype)))))
    ok = b.icmp_unsigned("==", b.and_(field(FLAGS, I32), ir.Constant(I32, CARRAY)),
                         ir.Constant(I32, CARRAY))
    if t.ndim:
        dims = field(DIMS, PTR)
        for d in range(t.ndim):
            got = b.load(b.gep(dims, [ir.Constant(I64, d)], source_etype=I64), typ=I64)
            ok = b.and_(ok, b.icmp_signed("==", got, dim(d)))
    return ok


def _bit(b, word, i: int) -> ir.Value:
    """Bit i of the 64-bit `word` (false past bit 63)."""
    if i >= 64:
        return ir.Constant(ir.IntType(1), 0)
    return b.trunc(b.lshr(word, ir.Constant(I64, i)), ir.IntType(1))


def _input(b, module, obj, t: Type, dim: Callable, weak, fail_unless) -> ir.Value:
    """What the kernel is given for the argument obj: obj, an array of t's kind whose
    dimension d is `dim(d)`; or for a 0-d t
    a stand-in for one (the kernel reads only an array's data pointer, at DATA) pointing
    to obj's value: obj a 0-d array of t, a NumPy scalar of t's dtype or, where `weak`
    (an argument traced as a Python number), a Python float, int or bool."""
    if t.ndim:
        fail_unless(_is_array_of(b, module, obj, t, dim, fail_unless))
        return obj
    with b.goto_entry_block():
        slot, overflow, holder = b.alloca(ir.ArrayType(I64, 4)), b.alloca(I32), b.alloca(PTR)
        b.store(slot, holder)  # read back as an untyped pointer (as emit.Fn.buffer does)
        cell = b.load(holder, typ=PTR)
    typ = _field(b, obj, OB_TYPE, PTR)
    data = b.gep(cell, [ir.Constant(I64, 2)], source_etype=I64)
    with b.if_else(weak) as (python, numpy):
        with python:
            value = b.gep(cell, [ir.Constant(I64, 3)], source_etype=I64)
            b.store(_python_number(b, module, obj, typ, t, value, overflow, fail_unless), data)
        with numpy:
            is_array = b.icmp_unsigned("==", typ, global_named(module, "rune.ndarray"))
            with b.if_else(is_array) as (array, scalar):
                with array:
                    fail_unless(_is_array_of(b, module, obj, t, dim, fail_unless))
                    b.store(data_pointer(b, obj), data)
                with scalar:  # a NumPy scalar's value follows its PyObject header
                    fail_unless(b.icmp_unsigned("==", typ, global_named(
                        module, scalar_symbol(t.dtype))))
                    b.store(b.gep(obj, [ir.Constant(I64, DATA)], source_etype=I8), data)
    return cell


def _python_number(b, module, obj, typ, t: Type, value, overflow, fail_unless) -> ir.Value:
    """The address of the value of obj, a Python number of t's dtype's kind (float for
    float64, int for int64 if it fits, bool for bool), stored at `value` if converted."""
    if t.dtype == np.float64:  # a float's value sits where a NumPy scalar's does
        fail_unless(b.icmp_unsigned("==", typ, global_named(module, "rune.float")))
        return b.gep(obj, [ir.Constant(I64, DATA)], source_etype=I8)
    if t.dtype == np.int64:
        fail_unless(b.icmp_unsigned("==", typ, global_named(module, "rune.int")))
        to_long = declare(module, "PyLong_AsLongLongAndOverflow", I64, [PTR, PTR])
        b.store(b.call(to_long, [obj, overflow]), value)
        fail_unless(b.icmp_signed("==", b.load(overflow, typ=I32), ir.Constant(I32, 0)))
        return value
    if t.dtype == np.bool_:
        true = b.icmp_unsigned("==", obj, global_named(module, "rune.true"))
        fail_unless(b.or_(true, b.icmp_unsigned("==", obj, global_named(module, "rune.false"))))
        b.store(b.zext(true, I8), value)
        return value
    fail_unless(ir.Constant(ir.IntType(1), 0))  # no Python number is traced as this dtype
    return value


def _new_array(b, module, empty, t: Type, dims: ir.Value) -> ir.Value:
    """A new array of t's kind, its dimensions the t.ndim int64s at `dims`."""
    descr = global_named(module, descr_symbol(t.dtype))
    b.call(declare(module, "Py_IncRef", ir.VoidType(), [PTR]), [descr])  # Empty steals it
    return b.call(empty, [ir.Constant(I32, t.ndim), dims, descr, ir.Constant(I32, 0)])


def _fail_if_null(b, fn, module, outs) -> None:
    """If an allocation failed (NumPy set MemoryError), free the others, return NULL."""
    null = ir.Constant(PTR, None)
    bad = None
    for o in outs:
        is_null = b.icmp_unsigned("==", o, null)
        bad = is_null if bad is None else b.or_(bad, is_null)
    oom, ok = fn.append_basic_block("no.memory"), fn.append_basic_block("allocated")
    b.cbranch(bad, oom, ok)
    b.position_at_end(oom)
    _release(b, module, outs)  # Py_DecRef ignores NULL
    b.ret(null)
    b.position_at_end(ok)


def _release(b, module, objs) -> None:
    dec = declare(module, "Py_DecRef", ir.VoidType(), [PTR])
    for o in objs:
        b.call(dec, [o])


def _tuple(b, module, items) -> ir.Value:
    tup = b.call(declare(module, "PyTuple_New", PTR, [I64]), [ir.Constant(I64, len(items))])
    setitem = declare(module, "PyTuple_SetItem", I32, [PTR, I64, PTR])  # steals the item
    for i, o in enumerate(items):
        b.call(setitem, [tup, ir.Constant(I64, i), o])
    return tup


# ------------------------------------------------------------- on the Python side


def _array_api() -> int:
    from numpy._core import _multiarray_umath

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(_multiarray_umath._ARRAY_API, None)


@lru_cache(maxsize=None)
def imports() -> dict[str, int]:
    """The addresses the entries' names stand for in this process."""
    found = {"rune.ndarray": id(np.ndarray), "rune.float": id(float), "rune.int": id(int),
             "rune.true": id(True), "rune.false": id(False),
             "rune.jit_disabled": ctypes.addressof(python_mode.DISABLED_ANYWHERE),
             "rune.not_native": ctypes.addressof(config.NOT_NATIVE),
             "rune.empty": ctypes.c_void_p.from_address(_array_api() + 8 * PY_ARRAY_EMPTY).value}
    for d in SUPPORTED:  # NumPy's builtin descriptor of each dtype (one object each)
        found[descr_symbol(d)] = id(np.dtype(d))
        found[scalar_symbol(d)] = id(np.dtype(d).type)
    return found


class PyMethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


class _Table(ctypes.Structure):
    """What an entry reads (the addresses of its two Python functions, which arguments
    are Python numbers, the program it runs; then, from word SHAPES on, `dims`) and the
    method definition its builtin points to, in one block of memory."""

    _fields_ = [("slow", ctypes.c_void_p), ("on_error", ctypes.c_void_p),
                ("weak", ctypes.c_uint64), ("kernel", ctypes.c_void_p),
                ("method", PyMethodDef)]


SHAPES = ctypes.sizeof(_Table) // 8
_NAME = b"rune_jit_entry"  # lives as long as the module: the definitions point to it

_new_builtin = ctypes.pythonapi.PyCFunction_NewEx
_new_builtin.restype = ctypes.py_object
_new_builtin.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


def builtin(address: int, slow: Callable, on_error: Callable, owner: object,
            weak: int = 0, name: bytes = _NAME, kernel: int = 0,
            shapes: Sequence[int] = ()) -> Callable:
    """The builtin of one program's entry for one jitted function: call it like the
    function, with the arguments whose bits `weak` sets Python numbers (traced weakly)
    and the others arrays or NumPy scalars; it runs the program at `kernel` on arguments
    and results of the dimensions `shapes` (`dims`; `name`, bytes that outlive it, is its
    `__name__`). It owns all it points to, however it is
    reached and however late the garbage collector frees it: its self is an array over
    the table, which CPython keeps until after the last read of the method definition,
    and its module slot holds the two functions (the collector sees them there) and
    `owner`, which keeps the code at `address` and `kernel` mapped."""
    words = np.empty(SHAPES + len(shapes), np.int64)
    words[SHAPES:] = shapes
    table = _Table.from_buffer(words)  # a view: `words` holds the memory
    table.slow, table.on_error, table.weak, table.kernel = id(slow), id(on_error), weak, kernel
    table.method = PyMethodDef(name, address, METH_FASTCALL_KEYWORDS, None)
    return _new_builtin(ctypes.addressof(table.method), words, (slow, on_error, owner))
