"""Complex arithmetic on pairs of reals: the rules complex_pairs.py rewrites each
primitive of complex values with, in terms of real primitives.

- structural primitives (broadcasts, slices, gathers, sums, select, ...) act on each part;
- mul is (ac - bd, ad + bc); div is Smith's algorithm, as NumPy's loop computes it;
  abs is hypot (no overflow); exp, log, sqrt, sin, cos, sinh, cosh, tanh and tan go
  through the real functions of the parts (tanh and tan by Kahan's formula, as NumPy's;
  expm1 and log1p by NumPy's formulas); the inverse functions (arcsin, arccos, arctan and
  the hyperbolic ones) are NumPy's algorithms, in complex_inverse.py;
- sort is NumPy's lexicographic order, as two stable sorts; prod halves pairwise;
- fft and the decompositions (LAPACK) read and write NumPy's memory of complex numbers
  (ops/fft.py: fft_memory, ops/decomp.py: decomp_memory), whose parts are slices
  (`Interleaved`), as the program's complex arguments and results are.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ....dtypes import complex_dtype, real_dtype
from ....ir import Type
from ....ops import complex_parts as cp
from ....ops import decomp
from ....ops import elementwise as ew
from ....ops import fft as fft_ops
from ....ops import gather, index, reduce, sort
from ....ops import shape as sh
from ....ops.control import stop_gradient_p
from ....ops.linalg import dot_general_p
from ....ops.remat import name_p
from ....ops.scan import scan_flat
from ....primitive import Primitive
from ....trace import bind, bind1, type_of_value
from . import complex_inverse


def is_complex(t: Type) -> bool:
    return t.dtype.kind == "c"


class Pair(NamedTuple):
    """A complex value in compiled code: its real and imaginary parts."""

    re: Any
    im: Any


def per_part(prim: Primitive, args: list, params: dict, out_types: list[Type]) -> list:
    """`prim` applied to the real parts, then to the imaginary parts; operands that are
    not complex (indices, predicates) serve both."""
    re, im = (bind(prim, *[a[k] if isinstance(a, Pair) else a for a in args], **params)
              for k in (0, 1))
    return [Pair(r, i) if is_complex(t) else r for r, i, t in zip(re, im, out_types)]


# the primitives of complex values only: complex_pairs.py rewrites every use of them away,
# so no lowering rule has them
ONLY_COMPLEX = frozenset({cp.real_p, cp.imag_p, cp.conj_p, cp.complex_p, fft_ops.fft_p})
# the primitives that act on each part alone (linear over the reals, or moving elements)
PER_PART = {sh.broadcast_in_dim_p, sh.reshape_p, sh.transpose_p, sh.rev_p, sh.slice_p,
            sh.pad_p, sh.concatenate_p, index.dynamic_slice_p, index.dynamic_update_slice_p,
            gather.gather_p, reduce.P["reduce_sum"], stop_gradient_p, name_p, ew.P["add"],
            ew.P["sub"], ew.P["neg"], ew.P["select"]}


# ------------------------------------------------------------- arithmetic


def _pair(z: Any) -> Pair:
    """A Pair of a complex Pair or a real value (zero imaginary part, of its shape: the
    parts go through structural primitives one by one)."""
    if isinstance(z, Pair):
        return z
    return Pair(z, ew.broadcast_to_shape(ew.const(0.0, z), type_of_value(z).shape))


def mul(a: Any, b: Any) -> Pair:
    (ar, ai), (br, bi) = _pair(a), _pair(b)
    return Pair(ew.sub(ew.mul(ar, br), ew.mul(ai, bi)), ew.add(ew.mul(ar, bi), ew.mul(ai, br)))


def div(a: Any, b: Any) -> Pair:
    """Smith's algorithm, in NumPy's order of operations (its complex division loop), so
    that its results on zeros, infinities and huge or tiny parts are NumPy's."""
    (ar, ai), (br, bi) = _pair(a), _pair(b)
    one = ew.const(1.0, br)
    real_big = ew.ge(ew.abs(br), ew.abs(bi))
    # |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi * rat)
    zero = ew.logical_and(ew.eq(br, 0.0), ew.eq(bi, 0.0))
    safe_br = ew.select(zero, one, br)
    rat1 = ew.div(bi, safe_br)
    scl1 = ew.div(one, ew.add(safe_br, ew.mul(bi, rat1)))
    re1 = ew.mul(ew.add(ar, ew.mul(ai, rat1)), scl1)
    im1 = ew.mul(ew.sub(ai, ew.mul(ar, rat1)), scl1)
    # a zero divisor: a complex inf or nan, part by part (ar / |br|)
    absr = ew.abs(br)
    re1 = ew.select(zero, ew.div(ar, absr), re1)
    im1 = ew.select(zero, ew.div(ai, absr), im1)
    # |br| < |bi|: rat = br / bi, scl = 1 / (bi + br * rat)
    safe_bi = ew.select(real_big, one, bi)
    rat2 = ew.div(br, safe_bi)
    scl2 = ew.div(one, ew.add(safe_bi, ew.mul(br, rat2)))
    re2 = ew.mul(ew.add(ew.mul(ar, rat2), ai), scl2)
    im2 = ew.mul(ew.sub(ew.mul(ai, rat2), ar), scl2)
    return Pair(ew.select(real_big, re1, re2), ew.select(real_big, im1, im2))


# Past this, exp overflows though exp(x) * c may not (|c| < 1): such products are taken
# as (c e^(x/2)) e^(x/2), as NumPy's scaled cexp and csinh take them.
EXP_LIMIT = 709.0


def _times_exp(c: Any, x: Any) -> Any:
    """c * e^x, finite wherever the product is (c = 0 stays 0, as C99's)."""
    half = ew.exp(ew.mul(x, 0.5))
    scaled = ew.select(ew.eq(c, 0.0), c, ew.mul(ew.mul(c, half), half))
    return ew.select(ew.gt(x, EXP_LIMIT), scaled, ew.mul(c, ew.exp(x)))


def _cosh_times(t: Any, c: Any) -> Any:
    """cosh(t) * c, finite wherever it is: e^|t| c / 2 for large |t|."""
    big = ew.gt(ew.abs(t), EXP_LIMIT)
    return ew.select(big, _times_exp(ew.mul(c, 0.5), ew.abs(t)), ew.mul(ew.cosh(t), c))


def _sinh_times(t: Any, c: Any) -> Any:
    """sinh(t) * c, finite wherever it is: ±e^|t| c / 2 for large |t|."""
    big = ew.gt(ew.abs(t), EXP_LIMIT)
    half = ew.mul(ew.copysign(ew.const(0.5, t), t), c)
    return ew.select(big, _times_exp(half, ew.abs(t)), ew.mul(ew.sinh(t), c))


def exp(z: Pair) -> Pair:
    x, y = z
    # a real argument stays real (exp(inf) * sin(0) would be nan)
    return Pair(ew.select(ew.eq(y, 0.0), ew.exp(x), _times_exp(ew.cos(y), x)),
                ew.select(ew.eq(y, 0.0), y, _times_exp(ew.sin(y), x)))


def log(z: Pair) -> Pair:
    x, y = z
    return Pair(ew.log(ew.hypot(x, y)), ew.arctan2(y, x))


def expm1(z: Pair) -> Pair:
    """NumPy's: (expm1(x) cos y - 2 sin²(y/2), e^x sin y), exact near 0."""
    x, y = z
    half = ew.sin(ew.mul(y, 0.5))
    return Pair(ew.sub(ew.mul(ew.expm1(x), ew.cos(y)), ew.mul(ew.mul(half, half), 2.0)),
                ew.mul(ew.exp(x), ew.sin(y)))


def log1p(z: Pair) -> Pair:
    """NumPy's: log of 1 + z, as (log |1 + z|, arg(1 + z))."""
    return log(Pair(ew.add(z.re, 1.0), z.im))


def _scaled(f: Callable, factor: float, before: bool) -> Callable:
    """exp2(z) = exp(z ln 2); log2 and log10 are log(z) / ln 2, / ln 10 (NumPy's)."""
    def rule(z: Pair) -> Pair:
        if before:
            return f(Pair(ew.mul(z.re, factor), ew.mul(z.im, factor)))
        w = f(z)
        return Pair(ew.div(w.re, factor), ew.div(w.im, factor))

    return rule


def sqrt(z: Pair) -> Pair:
    """The principal root: t = sqrt((|x| + |z|) / 2), then (t, y / 2t) for x >= 0 and
    (|y| / 2t, ±t) for x < 0 (no cancellation either way); sqrt(±0 + yi) at y = 0 is 0,
    and sqrt(x ± inf i) is inf ± inf i (C99's, NumPy's)."""
    x, y = z
    t = ew.sqrt(ew.mul(ew.add(ew.abs(x), ew.hypot(x, y)), 0.5))
    zero = ew.eq(t, 0.0)
    two_t = ew.select(zero, ew.const(1.0, t), ew.mul(t, 2.0))
    pos = ew.ge(x, 0.0)
    re = ew.select(pos, t, ew.div(ew.abs(y), two_t))
    im = ew.select(pos, ew.div(y, two_t), ew.copysign(t, y))
    re, im = ew.select(zero, t, re), ew.select(zero, y, im)
    infinite = ew.eq(ew.abs(y), np.inf)
    return Pair(ew.select(infinite, ew.abs(y), re), ew.select(infinite, y, im))


def sin(z: Pair) -> Pair:
    x, y = z
    return Pair(_cosh_times(y, ew.sin(x)), _sinh_times(y, ew.cos(x)))


def cos(z: Pair) -> Pair:
    x, y = z
    return Pair(_cosh_times(y, ew.cos(x)), ew.neg(_sinh_times(y, ew.sin(x))))


def sinh(z: Pair) -> Pair:
    x, y = z
    return Pair(_sinh_times(x, ew.cos(y)), _cosh_times(x, ew.sin(y)))


def cosh(z: Pair) -> Pair:
    x, y = z
    return Pair(_cosh_times(x, ew.cos(y)), _sinh_times(x, ew.sin(y)))


def tanh(z: Pair) -> Pair:
    """Kahan's formula (NumPy's ctanh): t = tan y, s = sinh x, rho = sqrt(1 + s²),
    tanh z = (rho s (1 + t²), t) / (1 + s² (1 + t²)); for |x| > 22, where s² overflows
    first, (±1, 4 sin y cos y e^(-2|x|))."""
    x, y = z
    t, s = ew.tan(y), ew.sinh(x)
    beta = ew.add(ew.mul(t, t), 1.0)
    rho = ew.sqrt(ew.add(ew.mul(s, s), 1.0))
    denom = ew.add(ew.mul(ew.mul(beta, s), s), 1.0)
    big = ew.gt(ew.abs(x), 22.0)
    far = ew.mul(ew.mul(ew.mul(ew.sin(y), ew.cos(y)), 4.0), ew.exp(ew.mul(ew.abs(x), -2.0)))
    return Pair(ew.select(big, ew.copysign(ew.const(1.0, x), x),
                          ew.div(ew.mul(ew.mul(beta, rho), s), denom)),
                ew.select(big, far, ew.div(t, denom)))


def tan(z: Pair) -> Pair:
    """tan z = -i tanh(iz)."""
    x, y = z
    w = tanh(Pair(ew.neg(y), x))
    return Pair(w.im, ew.neg(w.re))


def absolute(z: Pair) -> Any:
    return ew.hypot(*z)


def sign(z: Pair) -> Pair:
    """z / |z|, and 0 at 0 (NumPy 2's); with one infinite part, ±1 along it (the other
    part 0, NaN or not), and NaN with two, as NumPy's."""
    r = ew.hypot(*z)
    zero = ew.eq(r, 0.0)
    safe = ew.select(zero, ew.const(1.0, r), r)
    infinite = [ew.eq(ew.abs(p), np.inf) for p in z]
    one_inf = ew.logical_xor(*infinite)
    nan = ew.const(np.nan, r)
    out = []
    for p, inf in zip(z, infinite):
        along = ew.select(inf, ew.copysign(ew.const(1.0, p), p), ew.const(0.0, p))
        part = ew.select(zero, r, ew.div(p, safe))
        out.append(ew.select(ew.logical_and(*infinite), nan, ew.select(one_inf, along, part)))
    return Pair(*out)


def _integer_exponent(b: Any) -> int | None:
    """The exponent as an int if it is a constant integer of magnitude under 100 (NumPy
    multiplies for those), else None."""
    if isinstance(b, Pair):
        if any(not isinstance(p, np.ndarray) or p.ndim for p in b) or b.im != 0:
            return None
        b = b.re
    if not isinstance(b, np.ndarray) or b.ndim or not -100 < b < 100 or b != int(b):
        return None
    return int(b)


def _repeated_product(a: Pair, n: int) -> Pair:
    """a ** n by binary powering, in NumPy's order (npy_cpow), 1 / a ** -n for n < 0."""
    if abs(n) in (1, 2, 3):
        result = {1: a, 2: mul(a, a), 3: mul(a, mul(a, a))}[abs(n)]
    else:
        result, p, k = None, a, abs(n)
        while k:
            if k & 1:
                result = p if result is None else mul(result, p)
            k >>= 1
            if k:
                p = mul(p, p)
    return div(ew.const(1.0, a.re), result) if n < 0 else result


def power(a: Any, b: Any) -> Pair:
    """a ** b as exp(b log a), but by products for a constant integer exponent under 100
    (as NumPy's, so z ** 2 is z * z); as NumPy's, z ** 0 = 1 and 0 ** b = 0 for b of
    positive real part."""
    n = _integer_exponent(b)
    a, b = _pair(a), _pair(b)
    if n:
        return _repeated_product(a, n)
    w = exp(mul(b, log(a)))
    zero = ew.logical_and(ew.logical_and(ew.eq(a.re, 0.0), ew.eq(a.im, 0.0)),
                          ew.gt(b.re, 0.0))
    one = ew.logical_and(ew.eq(b.re, 0.0), ew.eq(b.im, 0.0))
    z = ew.const(0.0, a.re)
    return Pair(ew.select(one, ew.const(1.0, z), ew.select(zero, z, w.re)),
                ew.select(one, z, ew.select(zero, z, w.im)))


def convert(x: Any, *, dtype: np.dtype) -> Any:
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        x = _pair(x)
        part = real_dtype(dtype)
        return Pair(ew.convert(x.re, part), ew.convert(x.im, part))
    return ew.convert(x.re, dtype)  # complex to real keeps the real part


def dot_general(a: Any, b: Any, **params) -> Pair:
    """(ar + i ai)(br + i bi) as four real products (a real operand: two)."""
    def dot(x, y):
        return bind1(dot_general_p, x, y, **params)

    if not isinstance(b, Pair):
        return Pair(dot(a.re, b), dot(a.im, b))
    if not isinstance(a, Pair):
        return Pair(dot(a, b.re), dot(a, b.im))
    return Pair(ew.sub(dot(a.re, b.re), dot(a.im, b.im)),
                ew.add(dot(a.re, b.im), dot(a.im, b.re)))


def scatter(x: Any, *rest: Any, op: str, mode: str) -> Pair:
    """Setting and adding act on each part; the other combiners do not."""
    if op not in ("set", "add"):
        raise NotImplementedError(f"rune_jit: scatter with op {op!r} of complex values has "
                                  "no compiled form yet; run it with RUNE_JIT_BACKEND=interpret")
    (out,) = per_part(gather.scatter_p, [_pair(x), *rest[:-1], _pair(rest[-1])],
                       dict(op=op, mode=mode), [Type(np.dtype(np.complex128), ())])
    return out


def sort_pairs(z: Pair, *, descending: bool) -> list:
    """NumPy's order of complex values (npysort's CLT) as three stable sorts: by the
    imaginary parts, by the real parts (NaNs last, each part's), then by the kind of
    NaN: numbers first, then those whose imaginary part only is NaN (in the order of
    their real parts), then those with a NaN real part (of their imaginary parts)."""
    _, by_imag = sort.sort(z.im, descending)
    _, by_real = sort.sort(sort.take_last(z.re, by_imag), descending)
    perm = sort.take_last(by_imag, by_real)
    re, im = sort.take_last(z.re, perm), sort.take_last(z.im, perm)
    nan_kind = ew.add(ew.convert(ew.isnan(im), np.dtype(np.int32)),
                      ew.mul(ew.convert(ew.isnan(re), np.dtype(np.int32)),
                             np.asarray(2, np.int32)))
    _, by_kind = sort.sort(nan_kind, descending)
    perm = sort.take_last(perm, by_kind)
    return [Pair(sort.take_last(z.re, perm), sort.take_last(z.im, perm)), perm]


def cumulative(z: Pair, *, axis: int, op: str, reverse: bool) -> Pair:
    if op == "prod":
        return _cumulative_product(z, axis, reverse)
    if op != "sum":
        raise NotImplementedError(f"rune_jit: a cumulative {op} of complex values has no "
                                  "compiled form yet; run it with RUNE_JIT_BACKEND=interpret")
    return Pair(*(sort.cumulative(p, axis, op, reverse) for p in z))


def _cumulative_product(z: Pair, axis: int, reverse: bool) -> Pair:
    """NumPy's sequential products (p_0 = z_0, p_i = p_(i-1) z_i: its roundings) as a scan
    along `axis` carrying the running product's parts."""
    shape = type_of_value(z.re).shape
    n = shape[axis]
    if n == 0:
        return z
    order = (axis, *(a for a in range(len(shape)) if a != axis))
    rows = [sh.transpose(p, order) for p in z]
    first = n - 1 if reverse else 0

    def step(_, carry, row):
        new = mul(Pair(*carry), Pair(*row[:2]))
        at_first = ew.eq(row[2], np.int64(first))
        new = [ew.select(at_first, r, p) for r, p in zip(row[:2], new)]
        return new, new

    ones = [ew.broadcast_to_shape(ew.const(v, rows[0]), shape[:axis] + shape[axis + 1:])
            for v in (1.0, 0.0)]
    ys = scan_flat(step, [sh.transpose(o, tuple(range(len(shape) - 1))) for o in ones],
                   rows + [np.arange(n, dtype=np.int64)], length=n, reverse=reverse)[2:]
    back = tuple(np.argsort(order))
    return Pair(*(sh.transpose(y, back) for y in ys))


def reduce_prod(z: Pair, *, axes: tuple) -> Pair:
    """The product over `axes` by pairwise halving (log2 n complex products; the order of
    the roundings is not NumPy's sequential one, so the last bits may differ)."""
    shape = type_of_value(z.re).shape
    kept = [a for a in range(len(shape)) if a not in axes]
    n = int(np.prod([shape[a] for a in axes]))
    lead = tuple(shape[a] for a in kept)
    z = Pair(*(sh.reshape(sh.transpose(p, (*kept, *axes)), lead + (n,)) for p in z))
    while n > 1:
        if n % 2:  # a 1 pads the odd one out
            z = Pair(*(sh.concatenate([p, ew.broadcast_to_shape(
                ew.const(v, p), lead + (1,))], len(lead)) for p, v in zip(z, (1.0, 0.0))))
            n += 1
        low = [sh.slice_op(p, (0,) * len(lead) + (0,), lead + (n // 2,), (1,) * (len(lead) + 1))
               for p in z]
        high = [sh.slice_op(p, (0,) * len(lead) + (n // 2,), lead + (n,),
                            (1,) * (len(lead) + 1)) for p in z]
        z, n = mul(Pair(*low), Pair(*high)), n // 2
    if n == 0:
        return Pair(*(ew.broadcast_to_shape(ew.const(v, z.re), lead) for v in (1.0, 0.0)))
    return Pair(*(sh.reshape(p, lead) for p in z))


def _same_shape(*xs: Any) -> list:
    """Operands of an elementwise primitive (a 0-d one broadcasts) at their common shape:
    each part of a Pair goes through structural primitives on its own."""
    shape = np.broadcast_shapes(*(type_of_value(x).shape for x in xs))
    return [x if type_of_value(x).shape == shape else ew.broadcast_to_shape(x, shape)
            for x in xs]


class Interleaved(Pair):
    """A Pair read from NumPy's memory of complex numbers (`memory`: a real array with a
    last axis of 2, real then imaginary part): its parts are slices of that memory, and
    what reads the memory whole (the FFT, the program's results) takes it as it is."""

    memory: Any


def from_memory(memory: Any) -> Interleaved:
    shape = type_of_value(memory).shape
    parts = [sh.reshape(sh.slice_op(memory, (0,) * (len(shape) - 1) + (k,),
                                    shape[:-1] + (k + 1,)), shape[:-1]) for k in (0, 1)]
    z = Interleaved(*parts)
    z.memory = memory
    return z


def to_memory(z: Pair) -> Any:
    """z as NumPy's memory of it (its parts side by side on a new last axis)."""
    if isinstance(z, Interleaved):
        return z.memory
    shape = type_of_value(z.re).shape
    return sh.concatenate([sh.reshape(p, shape + (1,)) for p in z], len(shape))


def fft(x: Any, *, kind: str, **params) -> Any:
    """The transform on NumPy's memory of complex numbers, which it reads: a
    complex operand is interleaved (unless it is memory already), a complex result's
    parts are slices of the memory it writes."""
    y = fft_ops.fft_memory(x if kind == "r2c" else to_memory(_pair(x)), kind=kind, **params)
    return y if kind == "c2r" else from_memory(y)


def decomposition(name: str) -> Callable:
    """A decomposition of complex matrices: LAPACK's c/z routine on NumPy's memory of its
    complex operands (ops/decomp.py: decomp_memory), its complex results' parts slices
    of the memory it writes."""
    def rule(*args: Any, **params: Any) -> list:
        types = [Type(complex_dtype(type_of_value(a.re).dtype), type_of_value(a.re).shape)
                 if isinstance(a, Pair) else type_of_value(a) for a in args]
        outs = decomp.decomp_memory(
            name, [to_memory(a) if isinstance(a, Pair) else a for a in args],
            [isinstance(a, Pair) for a in args], params)
        out_types = decomp.DECOMPOSITIONS[name].rules["shape"](*types, **params)
        return [from_memory(o) if is_complex(t) else o for o, t in zip(outs, out_types)]
    return rule


def _on_parts(f: Callable) -> Callable:
    """A rule of complex_inverse.py, which takes and gives the parts (x, y)."""
    return lambda z: Pair(*f(*z))


def _both(combine: Callable) -> Callable:
    return lambda a, b: combine(*(_pair(a)), *(_pair(b)))


RULES: dict[str, Callable] = {
    "mul": mul, "div": div, "exp": exp, "log": log, "sqrt": sqrt, "sin": sin, "cos": cos,
    "sinh": sinh, "cosh": cosh, "tanh": tanh, "tan": tan, "abs": absolute, "sign": sign,
    "expm1": expm1, "log1p": log1p, "exp2": _scaled(exp, np.log(2), True),
    "log2": _scaled(log, np.log(2), False), "log10": _scaled(log, np.log(10), False),
    "reduce_prod": reduce_prod,
    **{name: _on_parts(getattr(complex_inverse, c_name)) for name, c_name in (
        ("arcsin", "casin"), ("arccos", "cacos"), ("arctan", "catan"),
        ("arcsinh", "casinh"), ("arccosh", "cacosh"), ("arctanh", "catanh"))},
    "pow": power, "convert": convert, "dot_general": dot_general, "scatter": scatter,
    "sort": sort_pairs, "cumulative": cumulative, "fft": fft,
    "real": lambda z: z.re, "imag": lambda z: z.im,
    "conj": lambda z: Pair(z.re, ew.neg(z.im)),
    "complex": lambda x, y: Pair(*_same_shape(x, y)),
    "eq": _both(lambda ar, ai, br, bi: ew.logical_and(ew.eq(ar, br), ew.eq(ai, bi))),
    "ne": _both(lambda ar, ai, br, bi: ew.logical_or(ew.ne(ar, br), ew.ne(ai, bi))),
    "isnan": lambda z: ew.logical_or(ew.isnan(z.re), ew.isnan(z.im)),
    "isfinite": lambda z: ew.logical_and(ew.isfinite(z.re), ew.isfinite(z.im)),
    **{name: decomposition(name) for name in decomp.DECOMPOSITIONS},
}
