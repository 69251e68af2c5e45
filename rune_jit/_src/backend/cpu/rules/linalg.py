"""Products and solves: dot_general's kernels (a lazy short sum, axpy rows, register-tiled
dot products and outer products) and LU with partial pivoting."""

from __future__ import annotations

import math
from itertools import product
from typing import Sequence

import llvmlite.ir as ir
import numpy as np

from .small_products import whole_product
from ....ops.linalg import free_axes, dot_general_p, solve_p
from ..codegen import arith as A
from . import blas, lapack, parallel_maps, small_lu
from ..runtime.llvm import vector_bits
from ..codegen.lower import SHORT_AXIS, SMALL_ELEMENTS, lowering
from ..codegen.values import Array, Lazy, Scalar, cost


def _canonical(lw, x, batch: Sequence[int], free: Sequence[int], contract: Sequence[int]):
    """x as a contiguous [batch, free, contract] array (read in place when it already is)."""
    xt = x.type
    order = list(batch) + list(free) + list(contract)
    shape = tuple(xt.shape[i] for i in order)
    t = xt.with_shape(shape)
    if _in_place(x, order):
        return Array(t, x.ptr)
    inverse = np.argsort(order)
    view = Lazy(t, lambda idx: lw.load(x, [idx[inverse[i]] for i in range(xt.ndim)]), 0)
    return lw.materialize(view)


SMALL_K = 4  # contractions this short stay lazy: an outer product fuses with its consumer
SHORT_K = 8  # up to this many terms a product is a sum of products per element, stored
# (by rows: _stored_by_rows)


def _in_place(x, order) -> bool:
    """x is in memory with its axes in this order (axes of size 1 go anywhere)."""
    real = [i for i in order if x.type.shape[i] != 1]
    return isinstance(x, Array) and real == sorted(real)


@lowering(dot_general_p)
def _dot_lower(lw, args, out_types, *, contract, batch):
    """Three forms. A short contraction (an outer product) is a lazy sum of products.
    When b's rows run along its free axes, C[b, m, :] += A[b, m, k] B[b, k, :] ("axpy":
    the inner loop runs along contiguous rows of B and C). Otherwise both operands are
    laid out with k contiguous and C[b, m, n] = sum_k A[b, m, k] B[b, n, k] ("dot": the
    inner loop is a dot product, which vectorizes as its sum reassociates)."""
    a, contract, batch = _see_through(args[0], 0, contract, batch)
    b, contract, batch = _see_through(args[1], 1, contract, batch)
    out = out_types[0]
    if out.dtype == np.float16:
        return [_dot_in_float32(lw, a, b, out, contract, batch)]
    (ca, cb), (ba, bb) = contract, batch
    fa, fb = free_axes(a.type.ndim, ca, ba), free_axes(b.type.ndim, cb, bb)
    size = lambda x, axes: math.prod([x.type.shape[i] for i in axes])  # noqa
    nb, m, n, k = size(a, ba), size(a, fa), size(b, fb), size(a, ca)
    if nb == 1 and k > SMALL_K:  # small: stored whole, from vectors (stored as below)
        whole = whole_product(lw, a, b, out.size, (m, n), k, ((fa, ca), (fb, cb)))
        if whole is not None:
            lazy = _lazy_dot(lw, a, b, out, (ca, cb), (ba, bb), fa, fb)
            lazy.whole = whole
            return [lw.materialize(lazy, lw.out_buffer(0, out))]
    if k <= SHORT_K:  # stored unless an outer product
        lazy = _lazy_dot(lw, a, b, out, (ca, cb), (ba, bb), fa, fb)
        return [lazy if k <= SMALL_K else _stored_by_rows(lw, lazy, lw.out_buffer(0, out))]
    if LATENCY_HIDING <= m * n <= _accumulators(lw):
        return [_few_outputs_dot(lw, a, b, out, (ca, cb), (ba, bb), fa, fb)]
    k_leading = m >= TILE and n >= TILE and out.dtype.kind == "f" and _in_place(
        a, list(ba) + list(ca) + list(fa)) and _in_place(b, list(bb) + list(cb) + list(fb))
    if k_leading and nb == 1 and n >= lw.lanes_for(out.dtype) and m * n <= SMALL_OUTPUT:
        return [_outer_dot_in_parts(lw, a, b, out, m, n, k)]
    if blas.usable(out.dtype, m, n, k):
        return [_gemm_dot(lw, a, b, out, (ca, cb), (ba, bb), fa, fb, (nb, m, n, k))]
    if k_leading:
        return [_outer_dot_by_rows(lw, a, b, out, nb, m, n, k, True)]
    am = _canonical(lw, a, ba, fa, ca)
    if n > 1 and _in_place(b, list(bb) + list(cb) + list(fb)):
        bm = _canonical(lw, b, bb, cb, fb)
        if out.dtype.kind == "f" and m >= TILE and n >= _outer_width(lw, out.dtype):
            return [_outer_dot_by_rows(lw, am, bm, out, nb, m, n, k, False)]
        return [_axpy_dot(lw, am, bm, out, nb, m, n, k)]
    return [_inner_dot(lw, am, _canonical(lw, b, bb, fb, cb), out, nb, m, n, k)]


def _see_through(x, side: int, contract, batch):
    """Operand `side` of a product, and the product's axes, with a transpose of an array
    in memory replaced by the array (its axes renumbered), so that the kernels read it in
    place; unless that reorders its free axes, which would reorder the output's."""
    if not (isinstance(x, Lazy) and x.transposed):
        return x, contract, batch
    src, perm = x.transposed
    free = [perm[i] for i in free_axes(x.type.ndim, contract[side], batch[side])]
    if free != sorted(free):
        return x, contract, batch
    c, bt = list(contract), list(batch)
    c[side] = tuple(perm[i] for i in contract[side])
    bt[side] = tuple(perm[i] for i in batch[side])
    return src, tuple(c), tuple(bt)


def _gemm_dot(lw, a, b, out, contract, batch, fa, fb, dims) -> Array:
    """A big product as gemm calls (blas.py), each operand read in place if it is laid
    out as a matrix (either way round), else laid out first."""
    (ca, cb), (ba, bb) = contract, batch
    forms = []
    for x, bx, fx, cx in ((a, ba, fa, ca), (b, bb, fb, cb)):  # (a tape's rows: laid out)
        form = blas.layout(lambda order, x=x: _in_place(x, order) and x.rows is None,
                           list(bx) + list(fx) + list(cx), list(bx) + list(cx) + list(fx))
        forms.append((x, form) if form else (_canonical(lw, x, bx, fx, cx), "N"))
    (am, a_form), (bm, b_form) = forms
    return Array(out, blas.product(lw, am.ptr, a_form, bm.ptr, b_form, out, *dims))


def _dot_in_float32(lw, a, b, out, contract, batch):
    """A float16 product as NumPy's: in float32, rounded to half once per output."""
    f32 = np.dtype(np.float32)
    wide = [Lazy(x.type.with_dtype(f32), lambda idx, x=x: A.convert(lw.b, lw.load(x, idx), f32),
                 1 + cost(x)) for x in (a, b)]
    pending, lw.pending = lw.pending, []  # its buffer is float16: not one for the float32 sum
    try:
        (res,) = _dot_lower(lw, wide, [out.with_dtype(f32)], contract=contract, batch=batch)
    finally:
        lw.pending = pending
    return Lazy(out, lambda idx: A.convert(lw.b, lw.load(res, idx), out.dtype), 1 + cost(res))


def _operand_index(x, axes_values: Sequence[tuple[Sequence[int], Sequence]]) -> list:
    """An index of operand `x` whose axes `axes` take `values`, for each pair (its batch,
    contracted and free axes)."""
    idx = [None] * x.type.ndim
    for axes, values in axes_values:
        for axis, v in zip(axes, values):
            idx[axis] = v
    return idx


def _lazy_dot(lw, a, b, out, contract, batch, fa, fb):
    """Each element as its own short sum of products, read where it is needed."""

    (ca, cb), (ba, bb) = contract, batch
    terms = list(product(*[range(a.type.shape[i]) for i in ca]))

    def at(idx):
        bi, rest = idx[:len(ba)], idx[len(ba):]
        total = None
        for term in terms:
            t = [lw.i64(v) for v in term]
            x = lw.load(a, _operand_index(a, [(ba, bi), (fa, rest[:len(fa)]), (ca, t)]))
            y = lw.load(b, _operand_index(b, [(bb, bi), (fb, rest[len(fa):]), (cb, t)]))
            prod = A.mul(lw.b, x, y)
            total = prod if total is None else A.add(lw.b, total, prod)
        return total if total is not None else lw.const(out.dtype, 0)

    return Lazy(out, at, len(terms) + cost(a) + cost(b))


def _stored_by_rows(lw, v: Lazy, dest: ir.Value) -> Array:
    """A short product stored a row at a time, the row's elements unrolled when the last
    axis is short, so that the operands' rows are read once a row (X W of (300, 5) and
    (5, 5): 4.7 -> 0.7 us on znver4). One loop over all the elements (Lowerer._flat)
    reads both operands through quotients and remainders of the flat index, in gathers."""
    t = v.type
    if t.ndim < 2 or t.shape[-1] >= SHORT_AXIS or t.size <= SMALL_ELEMENTS:
        return lw.materialize(v, dest)  # (a small one unrolled, in registers)

    def row(idx, _):
        for j in range(t.shape[-1]):
            lw.store_element(v, dest, idx + [lw.i64(j)])
        return []

    lw.fold(t.shape[:-1], [], row, small=0, parallel=True)
    return Array(t, dest)


# outputs, at least, for _few_outputs_dot: an FMA's latency times the FMAs a cycle, so
# that its chains of additions keep the FMA units busy (fewer: a dot product's loop,
# which vectorizes along k, is faster)
LATENCY_HIDING = 8


def _accumulators(lw) -> int:
    """Outputs of a product, per batch, that fit in registers as accumulators beside the
    operands' elements of one term: 32 registers with AVX-512, 16 below."""
    return 28 if vector_bits() >= 512 else 12


def _few_outputs_dot(lw, a, b, out, contract, batch, fa, fb):
    """A long contraction into few outputs (Xᵀ G of two (300, 5) arrays, 5 x 5): every
    output an accumulator in a register, one pass over k reading each element of A's
    and B's rows once (lazy operands too: nothing is laid out first). Reading the
    operands in place for each output instead makes a chain of k dependent additions
    per output, one output after another."""
    (ca, cb), (ba, bb) = contract, batch
    sizes = lambda x, axes: [x.type.shape[i] for i in axes]  # noqa: E731
    b_shape, k_shape = sizes(a, ba), sizes(a, ca)
    a_free, b_free = list(np.ndindex(*sizes(a, fa))), list(np.ndindex(*sizes(b, fb)))
    dt, ptr = out.dtype, lw.out_buffer(0, out)

    def read(x, axes_b, axes_c, axes_f, bi, ki, fi) -> ir.Value:
        return lw.load(x, _operand_index(x, [(axes_b, bi), (axes_c, ki),
                                             (axes_f, [lw.i64(v) for v in fi])]))

    def per_batch(bi):
        def term(ki, acc):
            xs = [read(a, ba, ca, fa, bi, ki, f) for f in a_free]
            ys = [read(b, bb, cb, fb, bi, ki, f) for f in b_free]
            return [lw.b.fadd(acc[i * len(ys) + j], lw.b.fmul(x, y, flags=FUSED), flags=FUSED)
                    if dt.kind == "f" else A.add(lw.b, acc[i * len(ys) + j], A.mul(lw.b, x, y))
                    for i, x in enumerate(xs) for j, y in enumerate(ys)]

        zero = lw.const(dt, 0)
        sums = lw.fold(k_shape, [zero] * (len(a_free) * len(b_free)), term, small=0)
        for total, fi in zip(sums, np.ndindex(*out.shape[len(b_shape):])):
            lw.store_at(ptr, dt, lw.offset(out.shape, list(bi) + [lw.i64(v) for v in fi]),
                        total)

    lw.loop_nest(b_shape, per_batch)
    return Array(out, ptr)


TILE = 4  # a product of big matrices computes TILE x TILE outputs per pass over k


# Products of dot and matmul fuse with their sums (one rounding, like BLAS): the sums
# reassociate anyway, and a fused multiply-add is one instruction where two would halve
# the rate of the register tiles.
FUSED = ("contract",)


def _inner_dot(lw, am, bm, out, nb, m, n, k):
    dt = out.dtype
    zero = lw.const(dt, 0)
    tile = (2 * TILE, 1) if n < TILE else (TILE, TILE)  # a matrix-vector product: 8 rows
    if dt.kind == "f" and m >= tile[0] and n >= tile[1] and k >= 32:
        return _tiled_dot(lw, am, bm, out, nb, m, n, k, tile)

    def dot(bi, mi, ni):
        a_row = lw.b.mul(lw.b.add(lw.b.mul(bi, lw.i64(m)), mi), lw.i64(k))
        b_row = lw.b.mul(lw.b.add(lw.b.mul(bi, lw.i64(n)), ni), lw.i64(k))

        def step(t, acc):
            x = lw.load_at(am.ptr, dt, lw.b.add(a_row, t))
            y = lw.load_at(bm.ptr, dt, lw.b.add(b_row, t))
            prod = A.mul(lw.b, x, y)
            return [lw.b.fadd(acc[0], prod, flags=("reassoc",)) if A.is_float(prod)
                    else A.add(lw.b, acc[0], prod)]  # bools sum as NumPy's do: by OR

        return lw.fn.loop(lw.i64(0), lw.i64(k), 1, [zero], step)[0]

    if out.shape == ():
        return Scalar(out, dot(lw.i64(0), lw.i64(0), lw.i64(0)))
    ptr = lw.out_buffer(0, out)
    lw.loop_nest((nb, m, n), lambda i: lw.store_at(ptr, dt, lw.offset((nb, m, n), i), dot(*i)))
    return Array(out, ptr)


def _tiled_dot(lw, am, bm, out, nb, m, n, k, tile_shape):
    """C = A Bᵀ with k contiguous in both, a tile of rows of A against a tile of rows of
    B at a time: each load feeds several products, in explicit vector registers along
    k, where one output at a time would stream both rows from memory for each product.
    Rows past the last full tile take the plain loop."""
    dt = out.dtype
    ptr = lw.out_buffer(0, out)
    tm, tn = tile_shape
    width = lw.lanes_for(dt)
    main = k // width * width
    vzero = lw.with_width(width).const(dt, 0)

    def tile(idx):
        bi, ti, tj = idx
        m0, n0 = lw.b.mul(ti, lw.i64(tm)), lw.b.mul(tj, lw.i64(tn))
        a_rows = [lw.offset((nb, m, k), [bi, lw.b.add(m0, lw.i64(r)), lw.i64(0)])
                  for r in range(tm)]
        b_rows = [lw.offset((nb, n, k), [bi, lw.b.add(n0, lw.i64(r)), lw.i64(0)])
                  for r in range(tn)]

        def step(v, acc):  # one vector of k
            t = lw.b.mul(v, lw.i64(width))
            xs = [lw.load_at(am.ptr, dt, lw.b.add(r, t), width) for r in a_rows]
            ys = [lw.load_at(bm.ptr, dt, lw.b.add(r, t), width) for r in b_rows]
            return [lw.b.fadd(acc[i * tn + j], lw.b.fmul(xs[i], ys[j], flags=FUSED),
                              flags=FUSED) for i in range(tm) for j in range(tn)]

        sums = lw.fn.loop(lw.i64(0), lw.i64(main // width), 1, [vzero] * tm * tn, step)
        totals = [lw.hsum(v) for v in sums]

        def rest(t, acc):  # the k past the last full vector
            xs = [lw.load_at(am.ptr, dt, lw.b.add(r, t)) for r in a_rows]
            ys = [lw.load_at(bm.ptr, dt, lw.b.add(r, t)) for r in b_rows]
            return [lw.b.fadd(acc[i * tn + j], lw.b.fmul(xs[i], ys[j]))
                    for i in range(tm) for j in range(tn)]

        totals = lw.fn.loop(lw.i64(main), lw.i64(k), 1, totals, rest)
        for i in range(tm):
            for j in range(tn):
                at = [bi, lw.b.add(m0, lw.i64(i)), lw.b.add(n0, lw.i64(j))]
                lw.store_at(ptr, dt, lw.offset((nb, m, n), at), totals[i * tn + j])

    lw.loop_nest((nb, m // tm, n // tn), tile)
    mt, nt = m // tm * tm, n // tn * tn
    edges = [((nb, m - mt, n), (0, mt, 0)), ((nb, mt, n - nt), (0, 0, nt))]
    for shape, shift in edges:  # the rows and columns past the tiles
        lw.loop_nest(shape, lambda i, shift=shift: _store_dot(
            lw, am, bm, ptr, dt, (nb, m, n, k), [lw.b.add(v, lw.i64(s)) for v, s in
                                                 zip(i, shift)]))
    return Array(out, ptr)


K_BLOCK = 128  # rows of A and B per pass over C


def _outer_width(lw, dtype: np.dtype, n: int | None = None) -> int:
    """Columns in a register tile of _outer_dot: TILE rows of its vectors are
    accumulators, and with the vectors of B and a broadcast they must fit in the
    registers (32 with AVX-512, 16 below): 4 vectors gave 5.3 ms where 2 gave 7.9 for
    2000 x 256 x 256 on AVX-512. Fewer when `n` columns are fewer, down to one vector."""
    lanes = lw.lanes_for(dtype)
    most = 4 if vector_bits() >= 512 else 2
    return lanes * (most if n is None else max(1, min(most, n // lanes)))


# outputs, at most, of a product with k leading in both operands that _outer_dot
# computes in parts of k, on the pool's threads, rather than gemm: its output stays in
# the first cache level, where gemm packs both long operands first (Tᵀ F of two
# (10^5, 64) arrays on znver4: 20 ms on one thread, gemm 31)
SMALL_OUTPUT = 64 * 64


def _outer_dot_in_parts(lw, a, b, out, m, n, k):
    """C = Aᵀ B with k leading in both (Tᵀ F), as _outer_dot over blocks of k (as many as
    gemm's parts would be, fixed by shape: blas.parts) into partial products, summed in
    order."""
    span, count = parallel_maps.spans(
        k, blas.parts(m, n, k)[1] if m * n * k >= blas.GEMM_WORK else 1)
    if count == 1:
        return _outer_dot(lw, a, b, out, 1, m, n, k)
    dt = out.dtype
    partial = lw.buffer(out.with_shape((count, m, n)))

    def part(p, rows):
        at = lambda x, width: Array(x.type, lw.address(x.ptr, dt, lw.b.mul(  # noqa: E731
            p, lw.i64(span * width))))
        dest = lw.address(partial, dt, lw.b.mul(p, lw.i64(m * n)))
        _outer_dot(lw, at(a, m), at(b, n), out, 1, m, n, rows, ptr=dest)

    parallel_maps.in_blocks(lw, count, lambda j: _static_parts(lw, j, count, span, k, part))
    c = lw.out_buffer(0, out)
    blas.sum_parts(lw, partial, c, dt, count, m * n)
    return Array(out, c)


def _static_parts(lw, j, count: int, span: int, total: int, part) -> None:
    """part(p, size) for part p = j % count of `total` split in `span`s, its size a
    constant (the last part's is smaller): the kernels' loop nests have static sizes."""
    p = lw.b.urem(j, lw.i64(count))
    last = total - (count - 1) * span
    with lw.b.if_else(lw.b.icmp_signed("==", p, lw.i64(count - 1))) as (final, other):
        for size, branch in ((last, final), (span, other)):
            with branch:
                part(p, size)


def _outer_dot(lw, a, b, out, nb, m, n, k, k_leading: bool = True, ptr=None,
               rows: tuple[ir.Value, int] | None = None):
    """C[b] = A[b]ᵀ B[b] with k leading in both (stacked steps, say), or C[b] = A[b]
    B[b] (`k_leading` False: A's rows run along k): a register tile of TILE rows x
    `_outer_width` columns, summing over k a column of A times a row of B — the
    outer-product form of a matrix product, which reads both operands in place,
    without transposes. k goes in blocks, so the rows of A and B a block reads stay in
    cache for all tiles. Rows past the tiles go one at a time (in vectors of columns),
    columns past them one at a time. `ptr`: where C goes, if not the output's buffer;
    `rows`: (first, count), the only rows of C computed (nb 1)."""
    dt = out.dtype
    ptr = lw.out_buffer(0, out) if ptr is None else ptr
    first, m_rows = rows if rows else (lw.i64(0), m)
    lw.fn.memset0(lw.address(ptr, dt, lw.b.mul(first, lw.i64(n))),
                  nb * m_rows * n * dt.itemsize)
    width, wide = lw.lanes_for(dt), _outer_width(lw, dt, n)
    vectors = wide // width
    b_dims, c_dims = (nb, k, n), (nb, m, n)

    def a_at(bi, t, mi):
        if k_leading:
            return lw.offset((nb, k, m), [bi, t, mi])
        return lw.offset((nb, m, k), [bi, mi, t])

    def tile(idx, k0, rows: int, chunks: int, m0, n0):
        """Add rows k0..k0+K_BLOCK of A's columns times B's rows to a tile of C;
        `chunks` vectors of columns, or one column when 0."""
        bi = idx[0]
        vec = chunks > 0
        m0 = lw.b.add(m0, first)
        cols = [lw.b.add(n0, lw.i64(c * width)) for c in range(max(chunks, 1))]
        at = [[lw.offset(c_dims, [bi, lw.b.add(m0, lw.i64(i)), c]) for c in cols]
              for i in range(rows)]

        def load(p, o):  # a vector of columns, or one
            return lw.load_at(p, dt, o, width if vec else None)

        def step(t, acc):
            ys = [load(b.ptr, lw.offset(b_dims, [bi, t, c])) for c in cols]
            out_ = []
            for i in range(rows):
                x = lw.load_at(a.ptr, dt, a_at(bi, t, lw.b.add(m0, lw.i64(i))))
                x = lw.vsplat(x, width) if vec else x
                out_ += [lw.b.fadd(acc[i * len(cols) + j], lw.b.fmul(x, y, flags=FUSED),
                                   flags=FUSED) for j, y in enumerate(ys)]
            return out_

        start = [load(ptr, at[i][j]) for i in range(rows) for j in range(len(cols))]
        stop = A.maximum(lw.b, lw.b.add(k0, lw.i64(K_BLOCK)), lw.i64(k), False)
        sums = lw.fn.loop(k0, stop, 1, start, step)
        for i in range(rows):
            for j in range(len(cols)):
                lw.store_at(ptr, dt, at[i][j], sums[i * len(cols) + j])

    mt, nt = m_rows // TILE * TILE, n // wide * wide
    scale = lambda v, s: lw.b.mul(v, lw.i64(s))  # noqa: E731

    def block(kb):  # a block of rows of A and B small enough to stay in cache
        k0 = scale(kb[0], K_BLOCK)
        lw.loop_nest((nb, m_rows // TILE, n // wide), lambda i: tile(
            i, k0, TILE, vectors, scale(i[1], TILE), scale(i[2], wide)))
        if n > nt:  # columns past the last wide tile, one at a time
            lw.loop_nest((nb, m_rows, n - nt), lambda i: tile(
                i, k0, 1, 0, i[1], lw.b.add(i[2], lw.i64(nt))))
        if m_rows > mt:  # rows past the last tile, one at a time, in the same vectors
            lw.loop_nest((nb, m_rows - mt, n // wide), lambda i: tile(
                i, k0, 1, vectors, lw.b.add(i[1], lw.i64(mt)), scale(i[2], wide)))

    lw.loop_nest((-(-k // K_BLOCK),), block)
    return Array(out, ptr)


# multiply-adds a part, about, of a product whose register tiles run in parts by rows of
# C on the pool's threads (some tens of microseconds: a region's start costs a few)
TILE_PART_WORK = 1 << 21


def _outer_dot_by_rows(lw, a, b, out, nb, m, n, k, k_leading: bool):
    """_outer_dot in parts by rows of C (each a multiple of TILE rows, as many as the
    work makes worth it, fixed by shape), the parts on the pool's threads. Each
    element's sum is the same arithmetic in any part, so the bits are one thread's."""
    span, count = parallel_maps.spans(
        m, min(parallel_maps.MAX_PARTS, m // TILE, m * n * k // TILE_PART_WORK), TILE)
    if count * nb == 1:
        return _outer_dot(lw, a, b, out, nb, m, n, k, k_leading)
    dt, c = out.dtype, lw.out_buffer(0, out)

    def block(j):
        bi = lw.b.udiv(j, lw.i64(count))
        at = lambda x, size: Array(x.type, lw.address(  # noqa: E731  (batch bi's matrix)
            x.ptr, dt, lw.b.mul(bi, lw.i64(size))))
        dest = lw.address(c, dt, lw.b.mul(bi, lw.i64(m * n)))
        _static_parts(lw, j, count, span, m, lambda p, rows: _outer_dot(
            lw, at(a, m * k), at(b, k * n), out, 1, m, n, k, k_leading, ptr=dest,
            rows=(lw.b.mul(p, lw.i64(span)), rows)))

    parallel_maps.in_blocks(lw, nb * count, block)
    return Array(out, c)


def _store_dot(lw, am, bm, ptr, dt, dims, at):
    nb, m, n, k = dims
    bi, mi, ni = at
    a_row = lw.offset((nb, m, k), [bi, mi, lw.i64(0)])
    b_row = lw.offset((nb, n, k), [bi, ni, lw.i64(0)])

    def step(t, acc):
        x = lw.load_at(am.ptr, dt, lw.b.add(a_row, t))
        y = lw.load_at(bm.ptr, dt, lw.b.add(b_row, t))
        return [lw.b.fadd(acc[0], lw.b.fmul(x, y), flags=("reassoc",))]

    (v,) = lw.fn.loop(lw.i64(0), lw.i64(k), 1, [lw.const(dt, 0)], step)
    lw.store_at(ptr, dt, lw.offset((nb, m, n), at), v)


def _axpy_dot(lw, am, bm, out, nb, m, n, k):
    dt = out.dtype
    ptr = lw.out_buffer(0, out)
    lw.fn.memset0(ptr, out.nbytes)

    def row(idx):
        bi, mi, ki = idx
        coef = lw.load_at(am.ptr, dt, lw.offset((nb, m, k), [bi, mi, ki]))
        c_row = lw.offset((nb, m, n), [bi, mi, lw.i64(0)])
        b_row = lw.offset((nb, k, n), [bi, ki, lw.i64(0)])

        def axpy(j, _):
            at = lw.b.add(c_row, j)
            prod = A.mul(lw.b, coef, lw.load_at(bm.ptr, dt, lw.b.add(b_row, j)))
            lw.store_at(ptr, dt, at, A.add(lw.b, lw.load_at(ptr, dt, at), prod))
            return []

        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], axpy)

    lw.loop_nest((nb, m, k), row)
    return Array(out, ptr)


@lowering(solve_p)
def _solve_lower(lw, args, out_types, **_):
    """LU with partial pivoting, per batch entry; a zero pivot fails as singular. From
    lapack.SOLVE_LAPACK rows on, LAPACK's (blocked) getrf and getrs instead; up to
    small_lu.SMALL rows, unrolled in registers."""
    a, b = args
    if a.type.shape[-1] >= lapack.SOLVE_LAPACK:
        return lapack.lower_solve(lw, args, out_types)
    if a.type.shape[-1] <= small_lu.SMALL and b.type.shape[-1] <= small_lu.SMALL:
        return [small_lu.solve(lw, a, b, out_types[0])]
    out = out_types[0]
    dt = out.dtype
    n, k = a.type.shape[-1], b.type.shape[-1]
    nb = math.prod(a.type.shape[:-2])
    lu = lw.materialize(a, lw.buffer(a.type)).ptr  # a copy we may overwrite
    x = lw.materialize(b, lw.out_buffer(0, out)).ptr
    i64 = lw.i64

    def at(ptr, bi, r, c, cols):
        off = lw.b.add(lw.b.mul(lw.b.add(lw.b.mul(bi, i64(n)), r), i64(cols)), c)
        return off

    def ld(ptr, bi, r, c, cols):
        return lw.load_at(ptr, dt, at(ptr, bi, r, c, cols))

    def st(ptr, bi, r, c, cols, v):
        lw.store_at(ptr, dt, at(ptr, bi, r, c, cols), v)

    def swap_rows(ptr, bi, r1, r2, cols):
        def one(c, _):
            u, v = ld(ptr, bi, r1, c, cols), ld(ptr, bi, r2, c, cols)
            st(ptr, bi, r1, c, cols, v)
            st(ptr, bi, r2, c, cols, u)
            return []
        lw.fn.loop(i64(0), i64(cols), 1, [], one)

    def column(bi, j, _):
        def find(r, vals):
            big = A.absolute(lw.b, ld(lu, bi, r, j, n))
            better = lw.b.fcmp_ordered(">", big, vals[0])
            return [lw.b.select(better, big, vals[0]), lw.b.select(better, r, vals[1])]
        best, p = lw.fn.loop(j, i64(n), 1, [lw.const(dt, -1.0), j], find)
        lw.fail_if_any(lw.b.fcmp_ordered("==", best, lw.const(dt, 0)), "singular")
        swap_rows(lu, bi, j, p, n)
        swap_rows(x, bi, j, p, k)
        pivot = ld(lu, bi, j, j, n)

        def eliminate(r, _):
            f = lw.b.fdiv(ld(lu, bi, r, j, n), pivot)
            st(lu, bi, r, j, n, f)
            lw.fn.loop(lw.b.add(j, i64(1)), i64(n), 1, [], lambda c, _: st(
                lu, bi, r, c, n, lw.b.fsub(ld(lu, bi, r, c, n),
                                           lw.b.fmul(f, ld(lu, bi, j, c, n)))) or [])
            lw.fn.loop(i64(0), i64(k), 1, [], lambda c, _: st(
                x, bi, r, c, k, lw.b.fsub(ld(x, bi, r, c, k),
                                          lw.b.fmul(f, ld(x, bi, j, c, k)))) or [])
            return []
        lw.fn.loop(lw.b.add(j, i64(1)), i64(n), 1, [], eliminate)
        return []

    def back(bi, r, _):  # r runs n-1 .. 0
        def one(c, _):
            def sub(j, acc):
                return [lw.b.fsub(acc[0], lw.b.fmul(ld(lu, bi, r, j, n), ld(x, bi, j, c, k)))]
            (v,) = lw.fn.loop(lw.b.add(r, i64(1)), i64(n), 1, [ld(x, bi, r, c, k)], sub)
            st(x, bi, r, c, k, lw.b.fdiv(v, ld(lu, bi, r, r, n)))
            return []
        lw.fn.loop(i64(0), i64(k), 1, [], one)
        return []

    def per_batch(bi, _):
        lw.fn.loop(i64(0), i64(n), 1, [], lambda j, v: column(bi, j, v))
        lw.fn.loop(i64(n - 1), i64(-1), -1, [], lambda r, v: back(bi, r, v))
        return []

    lw.fn.loop(i64(0), i64(nb), 1, [], per_batch)
    return [Array(out, x)]
