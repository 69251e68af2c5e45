"""Products composed of dot_general, reductions and elementwise operations: einsum,
tensordot, inner, vdot, kron, cross, polyval.

einsum reads NumPy's whole subscript grammar (implicit and explicit outputs, `...`,
repeated labels for diagonals, the sublist form) and contracts pairwise: each step
takes the pair of operands whose result is smallest, after summing out every label
that only one operand has and the result does not need, and is one dot_general.
"""

from __future__ import annotations

import math as _math
import string
from collections import Counter
from typing import Any, Sequence

import numpy as np

from ..dtypes import check_supported
from ..ops import complex_parts as cp
from ..ops import linalg as la
from ..ops import reduce as red
from . import math as m
from ._core import accept, as_value, normalize_axis, promote, shape_of, to_dtype
from .arrays import diagonal
from .shapes import expand_dims, moveaxis, reshape, stack, transpose

ELLIPSIS_LABELS = [chr(0x2460 + i) for i in range(32)]  # stand for the axes of `...`


def _operands(xs: Sequence[Any], where: str) -> list:
    """Operands as arrays (Python numbers become strong 0-d arrays, as np.asarray makes
    them), promoted to their common dtype."""
    return [as_value(x) for x in promote(*[as_value(accept(x, where)) for x in xs],
                                         where=where)]


# ------------------------------------------------------------- einsum


def einsum(*operands: Any, out: Any = None, dtype: Any = None, order: str = "K",
           casting: str = "safe", optimize: Any = False) -> Any:
    """NumPy's einsum: `einsum("ij,jk->ik", a, b)`, implicit outputs ("ij,jk": the labels
    seen once, sorted), `...`, repeated labels (`"ii->i"`: a diagonal, `"ii"`: a
    trace) and the sublist form `einsum(a, [0, 1], b, [1, 2])`. `optimize` is accepted
    and ignored: the contraction order is always chosen (smallest intermediate first).

    >>> print(rnp.einsum("ij,jk->ik", np.eye(2, dtype=int), np.array([[1, 2], [3, 4]])))
    [[1 2]
     [3 4]]
    >>> print(rnp.einsum("ii", np.arange(4).reshape(2, 2)))
    3
    """
    where = "rune_jit.numpy.einsum"
    if out is not None:
        raise TypeError(f"{where}: out= is not supported")
    if not operands:
        raise ValueError(f"{where}: no subscripts given")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = _from_sublists(list(operands), where)
    xs = _operands(arrays, where)
    if dtype is not None:
        xs = [to_dtype(x, check_supported(np.dtype(dtype), where)) for x in xs]
    terms, output = _parse(subscripts, [len(shape_of(x)) for x in xs], where)
    sizes = _label_sizes(xs, terms, where)
    ops = [_prepared(x, t, sizes) for x, t in zip(xs, terms)]
    return _contract(ops, output, sizes)


def _from_sublists(args: list, where: str) -> tuple[str, list]:
    """The sublist form (op, [labels], op, [labels], ..., [output]) as a subscript string."""
    def letters(sub):
        return "".join("..." if s is Ellipsis else string.ascii_letters[int(s)] for s in sub)

    arrays, terms = args[0::2], args[1::2]
    output = None
    if len(args) % 2:
        arrays, output = arrays[:-1], args[-1]
    spec = ",".join(letters(t) for t in terms)
    return (spec if output is None else spec + "->" + letters(output)), arrays


def _parse(subscripts: str, ndims: list[int], where: str) -> tuple[list[str], str]:
    """Each operand's labels (`...` spelled out as placeholder labels) and the output's."""
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ValueError(f"{where}: subscripts string contains more than one '->'")
    lhs, rhs = s.split("->") if "->" in s else (s, None)
    raw = lhs.split(",")
    if len(raw) != len(ndims):
        raise ValueError(f"{where}: {len(raw)} operands in the subscripts, {len(ndims)} given")
    ell = max([nd - (len(t) - 3) for t, nd in zip(raw, ndims) if "..." in t], default=0)
    if ell > len(ELLIPSIS_LABELS):
        raise ValueError(f"{where}: too many dimensions under '...'")
    dots = ELLIPSIS_LABELS[:ell]
    terms = []
    for t, nd in zip(raw, ndims):
        if "..." in t:
            t = t.replace("...", "".join(dots[ell - (nd - (len(t) - 3)):]), 1)
        if any(not (c in string.ascii_letters or c in dots) for c in t):
            raise ValueError(f"{where}: invalid subscript in {subscripts!r} (letters, ',', "
                             "'->' and '...' only)")
        if len(t) != nd:
            raise ValueError(f"{where}: operand has {nd} dimensions, but its subscripts "
                             f"name {len(t)}")
        terms.append(t)
    if rhs is None:
        counts = Counter("".join(terms))
        return terms, "".join(dots) + "".join(sorted(c for c in counts if counts[c] == 1
                                                     and c not in dots))
    if "..." not in rhs and any(c in dots for t in terms for c in t):
        raise ValueError(f"{where}: output has more dimensions than subscripts given, but no "
                         "'...' to broadcast the extra dimensions")
    output = rhs.replace("...", "".join(dots))
    seen = set("".join(terms))
    for c in output:
        if c not in seen or output.count(c) > 1:
            raise ValueError(f"{where}: output subscript {c!r} appears more than once or not "
                             "in the inputs")
    return terms, output


def _label_sizes(xs: list, terms: list[str], where: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for x, t in zip(xs, terms):
        for c, n in zip(t, shape_of(x)):
            if sizes.get(c, 1) != 1 and n not in (1, sizes[c]):
                raise ValueError(f"{where}: size of label {c!r} ({n}) does not match its "
                                 f"size elsewhere ({sizes[c]})")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    return sizes


def _prepared(x: Any, labels: str, sizes: dict) -> tuple[Any, str]:
    """An operand with its broadcast axes (length one, the label longer elsewhere)
    dropped and its repeated labels made diagonals."""
    shape = shape_of(x)
    drop = [i for i, c in enumerate(labels) if shape[i] == 1 and sizes[c] != 1]
    if drop:
        x = reshape(x, tuple(n for i, n in enumerate(shape) if i not in drop))
        labels = "".join(c for i, c in enumerate(labels) if i not in drop)
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        x = diagonal(x, 0, i, j)
        labels = "".join(d for k, d in enumerate(labels) if k not in (i, j)) + c
    return x, labels


def _sum_out(x: Any, labels: str, keep: set) -> tuple[Any, str]:
    axes = [i for i, c in enumerate(labels) if c not in keep]
    if not axes:
        return x, labels
    fold = red.reduce_max if x.dtype.kind == "b" else red.reduce_sum  # bools: an OR
    return fold(x, axes), "".join(c for c in labels if c in keep)


def _needed(ops: list, output: str, skip: Sequence[int]) -> set:
    """The labels that the output or the operands other than `skip` have."""
    return set(output).union(*[set(t) for k, (_, t) in enumerate(ops) if k not in skip])


def _pair_cost(ops: list, output: str, sizes: dict, pair: tuple[int, int]) -> int:
    """The size of what contracting the pair gives."""
    keep = _needed(ops, output, pair) & (set(ops[pair[0]][1]) | set(ops[pair[1]][1]))
    return _math.prod(sizes[c] for c in keep)


def _contract(ops: list, output: str, sizes: dict) -> Any:
    ops = [_sum_out(x, t, _needed(ops, output, [k])) for k, (x, t) in enumerate(ops)]
    while len(ops) > 1:
        pairs = [(i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))]
        i, j = min(pairs, key=lambda p: _pair_cost(ops, output, sizes, p))
        (a, la_), (b, lb) = ops[i], ops[j]
        keep = _needed(ops, output, (i, j))
        shared = [c for c in la_ if c in lb]
        batch = [c for c in shared if c in keep]
        summed = [c for c in shared if c not in keep]
        y = la.dot_general(a, b, ([la_.index(c) for c in summed], [lb.index(c) for c in summed]),
                           ([la_.index(c) for c in batch], [lb.index(c) for c in batch]))
        labels = "".join(batch) + "".join(c for c in la_ if c not in shared) + "".join(
            c for c in lb if c not in shared)
        ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [(y, labels)]
    x, labels = _sum_out(*ops[0], set(output))
    return transpose(x, [labels.index(c) for c in output]) if labels != output else x


# ------------------------------------------------------------- the named products


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """NumPy's tensordot: the sum of products over the last `axes` axes of a and the
    first of b, or over the axes named by a pair of sequences.

    >>> print(rnp.tensordot(np.ones((2, 3)), np.ones((3, 4)), 1).shape)
    (2, 4)
    """
    where = "rune_jit.numpy.tensordot"
    a, b = _operands((a, b), where)
    sa, sb = shape_of(a), shape_of(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        if n < 0 or n > min(len(sa), len(sb)):
            raise ValueError(f"{where}: axes {n} out of range for shapes {sa} and {sb}")
        ca, cb = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        ca, cb = ([int(v)] if np.ndim(v) == 0 else [int(i) for i in v] for v in axes)
        ca = [normalize_axis(i, len(sa), where) for i in ca]
        cb = [normalize_axis(i, len(sb), where) for i in cb]
    if len(ca) != len(cb) or any(sa[i] != sb[j] for i, j in zip(ca, cb)):
        raise ValueError(f"{where}: shape-mismatch for sum ({sa} and {sb} along {ca}, {cb})")
    return la.dot_general(a, b, (ca, cb))


def inner(a: Any, b: Any) -> Any:
    """NumPy's inner: the sum of products over the last axes.

    >>> print(rnp.inner(np.array([1, 2]), np.array([3, 4])))
    11
    """
    where = "rune_jit.numpy.inner"
    a, b = _operands((a, b), where)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return m.multiply(a, b)
    if sa[-1] != sb[-1]:
        raise ValueError(f"{where}: shapes {sa} and {sb} not aligned in their last axis")
    return la.dot_general(a, b, ((len(sa) - 1,), (len(sb) - 1,)))


def vdot(a: Any, b: Any) -> Any:
    """NumPy's vdot: the dot product of the flattened arrays, the first conjugated.

    >>> print(rnp.vdot(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [0, 1]])))
    5
    """
    where = "rune_jit.numpy.vdot"
    a, b = (reshape(x, (-1,)) for x in _operands((a, b), where))
    if shape_of(a) != shape_of(b):
        raise ValueError(f"{where}: vectors have different lengths")
    if a.dtype.kind == "c":
        a = cp.conj(a)
    return la.dot_general(a, b, ((0,), (0,)))


def kron(a: Any, b: Any) -> Any:
    """NumPy's kron: the Kronecker product (blocks of b scaled by each element of a).

    >>> print(rnp.kron(np.array([1, 10]), np.array([1, 2])))
    [ 1  2 10 20]
    """
    a, b = (as_value(accept(x, "rune_jit.numpy.kron")) for x in (a, b))
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) < len(sb):
        a, sa = reshape(a, (1,) * (len(sb) - len(sa)) + sa), (1,) * (len(sb) - len(sa)) + sa
    if not sa or not sb:
        return m.multiply(a, b)
    sb = (1,) * (len(sa) - len(sb)) + sb
    b = reshape(b, sb)
    nd = len(sa)
    a2 = expand_dims(a, tuple(range(1, 2 * nd, 2)))
    b2 = expand_dims(b, tuple(range(0, 2 * nd, 2)))
    return reshape(m.multiply(a2, b2), tuple(p * q for p, q in zip(sa, sb)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """NumPy's cross: the cross product of vectors of length 3 (or 2, taken as having a
    zero third component; two 2-vectors give the scalar z component).

    >>> print(rnp.cross(np.array([1, 0, 0]), np.array([0, 1, 0])))
    [0 0 1]
    """
    where = "rune_jit.numpy.cross"
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _operands((a, b), where)
    if not shape_of(a) or not shape_of(b):
        raise ValueError(f"{where}: inputs must be at least 1-d")
    a = moveaxis(a, normalize_axis(axisa, len(shape_of(a)), where), -1)
    b = moveaxis(b, normalize_axis(axisb, len(shape_of(b)), where), -1)
    da, db = shape_of(a)[-1], shape_of(b)[-1]
    if da not in (2, 3) or db not in (2, 3):
        raise ValueError(f"{where}: incompatible dimensions for cross product (dimension "
                         "must be 2 or 3)")
    ac = [a[..., i] for i in range(da)]
    bc = [b[..., i] for i in range(db)]
    z = m.subtract(m.multiply(ac[0], bc[1]), m.multiply(ac[1], bc[0]))
    if da == db == 2:
        return z
    a2 = ac[2] if da == 3 else None
    b2 = bc[2] if db == 3 else None

    def times(p, q):
        return None if p is None or q is None else m.multiply(p, q)

    def minus(p, q):
        return p if q is None else m.negative(q) if p is None else m.subtract(p, q)

    x = minus(times(ac[1], b2), times(a2, bc[1]))
    y = minus(times(a2, bc[0]), times(ac[0], b2))
    parts = [x, y, z]
    shape = np.broadcast_shapes(*[shape_of(p) for p in parts])
    from .shapes import broadcast_to

    c = stack([broadcast_to(p, shape) for p in parts], -1)
    return moveaxis(c, -1, normalize_axis(axisc, len(shape) + 1, where))


def polyval(p: Any, x: Any) -> Any:
    """NumPy's polyval: p[0] * x**(n-1) + ... + p[n-1], by Horner's rule.

    >>> print(rnp.polyval(np.array([1, 0, -1]), np.array([2, 3])))
    [3 8]
    """
    where = "rune_jit.numpy.polyval"
    p, x = (as_value(accept(v, where)) for v in (p, x))
    from .creation import zeros_like

    y = zeros_like(x)
    for i in range(shape_of(p)[0] if shape_of(p) else 0):
        y = m.add(m.multiply(y, x), p[i])
    return y

