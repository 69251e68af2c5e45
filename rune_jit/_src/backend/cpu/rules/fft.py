"""The FFT in compiled code: a call of NumPy's pocketfft loop (runtime/pocketfft.py) per
transform, over all of its batch at once.

After complex_pairs.py, complex values are their parts; pocketfft reads and writes
complex numbers interleaved (NumPy's layout). So a complex operand is interleaved into a
buffer of this call, and a complex result split out of one, with vector shuffles: two
passes over memory beside the transform's n log n. Operands are put in memory first (a
lazy one is computed there by the vectorised stores, not element by element in the
copy). A real operand of r2c is read where it is, a real result of c2r written where
it goes.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from ....ir import Type
from ....ops.fft import fft_parts_p, gufunc
from ..codegen.emit import I64, PTR, declare
from ..codegen.lower import lowering
from ..codegen.values import Array
from ..runtime import pocketfft


# elements a vector of each part holds in the copies (32 bytes: AVX2's registers; LLVM
# splits or joins them for the target)
CHUNK_BYTES = 32


def _chunks(lw, count: int, dt: np.dtype, body) -> None:
    """body(offset, width) over `count` elements: vectors of a chunk, then single ones."""
    width = CHUNK_BYTES // dt.itemsize
    whole = count // width
    lw.fn.loop(lw.i64(0), lw.i64(whole), 1, [], lambda i, _: body(
        lw.b.mul(i, lw.i64(width)), width) or [])
    lw.fn.loop(lw.i64(whole * width), lw.i64(count), 1, [], lambda i, _: body(i, None) or [])


def _interleave(lw, parts: list[ir.Value], dt: np.dtype, count: int, dest: ir.Value) -> None:
    """The complex numbers of parts (re, im) in memory, interleaved at `dest`."""
    def body(at, width):
        re, im = (lw.load_at(p, dt, at, width) for p in parts)
        out = lw.b.mul(at, lw.i64(2))
        if width is None:
            lw.store_at(dest, dt, out, re)
            lw.store_at(dest, dt, lw.b.add(out, lw.i64(1)), im)
            return
        mask = [k // 2 + (k % 2) * width for k in range(2 * width)]
        lw.store_at(dest, dt, out, lw.b.shuffle_vector(re, im, _indices(mask)))

    _chunks(lw, count, dt, body)


def _split(lw, src: ir.Value, dt: np.dtype, count: int, outs: list[ir.Value]) -> None:
    """Interleaved complex numbers at `src`, into their parts' buffers."""
    def body(at, width):
        at2 = lw.b.mul(at, lw.i64(2))
        if width is None:
            for k, out in enumerate(outs):
                lw.store_at(out, dt, at, lw.load_at(src, dt, lw.b.add(at2, lw.i64(k))))
            return
        both = lw.load_at(src, dt, at2, 2 * width)
        for k, out in enumerate(outs):
            part = lw.b.shuffle_vector(both, both, _indices(range(k, 2 * width, 2)))
            lw.store_at(out, dt, at, part)

    _chunks(lw, count, dt, body)


def _indices(ks) -> ir.Constant:
    ks = list(ks)
    return ir.Constant(ir.VectorType(ir.IntType(32), len(ks)), ks)


def _in_memory(lw, v) -> ir.Value:
    """v's elements in row-major memory (a tape's rows and lazy values copied there)."""
    return v.ptr if isinstance(v, Array) and v.rows is None else lw.materialize(
        v, lw.buffer(v.type)).ptr


def _slots(lw, values: list[ir.Value], typ: ir.Type) -> ir.Value:
    """A stack array of `values` (pointers or int64s), for the gufunc's arguments."""
    slot = lw.fn.buffer(8 * len(values))
    for i, v in enumerate(values):
        lw.b.store(v, lw.b.gep(slot, [lw.i64(i)], source_etype=typ))
    return slot


@lowering(fft_parts_p)
def _fft_lower(lw, args, out_types, *, kind, forward, n, scale):
    dt = out_types[0].dtype
    rows = math.prod(args[0].type.shape[:-1])
    m_in, m_out = args[0].type.shape[-1], out_types[0].shape[-1]
    if len(args) == 2:
        src = lw.buffer(Type(dt, args[0].type.shape + (2,)))
        _interleave(lw, [_in_memory(lw, a) for a in args], dt, args[0].type.size, src)
    else:
        src = _in_memory(lw, args[0])
    if len(out_types) == 2:
        dest = lw.buffer(Type(dt, out_types[0].shape + (2,)))
    else:
        dest = lw.out_buffer(0, out_types[0])
    if rows:
        _call(lw, gufunc(kind, forward, n).__name__, dt, src, dest,
              (rows, m_in, m_out), (2 if len(args) == 2 else 1, 2 if len(out_types) == 2 else 1),
              scale)
    if len(out_types) == 1:
        return [Array(out_types[0], dest)]
    outs = [Array(t, lw.out_buffer(i, t)) for i, t in enumerate(out_types)]
    _split(lw, dest, dt, out_types[0].size, [o.ptr for o in outs])
    return outs


def _call(lw, name: str, dt: np.dtype, src, dest, dims: tuple, widths: tuple, scale: float
          ) -> None:
    """The gufunc loop on `rows` contiguous rows: loop(args, dims, steps, data), NumPy's
    PyUFuncGenericFunction, with the scale a 0-d operand (stride 0)."""
    b = lw.b
    rows, m_in, m_out = dims
    item_in, item_out = (dt.itemsize * w for w in widths)
    factor = lw.fn.buffer(8)
    b.store(lw.const(dt, scale), factor)
    args = _slots(lw, [src, factor, dest], PTR)
    sizes = _slots(lw, [lw.i64(v) for v in dims], I64)
    steps = _slots(lw, [lw.i64(v) for v in (m_in * item_in, 0, m_out * item_out, item_in,
                                            item_out)], I64)
    data = b.inttoptr(b.load(lw.fn.global_i64(pocketfft.symbol(name, dt, data=True)), typ=I64),
                      PTR)
    loop = declare(lw.fn.module, pocketfft.symbol(name, dt), ir.VoidType(), [PTR] * 4)
    b.call(loop, [args, sizes, steps, data])
