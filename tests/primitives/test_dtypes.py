"""The twelve dtypes beyond the primitive walk: NumPy 2's promotion with Python ints out
of range, float16's rounding, float-to-integer conversion as NumPy's on x86-64, bits,
and compiled calls of every dtype (the native entry, the output pool)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.dtypes import SUPPORTED, result_type
from primitive_cases import DTYPES, F16, F32, F64, U8, U64

NUMBERS = [0, -1, 255, 2**31, 2**63, 1.5, True]


@pytest.mark.parametrize("a", DTYPES, ids=str)
def test_result_type_is_numpys_for_every_pair_and_number(a):
    for b in DTYPES:
        assert result_type((a, False), (b, False)) == np.result_type(a, b), (a, b)
    for n in NUMBERS:
        kind = np.dtype(type(n)) if not isinstance(n, int) or isinstance(n, bool) else None
        weak = (kind or np.dtype(np.int64), True)
        assert result_type((a, False), weak) == np.result_type(a, n), (a, n)


def _numpy_outcome(f, *args):
    try:
        with np.errstate(all="ignore"):
            return f(*args)
    except OverflowError:
        return OverflowError


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "bitwise_and", "subtract"])
@pytest.mark.parametrize("number", [-1, 300, 2**63, -(2**63) - 1, 2**64])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint64", "int64", "uint16"])
def test_python_ints_out_of_range_raise_as_in_numpy(backend, dtype, number, name):
    x = np.array([3, 7], dtype)
    want = _numpy_outcome(getattr(np, name), x, number)
    f = backend(lambda v: getattr(rnp, name)(v, number))
    if want is OverflowError:
        with pytest.raises(OverflowError):
            f(x)
    else:
        np.testing.assert_array_equal(f(x), want)
        assert f(x).dtype == want.dtype


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal", "equal",
                                  "not_equal"])
@pytest.mark.parametrize("number", [-1, 255, 256, -(2**40), 2**64, 2**63])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint64", "int32"])
def test_comparisons_with_any_python_int_are_exact(backend, dtype, number, name):
    x = np.array([0, 3, 100], dtype)
    for args in ((x, number), (number, x)):
        want = getattr(np, name)(*args)
        got = backend(lambda v, args=args: getattr(rnp, name)(
            *[v if a is x else a for a in args]))(x)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint32", "uint64"])
def test_traced_weak_ints_check_their_values_at_each_call(dtype):
    """A Python int argument meets an array of a narrower (or unsigned) dtype: NumPy's
    OverflowError when its value does not fit, checked at every call under jit."""
    f = rune.jit(lambda x, n: x + n)
    x = np.array([1, 2], dtype)
    np.testing.assert_array_equal(f(x, 5), x + 5)
    info = np.iinfo(dtype)
    with pytest.raises(OverflowError, match=f"out of bounds for {dtype}"):
        f(x, int(info.min) - 1)
    if dtype != "uint64":  # past uint64's top is past int64's: no Python int argument
        with pytest.raises(OverflowError, match=f"out of bounds for {dtype}"):
            f(x, int(info.max) + 1)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint64"])
def test_comparisons_with_traced_weak_ints_are_exact(dtype):
    f = rune.jit(lambda x, n: (x < n, x == n, n <= x))
    x = np.array([0, 5, 200], dtype)
    for n in (-3, 5, 2**40, -(2**62)):
        for got, want in zip(f(x, n), (x < n, x == n, n <= x)):
            np.testing.assert_array_equal(got, want)


def test_where_wraps_and_clip_ignores_python_ints_as_numpy():
    u = np.array([3, 200], np.uint8)
    for c in (True, False):
        np.testing.assert_array_equal(rnp.where(c, u, -1), np.where(c, u, -1))
    np.testing.assert_array_equal(rnp.where(np.array([False, True]), u, 300),
                                  np.where(np.array([False, True]), u, 300))
    np.testing.assert_array_equal(rnp.clip(u, -5, 1000), np.clip(u, -5, 1000))
    with pytest.raises(OverflowError):
        rnp.clip(u, 300, None)


# ------------------------------------------------------------- float16


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "sqrt",
                                  "floor_divide", "remainder", "maximum"])
def test_float16_arithmetic_is_numpys_bit_for_bit(backend, name, rng):
    a = (rng.standard_normal(4096) * 30).astype(F16)
    b = (rng.standard_normal(4096) * 30).astype(F16)
    args = (np.abs(a),) if name == "sqrt" else (a, b)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*args)
    got = backend(getattr(rnp, name))(*args)
    assert got.dtype == F16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_float64_to_float16_rounds_once(backend, rng):
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 6, 20000),
                        [65504.0, 65519.99, 65520.0, 2.0**-25, 2**-25 * (1 + 2**-40),
                         2**-24 * 1.5, 1e300, -0.0, np.inf, np.nan]])
    with np.errstate(over="ignore"):
        want = x.astype(F16)
    got = backend(lambda v: rnp.astype(v, F16))(x)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_float16_reductions_accumulate_in_float32(backend, rng):
    x = rng.uniform(0, 1, 3000).astype(F16)
    for name in ("sum", "mean"):
        got = backend(getattr(rnp, name))(x)
        assert got.dtype == F16
        np.testing.assert_allclose(got, getattr(np, name)(x), rtol=1e-3)
    # in half precision, a running sum of 3000 values near 0.5 would stall at 1024
    assert backend(rnp.sum)(x) > 1400


# ------------------------------------------------------------- conversion

SPECIALS = [0.0, 1.7, -1.7, -1.0, 127.9, 128.0, 255.9, 256.0, 300.5, -129.0, 70000.0,
            2.0**31, -2.0**31 - 1, 2.0**32 + 5, 2.0**63, 2.0**64, -2.0**63, 1e30, np.inf,
            -np.inf, np.nan]


@pytest.mark.parametrize("to", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                "int64", "uint64"])
@pytest.mark.parametrize("src", [F64, F32, F16])
def test_float_to_int_out_of_range_as_numpys_x86_casts(src, to):
    """NumPy's conversion of one element (its vectorized uint32 loop differs)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        x = np.array(SPECIALS).astype(src)
        want = np.array([np.array(v).astype(to) for v in x])
    np.testing.assert_array_equal(rune.jit(lambda v: rnp.astype(v, to))(x), want)


def test_unsigned_division_comparison_and_conversion_are_unsigned(backend):
    x = np.array([2**64 - 1, 2**63, 7], np.uint64)
    y = np.array([3, 2**63 + 1, 2], np.uint64)
    f = backend(lambda a, b: (a // b, a % b, a < b, rnp.maximum(a, b),
                              rnp.astype(a, F64), a >> 1, rnp.sign(a)))
    for got, want in zip(f(x, y), (x // y, x % y, x < y, np.maximum(x, y), x.astype(F64),
                                   x >> 1, np.sign(x))):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


# ------------------------------------------------------------- bits


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64", "int64"])
def test_operators_on_traced_integers(backend, dtype):
    x = np.array([-5, 3, 100], dtype) if dtype[0] == "i" else np.array([250, 3, 100], dtype)
    n = np.array([1, 9, 70], dtype) if dtype != "int8" else np.array([1, 9, -2], dtype)
    f = backend(lambda a, s: (a & 6, 6 | a, a ^ s, ~a, a << s, a >> s, a << 2, 1 >> a))
    with np.errstate(all="ignore"):
        want = (x & 6, 6 | x, x ^ n, ~x, x << n, x >> n, x << 2, 1 >> x)
    for got, w in zip(f(x, n), want):
        np.testing.assert_array_equal(got, w)
        assert got.dtype == w.dtype


def test_numpys_functions_dispatch_to_the_bit_rules(backend):
    x = np.array([12, 10, -1], np.int32)
    f = backend(lambda a: (np.bitwise_and(a, 10), np.bitwise_or(a, 1), np.bitwise_xor(a, a),
                           np.invert(a), np.left_shift(a, 2), np.right_shift(a, 1),
                           np.bitwise_count(a)))
    want = (np.bitwise_and(x, 10), np.bitwise_or(x, 1), np.bitwise_xor(x, x), np.invert(x),
            np.left_shift(x, 2), np.right_shift(x, 1), np.bitwise_count(x))
    for got, w in zip(f(x), want):
        np.testing.assert_array_equal(got, w)
        assert got.dtype == w.dtype


def test_bitcast_convert_reads_the_bits():
    from rune_jit._src.ops.elementwise import bitcast_convert

    x = np.array([1.0, -2.5, np.inf], np.float32)
    bits = rune.jit(lambda v: bitcast_convert(v, np.uint32))(x)
    np.testing.assert_array_equal(bits, x.view(np.uint32))
    back = rune.jit(lambda b: bitcast_convert(b, np.float32))(bits)
    np.testing.assert_array_equal(back, x)
    with pytest.raises(TypeError, match="cannot read the bits of float32 as int64"):
        bitcast_convert(x, np.int64)


# ------------------------------------------------------------- compiled calls


@pytest.mark.parametrize("dtype", [d for d in SUPPORTED], ids=str)
def test_jitted_calls_of_every_dtype_small_and_large(dtype):
    """Small results through the native entry, 1 MiB and more from the output pool."""
    f = rune.jit(lambda x: (x, rnp.maximum(x, x)))
    for n in (3, (1 << 20) // dtype.itemsize + 5):
        x = (np.arange(n) % 7).astype(dtype)
        for _ in range(2):  # the second call takes the fast path
            for got in f(x):
                assert got.dtype == dtype and got.shape == x.shape
                np.testing.assert_array_equal(got, x)
    with pytest.raises(TypeError, match=r"timedelta64\[s\] is not supported"):
        f(np.ones(3, "timedelta64[s]"))


def test_reductions_of_small_integers_widen_as_numpys(backend):
    for dtype, want in ((U8, U64), (np.int8, np.int64), (np.uint32, U64), (np.bool_, np.int64)):
        x = np.array([100, 90, 1], dtype) if dtype != np.bool_ else np.ones(3, bool)
        for name in ("sum", "prod"):
            got = backend(getattr(rnp, name))(x)
            assert got.dtype == want
            np.testing.assert_array_equal(got, getattr(np, name)(x))
    assert backend(rnp.mean)(np.array([1, 2], np.uint8)).dtype == F64
    assert backend(rnp.mean)(np.array([1, 2], F16)).dtype == F16
    assert backend(rnp.sin)(np.array([1, 2], np.int16)).dtype == F32
    assert backend(rnp.sin)(np.array([True])).dtype == F16


def test_matmul_of_float16_accumulates_in_float32(backend, rng):
    a = rng.uniform(0, 1, (8, 300)).astype(F16)
    b = rng.uniform(0, 1, (300, 5)).astype(F16)
    got = backend(rnp.matmul)(a, b)
    assert got.dtype == F16
    np.testing.assert_allclose(got, (a.astype(F32) @ b.astype(F32)), rtol=2e-3)
