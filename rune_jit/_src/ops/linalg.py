"""Linear algebra: dot_general (every product of the NumPy layer) and solve (LU).

dot_general(a, b; contract=(ca, cb), batch=(ba, bb)) pairs the axes ca of a with
cb of b and sums over them, keeps ba/bb as shared batch axes, and lays the
result out as batch axes, then a's free axes, then b's free axes (each in
increasing order), as JAX's dot_general does.
"""

from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np

from ..ad_util import Zero, is_undefined
from .tangents import add_tangents
from ..ir import Type
from ..primitive import Primitive
from ..trace import bind1, type_of_value
from .elementwise import neg
from .shape import materialize, transpose

dot_general_p = Primitive("dot_general", traits=frozenset({"costly"}))
solve_p = Primitive("solve", traits=frozenset({"costly"}))


def free_axes(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


@dot_general_p.def_rule("shape")
def _dot_shape(a: Type, b: Type, *, contract, batch) -> list[Type]:
    (ca, cb), (ba, bb) = contract, batch
    if a.dtype != b.dtype:  # bools multiply as NumPy's matmul does: an OR of ANDs
        raise TypeError(f"dot_general of {a} and {b}: dtypes must match")
    pairs = list(zip(ca, cb)) + list(zip(ba, bb))
    if len(ca) != len(cb) or len(ba) != len(bb) or any(
        a.shape[i] != b.shape[j] for i, j in pairs
    ):
        raise ValueError(f"dot_general: axes of {a} and {b} do not pair: "
                         f"contract {contract}, batch {batch}")
    shape = ([a.shape[i] for i in ba] + [a.shape[i] for i in free_axes(a.ndim, ca, ba)]
             + [b.shape[i] for i in free_axes(b.ndim, cb, bb)])
    return [Type(a.dtype, tuple(shape))]


@dot_general_p.def_rule("impl")
def _dot_impl(a, b, *, contract, batch):
    (ca, cb), (ba, bb) = contract, batch
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in list(zip(ca, cb)) + list(zip(ba, bb)):
        sb[j] = sa[i]
    out = ([sa[i] for i in ba] + [sa[i] for i in free_axes(a.ndim, ca, ba)]
           + [sb[i] for i in free_axes(b.ndim, cb, bb)])
    spec = f"{''.join(sa)},{''.join(sb)}->{''.join(out)}"
    if a.dtype == np.float16:  # as NumPy's matmul and dot: sums in float32 (einsum's don't)
        return [np.asarray(np.einsum(spec, a.astype(np.float32), b.astype(np.float32)),
                           a.dtype)]
    return [np.asarray(np.einsum(spec, a, b), a.dtype)]


def dot_general(a: Any, b: Any, contract, batch=((), ())) -> Any:
    contract = (tuple(contract[0]), tuple(contract[1]))
    batch = (tuple(batch[0]), tuple(batch[1]))
    return bind1(dot_general_p, a, b, contract=contract, batch=batch)


@dot_general_p.def_rule("jvp")
def _dot_jvp(primals, tangents, *, contract, batch):
    a, b = primals
    ta, tb = tangents
    ans = dot_general(a, b, contract, batch)
    out = Zero(type_of_value(ans))
    if not isinstance(ta, Zero):
        out = add_tangents(out, dot_general(ta, b, contract, batch))
    if not isinstance(tb, Zero):
        out = add_tangents(out, dot_general(a, tb, contract, batch))
    return [ans], [out]


def _transpose_operand(ct, other: Any, this: Type, contract, batch, this_is_lhs: bool):
    """The cotangent of one operand: contract ct with `other` over other's free axes."""
    (ca, cb), (ba, bb) = contract, batch
    if not this_is_lhs:
        ca, cb, ba, bb = cb, ca, bb, ba
    other_t = type_of_value(other)
    nb = len(ba)
    this_free = free_axes(this.ndim, ca, ba)
    other_free = free_axes(other_t.ndim, cb, bb)
    # ct axes: batch, then lhs free, then rhs free; pick the part that belongs to `other`
    n_lhs_free = len(this_free) if this_is_lhs else len(other_free)
    other_pos = (list(range(nb + n_lhs_free, nb + n_lhs_free + len(other_free))) if this_is_lhs
                 else list(range(nb, nb + len(other_free))))
    result = dot_general(ct, other, (other_pos, other_free), (list(range(nb)), bb))
    # result axes: batch, this's free axes, then other's contracted axes in increasing order
    paired = dict(zip(cb, ca))
    layout = list(ba) + this_free + [paired[j] for j in sorted(cb)]
    return transpose(result, tuple(np.argsort(layout)))


@dot_general_p.def_rule("transpose")
def _dot_transpose(cts, a, b, *, contract, batch):
    (ct,) = cts
    ct_a = _transpose_operand(ct, b, a.type, contract, batch, True) if is_undefined(a) else None
    ct_b = _transpose_operand(ct, a, b.type, contract, batch, False) if is_undefined(b) else None
    return [ct_a, ct_b]


@dot_general_p.def_rule("batch")
def _dot_batch(size, args, dims, *, contract, batch):
    a, b = args
    (ca, cb), (ba, bb) = contract, batch
    shift = lambda axes, d: tuple(i + (d is not None) for i in axes)  # noqa: E731
    ca2, ba2 = shift(ca, dims[0]), shift(ba, dims[0])
    cb2, bb2 = shift(cb, dims[1]), shift(bb, dims[1])
    if dims[0] is not None and dims[1] is not None:
        return [dot_general(a, b, (ca2, cb2), ((0,) + ba2, (0,) + bb2))], [0]
    out = dot_general(a, b, (ca2, cb2), (ba2, bb2))
    nb = len(ba)
    # the lane axis is a free axis: the first of a's, or the first of b's
    at = nb if dims[0] is not None else nb + len(free_axes(type_of_value(a).ndim, ca2, ba2))
    perm = [at] + [i for i in range(type_of_value(out).ndim) if i != at]
    return [transpose(out, perm)], [0]


# ------------------------------------------------------------- solve


@solve_p.def_rule("shape")
def _solve_shape(a: Type, b: Type) -> list[Type]:
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise TypeError(f"solve: cannot solve {a} x = {b}; a and b must have one float dtype, "
                        "float32 or float64")
    if (a.ndim < 2 or a.shape[-1] != a.shape[-2] or b.ndim != a.ndim
            or b.shape[:-1] != a.shape[:-1]):
        raise ValueError(f"solve: cannot solve {a} x = {b}; a must be square [..., n, n] "
                         "and b [..., n, k]")
    return [b]


@solve_p.def_rule("impl")
def _solve_impl(a, b):
    try:
        return [np.linalg.solve(a, b)]
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError("rune_jit solve: the matrix is singular") from None


def solve(a: Any, b: Any) -> Any:
    return bind1(solve_p, a, b)


def matrix_transpose(x: Any) -> Any:
    n = type_of_value(x).ndim
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def batched_matmul(a: Any, b: Any) -> Any:
    n = type_of_value(a).ndim
    lead = tuple(range(n - 2))
    return dot_general(a, b, ((n - 1,), (n - 2,)), (lead, lead))


@solve_p.def_rule("jvp")
def _solve_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    x = solve(a, b)
    if isinstance(ta, Zero) and isinstance(tb, Zero):
        return [x], [Zero(type_of_value(x))]
    rhs = tb if not isinstance(tb, Zero) else None
    if not isinstance(ta, Zero):
        da_x = neg(batched_matmul(ta, x))
        rhs = da_x if rhs is None else add_tangents(rhs, da_x)
    return [x], [solve(a, rhs)]


@solve_p.def_rule("transpose")
def _solve_transpose(cts, a, b):
    if is_undefined(a):
        raise NotImplementedError("solve is linear in b only")
    return [None, solve(matrix_transpose(a), cts[0])]


@solve_p.def_rule("batch")
def _solve_batch(size, args, dims):
    return [solve(*[materialize(a, d, size) for a, d in zip(args, dims)])], [0]


# ------------------------------------------------------------- diag_solve
#
# x = b / d for a diagonal matrix d (root's "diagonal" solver): O(n), and, like
# solve, a zero on the diagonal fails as singular rather than giving inf or NaN.

diag_solve_p = Primitive("diag_solve", traits=frozenset({"elementwise"}))


@diag_solve_p.def_rule("shape")
def _diag_shape(d: Type, b: Type) -> list[Type]:
    if d.dtype != b.dtype or d.dtype.kind != "f":
        raise TypeError(f"diag_solve: the diagonal {d} and b {b} must have one float dtype")
    if d.shape != b.shape:
        raise ValueError(f"diag_solve: the diagonal {d} and b {b} must have one shape")
    return [b]


@diag_solve_p.def_rule("impl")
def _diag_impl(d, b):
    if np.any(d == 0):
        raise np.linalg.LinAlgError("rune_jit solve: the matrix is singular")
    return [b / d]


def diag_solve(d: Any, b: Any) -> Any:
    return bind1(diag_solve_p, d, b)


@diag_solve_p.def_rule("jvp")
def _diag_jvp(primals, tangents):
    from .elementwise import mul

    d, b = primals
    td, tb = tangents
    x = diag_solve(d, b)
    out = Zero(type_of_value(x))
    if not isinstance(tb, Zero):
        out = add_tangents(out, diag_solve(d, tb))
    if not isinstance(td, Zero):
        out = add_tangents(out, neg(diag_solve(d, mul(td, x))))
    return [x], [out]


@diag_solve_p.def_rule("transpose")
def _diag_transpose(cts, d, b):
    if is_undefined(d):
        raise NotImplementedError("diag_solve is linear in b only")
    return [None, diag_solve(d, cts[0])]


@diag_solve_p.def_rule("batch")
def _diag_batch(size, args, dims):
    return [diag_solve(*[materialize(a, d, size) for a, d in zip(args, dims)])], [0]
