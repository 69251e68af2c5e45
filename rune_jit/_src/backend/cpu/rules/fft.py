"""The FFT in compiled code, over all of its batch at once: a call of our own Stockham
kernel (codegen/stockham.py) for complex transforms of the power-of-two lengths it
covers, else of NumPy's pocketfft loop (runtime/pocketfft.py).

After complex_pairs.py the transform is `fft_memory`: a complex operand or result is
NumPy's memory of it (a real array with a last axis of 2), which both read and write as
it is; complex_math.py interleaves the parts of an operand that is not memory
already and reads a result's parts as slices of it.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from ....ops.fft import fft_memory_p, gufunc
from ..codegen import stockham
from ..codegen.emit import I64, PTR, declare
from ..codegen.lower import lowering
from ..codegen.values import Array
from ..runtime import pocketfft


def _slots(lw, values: list[ir.Value], typ: ir.Type) -> ir.Value:
    """A stack array of `values` (pointers or int64s), for the gufunc's arguments."""
    slot = lw.fn.buffer(8 * len(values))
    for i, v in enumerate(values):
        lw.b.store(v, lw.b.gep(slot, [lw.i64(i)], source_etype=typ))
    return slot


def _transform_shape(t, complex_side: bool) -> tuple[int, ...]:
    return t.shape[:-1] if complex_side else t.shape


@lowering(fft_memory_p)
def _fft_lower(lw, args, out_types, *, kind, forward, n, scale):
    (x,), (out,) = args, out_types
    dt = out.dtype
    shape_in = _transform_shape(x.type, kind != "r2c")
    shape_out = _transform_shape(out, kind != "c2r")
    src, dest = lw.row_major(x), lw.out_buffer(0, out)
    rows = math.prod(shape_in[:-1])
    if rows and kind == "c2c" and stockham.covers(n):
        _generated(lw, n, dt, forward, src, dest, rows, scale)
    elif rows:
        _call(lw, gufunc(kind, forward, n).__name__, dt, src, dest,
              (rows, shape_in[-1], shape_out[-1]),
              (2 if kind != "r2c" else 1, 2 if kind != "c2r" else 1), scale)
    return [Array(out, dest)]


def _generated(lw, n: int, dt: np.dtype, forward: bool, src, dest, rows: int, scale: float
               ) -> None:
    """The transform as our own code (codegen/stockham.py), with its scratch here: a call
    of the kernel, which is code of its own (runtime/fft_kernels.py)."""
    work = lw.fn.buffer(4 * n * dt.itemsize, slot=False)
    factor, conj = lw.const(dt, scale), lw.const(dt, 1.0 if forward else -1.0)
    kernel = declare(lw.fn.module, stockham.symbol(n, dt), ir.VoidType(),
                     stockham.signature(factor.type).args)
    lw.b.call(kernel, [src, dest, work, lw.i64(rows), factor, conj])


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
