"""Large matrix products through OpenBLAS's gemm (scipy-openblas64, as lapack.py's calls).

A product with enough work (GEMM_WORK multiply-adds a matrix) is one gemm call per part,
when OpenBLAS's kernels use vectors as wide as linalg.py's register tiles do: its packed,
cache-blocked kernels then beat the tiles (1024 x 1024 x 1024 on znver5, two threads:
gemm 14.6 ms, tiles 20.5 to 35), and read either operand in place whether its rows run
along the contraction or along the free axis (gemm's transpose flags), so nothing is
laid out first. Row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ: gemm is called with the
operands swapped. OpenBLAS's AVX2 kernels on an AVX-512 CPU (OPENBLAS_CORETYPE=Haswell,
as on this project's build machines) are slower than the tiles at every size measured
there (1024³: 25 ms against 20.5 on two threads; 256³: 387 against 212 us), so there
the tiles compute every product.

The parts run on the pool's threads (one gemm call each, OpenBLAS's own threads left at
one), split by shape alone so that the rounding does not depend on the thread count:
by rows of C when C is big, else (a long contraction into a small C, Tᵀ F) by blocks of
the contraction into partial products that are then summed in order.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

import llvmlite.ir as ir
import numpy as np

from . import lapack
from ..codegen.emit import I64, PTR, declare
from ..runtime.llvm import vector_bits
from .parallel_maps import block_rows, in_blocks, spans

# Multiply-adds a matrix from which a product calls gemm. Measured against linalg.py's
# kernels on znver5 with OpenBLAS's AVX-512 kernels: from 64^3 to 256^3 the two are as
# fast (256^3: 232 against 218 us on two threads), from 512^3 gemm is faster; below 64^3
# a call's fixed cost shows.
GEMM_WORK = 1 << 18
PART_WORK = 1 << 22  # multiply-adds a part, about: a hundred microseconds or more
MAX_PARTS = 16
ROW_ALIGN = 16  # rows of C a part starts at a multiple of (OpenBLAS's kernel heights)
# Rows of C a part by rows has, at least: each gemm call packs the whole of the other
# operand again, which costs about 1/rows of its work (1024³ on one thread in 16, 8, 4
# and 2 parts: 52, 43, 42 and 41 ms; one call 40)
PART_ROWS = 128
SPLIT_ROWS = 1 << 14  # outputs a matrix, at least, for parts by rows (no partial sums)
# OpenBLAS's cores (openblas_get_corename) whose kernels are AVX-512
WIDE_CORES = ("SkylakeX", "Cooperlake", "SapphireRapids")


def layout(in_place, order_nk: list[int], order_kn: list[int]) -> str | None:
    """How gemm reads an operand held in place: "N" with its free axes before the
    contracted ones (row-major [free, k]), "T" after them, None when neither is so."""
    if in_place(order_nk):
        return "N"
    if in_place(order_kn):
        return "T"
    return None


def usable(dtype: np.dtype, m: int, n: int, k: int) -> bool:
    """Whether a product of m x k by k x n calls gemm."""
    return dtype in (np.float32, np.float64) and m * n * k >= GEMM_WORK and _wide_kernels()


@lru_cache(maxsize=None)
def _wide_kernels() -> bool:
    """Whether OpenBLAS's kernels use vectors as wide as the register tiles'."""
    if vector_bits() < 512:
        return True
    corename = lapack.library().scipy_openblas_get_corename64_
    corename.restype = ctypes.c_char_p
    return corename().decode() in WIDE_CORES


def parts(m: int, n: int, k: int) -> tuple[str, int]:
    """How a product of m x k by k x n is split: ("rows" | "k", parts), by shape alone."""
    count = max(1, min(MAX_PARTS, m * n * k // PART_WORK))
    if m * n >= SPLIT_ROWS:
        return "rows", max(1, min(count, m // PART_ROWS))
    return "k", max(1, min(count, k // 256))


def product(lw, a, a_form: str, b, b_form: str, out, nb: int, m: int, n: int, k: int):
    """out[b] = A[b] B[b], `a` and `b` the operands' addresses: A's matrices m x k ("N":
    stored [m, k], "T": [k, m]), B's k x n ("N": stored [n, k], "T": [k, n]); -> the
    output's buffer."""
    dt = out.dtype
    c = lw.out_buffer(0, out)
    how, count = parts(m, n, k)
    lapack.library()
    span, count = spans(m, count, ROW_ALIGN) if how == "rows" else spans(k, count)
    partial = (lw.buffer(out.with_shape((count, nb, m, n)))
               if how == "k" and count > 1 else None)

    def part(j: ir.Value) -> None:
        bi, p = lw.b.udiv(j, lw.i64(count)), lw.b.urem(j, lw.i64(count))
        a0, b0 = lw.b.mul(bi, lw.i64(m * k)), lw.b.mul(bi, lw.i64(n * k))
        c0 = lw.b.mul(bi, lw.i64(m * n))
        if how == "rows":
            r0, r1 = block_rows(lw, p, span, m)
            a0 = lw.b.add(a0, lw.b.mul(r0, lw.i64(k if a_form == "N" else 1)))
            c0 = lw.b.add(c0, lw.b.mul(r0, lw.i64(n)))
            _gemm(lw, dt, (b, b_form, b0, n), (a, a_form, a0, m), c, c0,
                  lw.b.sub(r1, r0), n, lw.i64(k), k)
            return
        k0, k1 = block_rows(lw, p, span, k)
        a0 = lw.b.add(a0, lw.b.mul(k0, lw.i64(1 if a_form == "N" else m)))
        b0 = lw.b.add(b0, lw.b.mul(k0, lw.i64(1 if b_form == "N" else n)))
        dest, d0 = (c, c0) if partial is None else (partial, lw.b.add(
            lw.b.mul(p, lw.i64(nb * m * n)), c0))
        _gemm(lw, dt, (b, b_form, b0, n), (a, a_form, a0, m), dest, d0,
              lw.i64(m), n, lw.b.sub(k1, k0), k)

    in_blocks(lw, nb * count, part)
    if partial is not None:
        sum_parts(lw, partial, c, dt, count, nb * m * n)
    return c


def _gemm(lw, dt, b_op, a_op, c, c0, rows: ir.Value, n: int, k: ir.Value, k_all: int
          ) -> None:
    """C[rows x n] (row-major, at c + c0) = A[rows x k] B[k x n], as column-major
    Cᵀ = Bᵀ Aᵀ. Each operand is (pointer, form, element offset, its free size); `k_all`
    is the whole contraction's length, the row length of a "N" operand."""
    b_ptr, b_form, b0, b_free = b_op
    a_ptr, a_form, a0, a_free = a_op
    # B stored [k, n] is column-major Bᵀ already; stored [n, k] it is B, transposed
    tb, ldb = ("N", b_free) if b_form == "T" else ("T", k_all)
    # A stored [m, k] is column-major Aᵀ already; stored [k, m] it is A, transposed
    ta, lda = ("N", k_all) if a_form == "N" else ("T", a_free)
    call = lapack.Call(lw, dt)
    args = [call.char(tb), call.char(ta), call.int(n), call.int(rows), call.int(k),
            call.scalar(1.0), lw.address(b_ptr, dt, b0), call.int(ldb),
            lw.address(a_ptr, dt, a0), call.int(lda), call.scalar(0.0),
            lw.address(c, dt, c0), call.int(n)]
    fn = declare(lw.fn.module, lapack.symbol("gemm", dt), ir.VoidType(),
                 [PTR] * len(args) + [I64] * 2)
    lw.b.call(fn, args + [lw.i64(1)] * 2)  # the hidden lengths of the two characters


def sum_parts(lw, partial, c, dt, count: int, size: int) -> None:
    """c = the sum of the `count` partial products, in order."""
    def one(i, _):
        total = lw.load_at(partial, dt, i)
        for p in range(1, count):
            total = lw.b.fadd(total, lw.load_at(partial, dt, lw.b.add(i, lw.i64(p * size))))
        lw.store_at(c, dt, i, total)
        return []

    lw.fn.loop(lw.i64(0), lw.i64(size), 1, [], one)
