"""The implementation of rune_jit.random (its docstring is the public module's)."""

from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from . import numpy as rnp
from .dtypes import check_supported, int_bounds, real_dtype
from .numpy._core import accept, as_value, broadcast, dtype_weak, is_python_scalar
from .numpy.indexing import getitem
from .ops import complex_parts as cp
from .ops import elementwise as ew
from .ops import shape as sh
from .control_flow import iterate, scan, stop_gradient
from .trace import Tracer, type_of_value

__all__ = [
    "PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy",
    "chisquare", "choice", "dirichlet", "double_sided_maxwell", "exponential", "f",
    "fold_in", "gamma", "generalized_normal", "geometric", "gumbel", "key", "key_data",
    "laplace", "loggamma", "logistic", "lognormal", "maxwell", "multinomial",
    "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson",
    "rademacher", "randint", "rayleigh", "split", "t", "triangular", "truncated_normal",
    "uniform", "wald", "weibull_min",
]

U32, U64 = np.dtype(np.uint32), np.dtype(np.uint64)
I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
UNSIGNED = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: U32, 64: U64}

# ------------------------------------------------------------- checking arguments


def _check_key(key: Any, where: str) -> Any:
    """`key` as a uint32[2] value, or a TypeError that says what it is instead."""
    k = as_value(accept(key, where))
    t = type_of_value(k)
    if t.dtype != U32 or t.shape != (2,):
        batch = " (a batch of keys goes through vmap)" if t.dtype == U32 and t.ndim > 1 else ""
        raise TypeError(f"{where}: the key must be a uint32[2] array (from "
                        f"rune_jit.random.key, split or fold_in), got {t}{batch}")
    return k


def _check_shape(shape: Any, where: str) -> tuple[int, ...]:
    """A static shape (an int or a sequence of ints), or a TypeError."""
    if isinstance(shape, Tracer) or (isinstance(shape, (list, tuple)) and any(
            isinstance(s, Tracer) for s in shape)):
        raise TypeError(f"{where}: shape must be static (Python ints), got a traced value; "
                        "shapes fix the program, so they cannot depend on traced values")
    items = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        out = tuple(operator.index(s) for s in items)
    except TypeError:
        raise TypeError(f"{where}: shape must be a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{where}: shape {out} has a negative size")
    return out


def _float_dtype(dtype: Any, where: str) -> np.dtype:
    dtype = check_supported(np.dtype(F64 if dtype is None else dtype), where)
    if dtype.kind != "f":
        raise TypeError(f"{where}: dtype must be a float dtype, got {dtype}")
    return dtype


def _int_dtype(dtype: Any, where: str) -> np.dtype:
    dtype = check_supported(np.dtype(I64 if dtype is None else dtype), where)
    if dtype.kind not in "iu":
        raise TypeError(f"{where}: dtype must be an integer dtype, got {dtype}")
    return dtype


def _shape_of(x: Any) -> tuple[int, ...]:
    return () if is_python_scalar(x) else type_of_value(as_value(accept(x))).shape


def _result_shape(shape: Any, params: Sequence[Any], where: str) -> tuple[int, ...]:
    """`shape`, which the parameters' shapes must broadcast to (as JAX's _check_shape), or
    the parameters' broadcast shape when it is None."""
    shapes = [_shape_of(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    shape = _check_shape(shape, where)
    try:
        fits = tuple(np.broadcast_shapes(shape, *shapes)) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{where}: parameter shapes {shapes} do not broadcast to shape "
                         f"{shape}")
    return shape


# ------------------------------------------------------------- threefry2x32

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA  # Threefish's key schedule constant


def _rotate_left(x: Any, r: int) -> Any:
    return ew.bitwise_or(ew.shift_left(x, r), ew.shift_right(x, 32 - r))


def threefry2x32(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """The Threefry-2x32 block function, 20 rounds (Salmon et al., "Parallel random
    numbers: as easy as 1, 2, 3", 2011), on uint32 values that broadcast: the hash of the
    counter (x0, x1) under the key (k0, k1), as JAX computes it.

    >>> [hex(int(v)) for v in threefry2x32(np.uint32(0), np.uint32(0), np.uint32(0),
    ...                                    np.uint32(0))]
    ['0x6b200159', '0x99ba4efe']
    """
    ks = (k0, k1, ew.bitwise_xor(ew.bitwise_xor(k0, k1), np.uint32(PARITY)))
    x0, x1 = ew.add(x0, ks[0]), ew.add(x1, ks[1])
    for i in range(1, 6):  # five groups of four rounds, each followed by a key injection
        for r in ROTATIONS[(i - 1) % 2]:
            x0 = ew.add(x0, x1)
            x1 = ew.bitwise_xor(x0, _rotate_left(x1, r))
        x0 = ew.add(x0, ks[i % 3])
        x1 = ew.add(ew.add(x1, ks[(i + 1) % 3]), np.uint32(i))
    return x0, x1


def _counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The flat index of each element of `shape` as a uint64, in two uint32 halves (high,
    low): the counters JAX hashes for a draw of this shape."""
    size = math.prod(shape)
    if shape == ():
        return np.uint32(0), np.uint32(0)
    if size <= 2**32:
        return np.uint32(0), sh.reshape(sh.iota((size,), 0, U32), shape)
    flat = sh.reshape(sh.iota((size,), 0, U64), shape)
    return ew.convert(ew.shift_right(flat, 32), U32), ew.convert(flat, U32)


def _hash(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """Both words of the hash of every counter of `shape` under `key`."""
    hi, lo = _counters(shape)
    return threefry2x32(key[0], key[1], hi, lo)


def _random_bits(key: Any, width: int, shape: tuple[int, ...]) -> Any:
    """`width` random bits per element of `shape`, as an unsigned integer array."""
    b0, b1 = _hash(key, shape)
    if width == 64:
        return ew.bitwise_or(ew.shift_left(ew.convert(b0, U64), 32), ew.convert(b1, U64))
    bits = ew.bitwise_xor(b0, b1)
    return bits if width == 32 else ew.convert(bits, UNSIGNED[width])


# ------------------------------------------------------------- keys


def PRNGKey(seed: Any) -> Any:
    """A key from an integer seed, as `jax.random.PRNGKey(seed)` with x64 enabled: the
    seed's 64 bits as two uint32 (high word first). A seed of a 32-bit or narrower dtype
    has a zero high word, as in JAX.

    >>> PRNGKey(42)
    array([ 0, 42], dtype=uint32)
    """
    where = "rune_jit.random.key"
    seed = as_value(accept(seed, where))
    t = type_of_value(seed)
    if t.shape != () or t.dtype.kind not in "iu":
        raise TypeError(f"{where}: the seed must be an integer scalar, got {t}")
    low = ew.convert(seed, U32)  # the low 32 bits: integer conversion wraps
    if t.dtype.itemsize < 8:
        high = np.uint32(0)
    else:
        high = ew.convert(ew.shift_right(ew.convert(seed, U64), 32), U32)
    return rnp.stack([rnp.asarray(high), low])


key = PRNGKey


def key_data(key: Any) -> Any:
    """The uint32[2] data of a key: the key itself (rune_jit's keys are raw)."""
    return _check_key(key, "rune_jit.random.key_data")


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (or an array of keys of shape `num`), independent of each other and
    of `key`, as `jax.random.split`: uint32[num, 2].

    >>> split(PRNGKey(0))
    array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    key = _check_key(key, "rune_jit.random.split")
    shape = _check_shape(num, "rune_jit.random.split")
    b0, b1 = _hash(key, shape)
    return rnp.stack([b0, b1], axis=len(shape))


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and an integer (taken as uint32), as `jax.random.fold_in`:
    `fold_in(key, step)` gives each step of a loop its own key.

    >>> fold_in(PRNGKey(0), 7)
    array([2716826189,  292468403], dtype=uint32)
    """
    key = _check_key(key, "rune_jit.random.fold_in")
    data = as_value(accept(data, "rune_jit.random.fold_in"))
    t = type_of_value(data)
    if t.shape != () or t.dtype.kind not in "iub":
        raise TypeError(f"rune_jit.random.fold_in: data must be an integer scalar, got {t}")
    b0, b1 = threefry2x32(key[0], key[1], np.uint32(0), ew.convert(data, U32))
    return rnp.stack([b0, b1])


# ------------------------------------------------------------- bits and uniform


def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (uint64 unless `dtype` says), as
    `jax.random.bits`.

    >>> bits(PRNGKey(0), (2,), np.uint32)
    array([4070199207, 4202968722], dtype=uint32)
    """
    key = _check_key(key, "rune_jit.random.bits")
    shape = _check_shape(shape, "rune_jit.random.bits")
    dtype = check_supported(np.dtype(U64 if dtype is None else dtype), "rune_jit.random.bits")
    if dtype.kind != "u":
        raise TypeError(f"rune_jit.random.bits: dtype must be an unsigned integer dtype, got "
                        f"{dtype}")
    return _random_bits(key, 8 * dtype.itemsize, shape)


def _floats_in_unit(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Uniform floats in [0, 1): random mantissa bits under the exponent of 1.0, less 1
    (JAX's construction, so the same bits give the same floats)."""
    info = np.finfo(dtype)
    width, mantissa = info.bits, info.nmant
    raw = _random_bits(key, width, shape)
    one = int(np.array(1.0, dtype).view(UNSIGNED[width]))
    mantissa_bits = ew.bitwise_or(ew.shift_right(raw, width - mantissa), one)
    return ew.sub(ew.bitcast_convert(mantissa_bits, dtype), np.asarray(1.0, dtype))


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval), float64 unless `dtype` says, as
    `jax.random.uniform` (bit for bit).

    >>> uniform(PRNGKey(0), (3,), np.float32)
    array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
    """
    where = "rune_jit.random.uniform"
    key = _check_key(key, where)
    shape = _result_shape(shape, [minval, maxval], where)
    dtype = _float_dtype(dtype, where)
    lo, hi = (rnp.astype(v, dtype) for v in (minval, maxval))
    floats = _floats_in_unit(key, shape, dtype)
    # one rounding for the scale and shift, as XLA's CPU code fuses them
    scaled = ew.fma(*broadcast(floats, rnp.subtract(hi, lo), lo, where=where))
    return rnp.maximum(lo, scaled)


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal floats (float64 unless `dtype` says), as `jax.random.normal`:
    sqrt(2) erfinv(u) for u uniform in (-1, 1). A complex dtype draws its real and
    imaginary parts from the two keys `split(key)` gives, each of variance 1/2, as JAX.

    >>> normal(PRNGKey(0), (3,), np.float32)
    array([ 1.6226422 ,  2.0252647 , -0.43359444], dtype=float32)
    """
    where = "rune_jit.random.normal"
    key = _check_key(key, where)
    if dtype is not None and np.dtype(dtype).kind == "c":
        dtype = check_supported(np.dtype(dtype), where)
        parts = [normal(k, shape, real_dtype(dtype)) for k in split(key)]
        return rnp.divide(cp.complex_(*parts), np.array(np.sqrt(2), dtype))
    dtype = _float_dtype(dtype, where)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform(key, _check_shape(shape, where), dtype, lo, np.array(1.0, dtype))
    return rnp.multiply(np.array(np.sqrt(2), dtype), ew.erfinv(u))


# ------------------------------------------------------------- randint


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in [minval, maxval), int64 unless `dtype` says, as
    `jax.random.randint` (bit for bit): twice the bits of the dtype, reduced modulo the
    span, so the bias is at most span / 2**bits.

    >>> randint(PRNGKey(0), (4,), 0, 10)
    array([5, 1, 5, 7])
    """
    where = "rune_jit.random.randint"
    key = _check_key(key, where)
    shape = _result_shape(shape, [minval, maxval], where)
    dtype = _int_dtype(dtype, where)
    lo, hi = (_integer(v, where) for v in (minval, maxval))
    if dtype.itemsize < 4:  # drawn in 32 bits, to keep the modulo bias small
        low, high = int_bounds(dtype)
        lo = rnp.clip(rnp.astype(lo, I32), low, high)
        hi = rnp.clip(rnp.astype(hi, I32), low, high + 1)
        return rnp.astype(_randint(key, shape, lo, hi, I32), dtype)
    return _randint(key, shape, lo, hi, dtype)


def _integer(v: Any, where: str) -> Any:
    """A bound as an integer array (int64 for a Python int; floats truncated, as JAX)."""
    v = as_value(accept(v, where))
    return v if type_of_value(v).dtype.kind in "iu" else rnp.astype(v, I64)


def _clip_convert(v: Any, dtype: np.dtype) -> Any:
    """v as `dtype`, clipped to the values both dtypes hold (not wrapped)."""
    src = type_of_value(v).dtype
    lo = max(int_bounds(dtype)[0], int_bounds(src)[0])
    hi = min(int_bounds(dtype)[1], int_bounds(src)[1])
    clipped = rnp.minimum(rnp.maximum(v, np.asarray(lo, src)), np.asarray(hi, src))
    return rnp.astype(clipped, dtype)


def _rem(a: Any, b: Any) -> Any:
    """XLA's unsigned remainder: a % 0 is a (NumPy's is 0)."""
    zero = ew.eq(b, np.zeros((), type_of_value(b).dtype))
    safe = ew.select(zero, np.ones((), type_of_value(b).dtype), b)
    return rnp.where(zero, a, rnp.remainder(a, safe))


def _randint(key, shape, lo, hi, dtype):
    width = 8 * dtype.itemsize
    unsigned = UNSIGNED[width]
    top = np.asarray(int_bounds(dtype)[1], dtype)
    hi_past_top = rnp.greater(hi, _clip_convert(top, type_of_value(hi).dtype))
    lo, hi = _clip_convert(lo, dtype), _clip_convert(hi, dtype)
    k1, k2 = _two(split(key))
    higher, lower = _random_bits(k1, width, shape), _random_bits(k2, width, shape)
    span = rnp.astype(rnp.subtract(hi, lo), unsigned)
    span = rnp.where(rnp.less_equal(hi, lo), np.ones((), unsigned), span)
    # a maxval past the dtype's top means the top itself may be drawn: one more value
    span = rnp.where(rnp.logical_and(hi_past_top, rnp.greater(hi, lo)),
                     rnp.add(span, np.ones((), unsigned)), span)
    # (a * 2**w + b) mod span, in w bits: the multiplier is 2**w mod span
    half = np.asarray(2 ** (width // 2), unsigned)
    multiplier = _rem(half, span)
    multiplier = _rem(rnp.multiply(multiplier, multiplier), span)
    offset = rnp.add(rnp.multiply(_rem(higher, span), multiplier), _rem(lower, span))
    offset = _rem(offset, span)
    return rnp.add(lo, rnp.astype(offset, dtype))


def _two(keys: Any) -> tuple[Any, Any]:
    return keys[0], keys[1]


# ------------------------------------------------------------- transforms of uniform


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None) -> Any:
    """True with probability `p` (float), as `jax.random.bernoulli`: uniform(key) < p.

    >>> bernoulli(PRNGKey(0), 0.5, (4,))
    array([ True,  True, False, False])
    """
    where = "rune_jit.random.bernoulli"
    dtype = _param_float(p, where, "p")
    return rnp.less(uniform(key, _result_shape(shape, [p], where), dtype), p)


def _param_float(v: Any, where: str, name: str) -> np.dtype:
    """The float dtype of a distribution's parameter (a Python float: float64)."""
    dtype = dtype_weak(accept(v, where))[0]
    if dtype.kind != "f":
        raise TypeError(f"{where}: {name} must be a float, got {dtype}")
    return F64 if is_python_scalar(v) else dtype


def _open_unit(key: Any, shape: Any, dtype: Any, where: str) -> tuple[Any, np.dtype]:
    """Uniform floats in (0, 1): [tiny, 1), as JAX draws them for logarithms."""
    dtype = _float_dtype(dtype, where)
    tiny = np.finfo(dtype).tiny
    return uniform(key, _check_shape(shape, where), dtype, tiny, 1.0), dtype


def exponential(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Exponential(1) floats, -log(1 - u), as `jax.random.exponential`."""
    where = "rune_jit.random.exponential"
    u = uniform(key, _check_shape(shape, where), _float_dtype(dtype, where))
    return rnp.negative(rnp.log1p(rnp.negative(u)))


def gumbel(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Gumbel floats, -log(-log(u)), as `jax.random.gumbel` (mode "low")."""
    u, _ = _open_unit(key, shape, dtype, "rune_jit.random.gumbel")
    return rnp.negative(rnp.log(rnp.negative(rnp.log(u))))


def laplace(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Laplace(0, 1) floats, sign(u) log(1 - |u|) for u in (-1, 1), as
    `jax.random.laplace`."""
    where = "rune_jit.random.laplace"
    dtype = _float_dtype(dtype, where)
    u = uniform(key, _check_shape(shape, where), dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return rnp.multiply(rnp.sign(u), rnp.log1p(rnp.negative(rnp.abs(u))))


def logistic(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard logistic floats, log(u / (1 - u)), as `jax.random.logistic`."""
    u, _ = _open_unit(key, shape, dtype, "rune_jit.random.logistic")
    return rnp.subtract(rnp.log(u), rnp.log1p(rnp.negative(u)))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Any:
    """Standard normal floats conditioned on lower < x < upper, by the inverse CDF (as
    `jax.random.truncated_normal`); they differentiate in the bounds.

    >>> x = truncated_normal(PRNGKey(0), -1.0, 2.0, (1000,))
    >>> bool(x.min() > -1.0 and x.max() < 2.0)
    True
    """
    where = "rune_jit.random.truncated_normal"
    shape = _result_shape(shape, [lower, upper], where)
    dtype = _float_dtype(dtype, where)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower, upper = rnp.astype(lower, dtype), rnp.astype(upper, dtype)
    a = ew.erf(rnp.divide(lower, sqrt2))
    b = ew.erf(rnp.divide(upper, sqrt2))
    x = rnp.multiply(sqrt2, ew.erfinv(uniform(key, shape, dtype, a, b)))
    # rounding (or u at a) may land on a bound: keep to the open interval
    return rnp.clip(x, _next_float(stop_gradient(lower), True),
                    _next_float(stop_gradient(upper), False))


def _next_float(x: Any, up: bool) -> Any:
    """The float next to x toward +inf (up) or -inf, as np.nextafter; infinities stay."""
    dtype = type_of_value(as_value(x)).dtype
    uint = UNSIGNED[8 * dtype.itemsize]
    bits_ = ew.bitcast_convert(x, uint)
    one = np.ones((), uint)
    # toward +inf the magnitude grows for x > 0 and shrinks for x < 0
    grow = rnp.greater(x, 0.0) if up else rnp.less(x, 0.0)
    moved = ew.bitcast_convert(rnp.where(grow, rnp.add(bits_, one), rnp.subtract(bits_, one)),
                               dtype)
    tiny = np.asarray(np.finfo(dtype).smallest_subnormal * (1 if up else -1), dtype)
    moved = rnp.where(rnp.equal(x, 0.0), tiny, moved)
    return rnp.where(rnp.isfinite(x), moved, x)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Normal vectors with mean `mean` [..., n] and covariance `cov` [..., n, n] (positive
    definite), as `jax.random.multivariate_normal` with method "cholesky": mean + L z for
    the Cholesky factor L of cov and z = normal(key, shape + (n,)).

    >>> x = multivariate_normal(PRNGKey(0), np.zeros(2), np.eye(2), (5,))
    >>> x.shape
    (5, 2)
    """
    where = "rune_jit.random.multivariate_normal"
    if method != "cholesky":
        raise ValueError(f"{where}: method must be 'cholesky' (rune_jit has no eigh or svd), "
                         f"got {method!r}")
    mean, cov = (_as_float(v, where) for v in (mean, cov))
    ms, cs = _shape_of(mean), _shape_of(cov)
    if len(ms) < 1 or len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(f"{where}: mean must be [..., n] and cov [..., n, n], got shapes "
                         f"{ms} and {cs}")
    batch = _result_shape(shape, [np.empty(ms[:-1]), np.empty(cs[:-2])], where)
    dtype = _float_dtype(dtype if dtype is not None else type_of_value(mean).dtype, where)
    z = normal(key, batch + ms[-1:], dtype)
    factor = _cholesky(cov)
    return rnp.add(mean, rnp.matmul(factor, rnp.expand_dims(z, -1))[..., 0])


def _as_float(v: Any, where: str) -> Any:
    v = as_value(accept(v, where))
    return v if type_of_value(v).dtype.kind == "f" else rnp.astype(v, F64)


def _cholesky(a: Any) -> Any:
    """The lower triangular L with L Lᵀ = a, for positive definite a [..., n, n]: column
    by column in a scan (a static loop of n steps), differentiable and vmappable."""
    shape = type_of_value(a).shape
    if len(shape) > 2:
        from .api import vmap

        flat = rnp.reshape(a, (-1,) + shape[-2:])
        return rnp.reshape(vmap(_cholesky)(flat), shape)
    n = shape[-1]
    idx = sh.iota((n,), 0, I64)

    def column(lower, j):
        # L[:, j] from a[:, j] less what the columns left of j give (row j of L is zero
        # from column j on, so the whole row can be used)
        v = rnp.subtract(getitem(a, (slice(None), j)), rnp.matmul(lower, getitem(lower, j)))
        col = rnp.where(rnp.greater_equal(idx, j), rnp.divide(v, rnp.sqrt(getitem(v, j))), 0.0)
        return rnp.add(lower, rnp.multiply(col[:, None], rnp.equal(idx, j)[None, :])), j

    start = rnp.multiply(a, 0.0)
    return scan(column, start, np.arange(n))[0]


# ------------------------------------------------------------- rejection samplers

GAMMA_MAX_STEPS = 128  # Marsaglia-Tsang accepts a proposal with probability > 0.95
POISSON_MAX_STEPS = 1024  # Knuth's loop runs lam + 1 steps on average (lam < 10 here)


def _per_element(key: Any, params: list, shape: tuple[int, ...], fn) -> Any:
    """fn(key, *params) for each element of `shape`, each with a key of its own: a vmap
    of a scalar sampler (its while loops stop lane by lane)."""
    from .api import vmap

    size = math.prod(shape)
    keys = rnp.reshape(split(key, size), (size, 2))
    flat = [rnp.reshape(rnp.broadcast_to(p, shape), (size,)) for p in params]
    out = vmap(fn)(keys, *flat) if size else fn(PRNGKey(0), *[p[:0] for p in flat])[:0]
    return rnp.reshape(out, shape)


def _log_gamma_one(key: Any, alpha: Any) -> Any:
    """log of one Gamma(alpha, 1) draw: Marsaglia and Tsang's method ("A simple method
    for generating gamma variables", 2000), alpha < 1 boosted through alpha + 1."""
    dtype = type_of_value(alpha).dtype
    boost_key, key = _two(split(key))
    boosted = rnp.less(alpha, 1.0)
    shape_ = rnp.where(boosted, rnp.add(alpha, 1.0), alpha)
    d = rnp.subtract(shape_, 1.0 / 3.0)
    c = rnp.divide(1.0 / 3.0, rnp.sqrt(d))

    def propose(state):
        k, _, _ = state
        k, kx, ku = (split(k, 3)[i] for i in range(3))
        x = normal(kx, (), dtype)
        v = rnp.add(1.0, rnp.multiply(c, x))
        v3 = rnp.multiply(rnp.multiply(v, v), v)
        u = uniform(ku, (), dtype)
        safe = rnp.where(rnp.greater(v3, 0.0), v3, 1.0)
        bound = rnp.add(rnp.multiply(0.5, rnp.multiply(x, x)),
                        rnp.multiply(d, rnp.add(rnp.subtract(1.0, safe), rnp.log(safe))))
        ok = rnp.logical_and(rnp.greater(v3, 0.0), rnp.less(rnp.log(u), bound))
        return k, safe, ok

    _, v3, _ = iterate(propose, (key, np.ones((), dtype), np.bool_(False)),
                       until=lambda s: s[2], max_steps=GAMMA_MAX_STEPS)
    log_u = rnp.log(uniform(boost_key, (), dtype, np.finfo(dtype).tiny, 1.0))
    boost = rnp.where(boosted, rnp.divide(log_u, alpha), 0.0)
    return rnp.add(rnp.add(rnp.log(d), rnp.log(v3)), boost)


def _log_gamma(key, a, shape, dtype, where):
    a = stop_gradient(rnp.astype(a, dtype))  # no implicit derivative in a (see docs)
    return _per_element(key, [a], shape, _log_gamma_one)


def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) floats (a > 0), by Marsaglia and Tsang's rejection method, per element
    a while loop that stops on its own; a is not differentiated.

    >>> float(gamma(PRNGKey(0), 3.0, (20000,)).mean().round(1))
    3.0
    """
    where = "rune_jit.random.gamma"
    shape = _result_shape(shape, [a], where)
    return rnp.exp(_log_gamma(key, a, shape, _float_dtype(dtype, where), where))


def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) floats, Ga / (Ga + Gb) from two gamma draws (in log space, so small a
    and b do not underflow to 0 / 0)."""
    where = "rune_jit.random.beta"
    shape = _result_shape(shape, [a, b], where)
    dtype = _float_dtype(dtype, where)
    ka, kb = _two(split(key))
    la, lb = _log_gamma(ka, a, shape, dtype, where), _log_gamma(kb, b, shape, dtype, where)
    top = rnp.maximum(la, lb)
    ea, eb = rnp.exp(rnp.subtract(la, top)), rnp.exp(rnp.subtract(lb, top))
    return rnp.divide(ea, rnp.add(ea, eb))


def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) integers (int64 unless `dtype` says): Knuth's multiplication method
    for lam < 10, Hörmann's transformed rejection (PTRS) above, as JAX."""
    where = "rune_jit.random.poisson"
    shape = _result_shape(shape, [lam], where)
    dtype = _int_dtype(dtype, where)
    lam = stop_gradient(rnp.astype(lam, F64))
    small = rnp.less(lam, 10.0)
    lam_k = rnp.broadcast_to(rnp.where(small, lam, 0.0), shape)
    lam_r = rnp.broadcast_to(rnp.where(small, 1e5, lam), shape)
    kk, kr = _two(split(key))
    counts = rnp.where(rnp.broadcast_to(small, shape),
                       _per_element(kk, [lam_k], shape, _poisson_knuth),
                       _per_element(kr, [lam_r], shape, _poisson_rejection))
    return rnp.astype(rnp.where(rnp.equal(lam, 0.0), 0.0, counts), dtype)


def _poisson_knuth(key: Any, lam: Any) -> Any:
    """The number of uniform factors whose product stays above exp(-lam), less one."""
    def step(state):
        k, n, log_prod = state
        k, sub = _two(split(k))
        return k, rnp.add(n, 1.0), rnp.add(log_prod, rnp.log(uniform(sub, (), F64)))

    _, n, _ = iterate(step, (key, np.float64(0.0), np.float64(0.0)),
                      until=lambda s: rnp.less_equal(s[2], rnp.negative(lam)),
                      max_steps=POISSON_MAX_STEPS)
    return rnp.subtract(n, 1.0)


def _poisson_rejection(key: Any, lam: Any) -> Any:
    """Hörmann's PTRS ("The transformed rejection method for generating Poisson random
    variables", 1993), for lam >= 10."""
    log_lam = rnp.log(lam)
    b = rnp.add(0.931, rnp.multiply(2.53, rnp.sqrt(lam)))
    a = rnp.add(-0.059, rnp.multiply(0.02483, b))
    inv_alpha = rnp.add(1.1239, rnp.divide(1.1328, rnp.subtract(b, 3.4)))
    v_r = rnp.subtract(0.9277, rnp.divide(3.6224, rnp.subtract(b, 2.0)))

    def step(state):
        k_, _, _ = state
        k_, k0, k1 = (split(k_, 3)[i] for i in range(3))
        u = rnp.subtract(uniform(k0, (), F64), 0.5)
        v = uniform(k1, (), F64)
        us = rnp.subtract(0.5, rnp.abs(u))
        k = rnp.floor_divide(rnp.add(rnp.add(rnp.multiply(
            rnp.add(rnp.divide(rnp.multiply(2.0, a), us), b), u), lam), 0.43), 1.0)
        s = rnp.log(rnp.divide(rnp.multiply(v, inv_alpha),
                               rnp.add(rnp.divide(a, rnp.multiply(us, us)), b)))
        t = rnp.subtract(rnp.add(rnp.negative(lam), rnp.multiply(k, log_lam)),
                         _log_factorial(k))
        quick = rnp.logical_and(rnp.greater_equal(us, 0.07), rnp.less_equal(v, v_r))
        reject = rnp.logical_or(rnp.less(k, 0.0),
                                rnp.logical_and(rnp.less(us, 0.013), rnp.greater(v, us)))
        ok = rnp.logical_or(quick, rnp.logical_and(rnp.logical_not(reject),
                                                   rnp.less_equal(s, t)))
        return k_, k, ok

    _, k, _ = iterate(step, (key, np.float64(-1.0), np.bool_(False)), until=lambda s: s[2],
                      max_steps=GAMMA_MAX_STEPS)
    return k


LOG_FACTORIALS = [math.lgamma(k + 1.0) for k in range(10)]


def _log_factorial(k: Any) -> Any:
    """log(k!) for a float k >= 0: exact below 10, Stirling's series with three terms of
    its tail above (error below 1e-12 there)."""
    safe = rnp.maximum(k, 10.0)
    k1 = rnp.add(safe, 1.0)
    inv, inv2 = rnp.divide(1.0, k1), rnp.divide(1.0, rnp.multiply(k1, k1))
    tail = rnp.multiply(inv, rnp.subtract(1.0 / 12, rnp.multiply(
        inv2, rnp.subtract(1.0 / 360, rnp.multiply(inv2, 1.0 / 1260)))))
    stirling = rnp.add(rnp.add(rnp.subtract(rnp.multiply(rnp.add(safe, 0.5), rnp.log(k1)),
                                            k1), 0.5 * math.log(2 * math.pi)), tail)
    table = stirling
    for n, value in enumerate(LOG_FACTORIALS):
        table = rnp.where(rnp.equal(k, float(n)), value, table)
    return table


# ------------------------------------------------------------- orderings


def _ascending_ranks(k: Any) -> Any:
    """The position of each element of k [..., n] in a stable ascending sort of its last
    axis: the number of smaller elements, and of equal ones before it."""
    n = type_of_value(k).shape[-1]
    ki, kj = rnp.expand_dims(k, -1), rnp.expand_dims(k, -2)
    before = rnp.less(sh.iota((n, n), 1, I64), sh.iota((n, n), 0, I64))  # [i, j]: j < i
    first = rnp.logical_or(rnp.less(kj, ki), rnp.logical_and(rnp.equal(kj, ki), before))
    return rnp.sum(first, axis=-1)


def _descending_ranks(k: Any) -> Any:
    n = type_of_value(k).shape[-1]
    ki, kj = rnp.expand_dims(k, -1), rnp.expand_dims(k, -2)
    before = rnp.less(sh.iota((n, n), 1, I64), sh.iota((n, n), 0, I64))
    first = rnp.logical_or(rnp.greater(kj, ki), rnp.logical_and(rnp.equal(kj, ki), before))
    return rnp.sum(first, axis=-1)


def _by_rank(x: Any, ranks: Any, count: int) -> Any:
    """out[..., r] = the x[..., i] whose rank is r, for r < count (ranks are distinct)."""
    t = type_of_value(as_value(x))
    if t.dtype.kind == "b":
        return rnp.astype(_by_rank(rnp.astype(x, np.uint8), ranks, count), bool)
    lowest = -np.inf if t.dtype.kind == "f" else int_bounds(t.dtype)[0]
    r = sh.iota((count, 1), 0, I64)
    hit = rnp.equal(rnp.expand_dims(ranks, -2), r)  # [..., r, i]
    return rnp.max(rnp.where(hit, rnp.expand_dims(x, -2), np.asarray(lowest, t.dtype)), axis=-1)


def _sort_by(keys: Any, x: Any, axis: int) -> Any:
    """x sorted along `axis` by `keys` of x's shape, stably (as lax.sort_key_val)."""
    k, xm = rnp.moveaxis(keys, axis, -1), rnp.moveaxis(x, axis, -1)
    n = type_of_value(k).shape[-1]
    return rnp.moveaxis(_by_rank(xm, _ascending_ranks(k), n), -1, axis)


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """JAX's shuffle: sorts by fresh random 32-bit keys, as many rounds as make ties
    unlikely (one up to 1625 elements)."""
    shape = type_of_value(x).shape
    rounds = int(np.ceil(3 * np.log(max(1, math.prod(shape))) / np.log(2**32 - 1)))
    for _ in range(rounds):
        key, sub = _two(split(key))
        x = _sort_by(_random_bits(sub, 32, shape), x, axis)
    return x


def _take(x: Any, ind: Any, axis: int) -> Any:
    """x[..., ind, ...] with `ind` (any shape of integers) along `axis`."""
    from .api import vmap

    shape, ishape = type_of_value(x).shape, type_of_value(ind).shape
    moved = rnp.moveaxis(x, axis, 0)
    flat = rnp.reshape(ind, (-1,))
    rows = vmap(lambda i: getitem(moved, i))(flat) if math.prod(ishape) else moved[:0]
    out = rnp.reshape(rows, ishape + shape[:axis] + shape[axis + 1:])
    k = len(ishape)
    order = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, len(out.shape)))
    return rnp.transpose(out, order)


def _static_int(v: Any, where: str) -> int | None:
    """v as a Python int if it is an integer scalar known now; None for an array."""
    if isinstance(v, Tracer):
        if v.shape == () and v.dtype.kind in "iu":
            raise TypeError(f"{where}: an integer x must be static (it fixes the shape), "
                            "got a traced value")
        return None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    arr = np.asarray(v) if isinstance(v, np.ndarray) else None
    if arr is not None and arr.ndim == 0 and arr.dtype.kind in "iu":
        return int(arr)
    return None


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of range(x) (x an int) or of x along `axis`, as
    `jax.random.permutation` (bit for bit: the same stable sort by the same random keys,
    here by ranking, O(n²) work along the axis).

    >>> permutation(PRNGKey(0), 5)
    array([0, 1, 4, 3, 2])
    """
    where = "rune_jit.random.permutation"
    key = _check_key(key, where)
    n = _static_int(x, where)
    if n is not None:
        return _shuffle(key, np.arange(n), 0)
    x = as_value(accept(x, where))
    shape = type_of_value(x).shape
    if not shape:
        raise TypeError(f"{where}: x must be an integer or an array of at least one axis")
    axis = operator.index(axis) % len(shape)
    if independent or len(shape) == 1:
        return _shuffle(key, x, axis)
    return _take(x, _shuffle(key, np.arange(shape[axis]), 0), axis)


def choice(key: Any, a: Any, shape: Any = (), replace: bool = True, p: Any = None,
           axis: int = 0) -> Any:
    """Draws from range(a) (a an int) or from a's entries along `axis`, as
    `jax.random.choice`: uniform with replacement (randint), without (a permutation's
    first entries), or with probabilities p (the inverse CDF with replacement, Gumbel
    top-k without). Bit for bit JAX's without p.

    >>> choice(PRNGKey(0), 10, (3,))
    array([5, 1, 5])
    """
    where = "rune_jit.random.choice"
    key = _check_key(key, where)
    shape = _check_shape(shape, where)
    n = _static_int(a, where)
    arr = None if n is not None else as_value(accept(a, where))
    if arr is not None:
        ashape = type_of_value(arr).shape
        if not ashape:
            raise TypeError(f"{where}: a must be an integer or an array of at least one axis")
        axis = operator.index(axis) % len(ashape)
        n = ashape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return np.zeros(shape, I64 if arr is None else type_of_value(arr).dtype)
    if n <= 0:
        raise ValueError(f"{where}: a must be greater than 0 unless no samples are taken")
    if not replace and draws > n:
        raise ValueError(f"{where}: cannot take a larger sample (size {draws}) than the "
                         f"population (size {n}) without replacement")
    ind = _choice_indices(key, n, arr, axis, shape, replace, p, where)
    if ind is None:  # the first entries of a permutation
        picked = permutation(key, n if arr is None else arr, axis)
        picked = picked[(slice(None),) * (axis if arr is not None else 0) + (slice(draws),)]
        if arr is None:
            return rnp.reshape(picked, shape)
        ashape = type_of_value(arr).shape
        return rnp.reshape(picked, ashape[:axis] + shape + ashape[axis + 1:])
    return ind if arr is None else _take(arr, ind, axis)


def _choice_indices(key, n, arr, axis, shape, replace, p, where):
    """The indices of choice's draws, of `shape`; None for draws without replacement
    and without p (a permutation's first entries)."""
    if p is None:
        return randint(key, shape, 0, n) if replace else None
    p = _as_float(p, where)
    if type_of_value(p).shape != (n,):
        raise ValueError(f"{where}: p must be None or a vector of the {n} probabilities of "
                         f"a's entries, got shape {type_of_value(p).shape}")
    if replace:
        cumulative = scan(lambda c, v: (rnp.add(c, v), rnp.add(c, v)),
                          np.zeros((), type_of_value(p).dtype), p)[1]
        r = rnp.multiply(cumulative[-1], rnp.subtract(1.0, uniform(
            key, shape, type_of_value(p).dtype)))
        return rnp.sum(rnp.less(cumulative, rnp.expand_dims(r, -1)), axis=-1)
    g = rnp.add(gumbel(key, (n,), type_of_value(p).dtype), rnp.log(p))
    ranks = _descending_ranks(g)
    return rnp.reshape(_by_rank(sh.iota((n,), 0, I64), ranks, math.prod(shape)), shape)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None,
                replace: bool = True) -> Any:
    """Indices drawn with probabilities softmax(logits) along `axis`, by the Gumbel-max
    trick (as `jax.random.categorical`), or without replacement by Gumbel top-k.

    >>> categorical(PRNGKey(0), np.log(np.array([0.1, 0.6, 0.3])), shape=(5,))
    array([2, 1, 1, 1, 1])
    """
    where = "rune_jit.random.categorical"
    key = _check_key(key, where)
    logits = _as_float(logits, where)
    lshape, dtype = type_of_value(logits).shape, type_of_value(logits).dtype
    if not lshape:
        raise TypeError(f"{where}: logits must have at least one axis")
    axis = operator.index(axis) % len(lshape)
    batch = lshape[:axis] + lshape[axis + 1:]
    shape = _result_shape(shape, [np.empty(batch)], where)
    prefix = shape[:len(shape) - len(batch)]
    if replace:
        drawn = list(shape[len(prefix):])
        drawn.insert(axis, lshape[axis])
        g = gumbel(key, prefix + tuple(drawn), dtype)
        lifted = rnp.reshape(logits, (1,) * len(prefix) + lshape)
        return rnp.argmax(rnp.add(g, lifted), axis=len(prefix) + axis)
    count = math.prod(prefix)
    if count > lshape[axis]:
        raise ValueError(f"{where}: {count} draws without replacement from "
                         f"{lshape[axis]} categories")
    noisy = rnp.moveaxis(rnp.add(logits, gumbel(key, lshape, dtype)), axis, -1)
    top = _by_rank(rnp.broadcast_to(sh.iota((lshape[axis],), 0, I64), type_of_value(noisy).shape),
                   _descending_ranks(noisy), count)  # [..batch, count]
    return rnp.reshape(rnp.moveaxis(top, -1, 0), shape)


# ------------------------------------------------------------- more distributions
# (kept in their own module: this one holds the generator and the first samplers)

from .random_distributions import (ball, binomial, cauchy, chisquare, dirichlet,  # noqa: E402
                                   double_sided_maxwell, f, generalized_normal, geometric, loggamma,
                                   lognormal, maxwell, multinomial, orthogonal, pareto, rademacher,
                                   rayleigh, t, triangular, wald, weibull_min)
