"""rune_jit.lax's elementwise, bit and dtype operations against jax.lax's results, eager
and compiled (one compiled program per group of operations and dtype, so the file
stays fast), under grad, jvp and vmap, and inside a scan step."""

import numpy as np
import pytest

import rune_jit as rune
from rune_jit import lax


@pytest.fixture(scope="module")
def jlax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.lax


_JAX_RESULTS: dict = {}


def _jax(jlax, name, *args):
    """jax.lax.<name>(*args) as NumPy, each computed once (the eager and compiled tests
    share it: JAX compiles every operation on its first call)."""
    import jax.numpy as jnp

    key = (name,) + tuple((a.dtype.str, a.shape, a.tobytes()) if isinstance(a, np.ndarray)
                          else a for a in args)
    if key not in _JAX_RESULTS:
        _JAX_RESULTS[key] = np.asarray(getattr(jlax, name)(
            *[jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]))
    return _JAX_RESULTS[key]


FLOATS = np.array([-2.5, -0.7, -0.5, 0.3, 0.5, 0.9, 1.5, 2.5, 7.0])
FLOATS_2 = np.array([1.5, -2.0, 0.25, -0.3, 0.5, 3.0, -1.5, 2.5, 0.0])
INTS = np.array([-7, -3, -1, 0, 1, 2, 5, 100])
INTS_2 = np.array([2, -2, 3, 5, -1, 0, 7, 3])
UNARY_FLOAT = ["neg", "abs", "sign", "square", "reciprocal", "exp", "exp2", "expm1", "log",
               "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan",
               "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic", "erf", "erfc",
               "erf_inv", "lgamma", "digamma", "bessel_i0e", "bessel_i1e", "floor", "ceil", "round",
               "is_finite"]
BINARY_FLOAT = ["add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "nextafter",
                "eq", "ne", "lt", "le", "gt", "ge"]
UNARY_INT = ["neg", "abs", "sign", "square", "bitwise_not", "population_count", "clz"]
BINARY_INT = ["add", "sub", "mul", "div", "rem", "max", "min", "eq", "ne", "lt", "le", "gt",
              "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
              "shift_right_logical", "shift_right_arithmetic"]
BOOL_OPS = ["bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "max", "min"]
# rune_jit's own special functions against XLA's: agreement to these relative errors
LOOSE = {"lgamma", "digamma", "erf_inv", "erfc", "erf", "bessel_i0e", "bessel_i1e"}


def _tol(name, dtype):
    if dtype == np.float32:
        return 1e-5 if name in LOOSE else 2e-6
    return 1e-10 if name in LOOSE else 1e-13


def _all_of(names, arity):
    return lambda *xs: {n: getattr(lax, n)(*xs[:arity]) for n in names}


def _compare(jlax, names, args, got, dtype):
    for name in names:
        want = _jax(jlax, name, *args)
        assert got[name].dtype == want.dtype, name
        assert got[name].shape == want.shape, name
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got[name], want, rtol=_tol(name, dtype), atol=1e-300,
                                       equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(got[name], want, err_msg=name)


def _against_jax(jlax, groups, compiled, dtype):
    """Each group (names, operands) as one program, eager or compiled, against JAX."""
    for names, args in groups:
        f = _all_of(names, len(args))
        with np.errstate(all="ignore"):
            _compare(jlax, names, args, (rune.jit(f) if compiled else f)(*args), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.slow
def test_float_operations_against_jax(jlax, dtype, compiled):
    x, y = FLOATS.astype(dtype), FLOATS_2.astype(dtype)
    _against_jax(jlax, [(UNARY_FLOAT, (x,)), (BINARY_FLOAT, (x, y))], compiled, dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("compiled", [False, True])
def test_integer_operations_against_jax(jlax, dtype, compiled):
    """Integer division truncates and rem takes the dividend's sign (C's), by zero -1 and
    the dividend; shifts by counts out of range shift every bit out."""
    unary = [n for n in UNARY_INT if not (dtype == np.uint8 and n == "abs")]
    x, y = INTS.astype(dtype), INTS_2.astype(dtype)
    counts = np.array([0, 1, 31, 32, 33, -1, 7, 63]).astype(dtype)
    shifts = ["shift_left", "shift_right_logical", "shift_right_arithmetic"]
    _against_jax(jlax, [(unary, (x,)), (BINARY_INT, (x, y)), (shifts, (x, counts))],
                 compiled, dtype)


def test_integer_division_extremes_against_jax(jlax, backend):
    lo = np.array([np.iinfo(np.int32).min] * 2, np.int32)
    d = np.array([-1, 0], np.int32)
    f = backend(lambda a, b: (lax.div(a, b), lax.rem(a, b)))
    got = f(lo, d)
    np.testing.assert_array_equal(got[0], _jax(jlax, "div", lo, d))
    np.testing.assert_array_equal(got[1], _jax(jlax, "rem", lo, d))


@pytest.mark.parametrize("compiled", [False, True])
def test_bool_operations_against_jax(jlax, compiled):
    x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
    f = lambda a, b: {**_all_of(BOOL_OPS, 2)(a, b), "bitwise_not": lax.bitwise_not(a)}  # noqa: E731
    got = (rune.jit(f) if compiled else f)(x, y)
    _compare(jlax, BOOL_OPS, (x, y), got, bool)
    np.testing.assert_array_equal(got["bitwise_not"], ~x)


CONVERSIONS = [(np.float64, np.int32), (np.float64, np.uint8), (np.float32, np.int64),
               (np.float64, np.uint32), (np.float64, np.bool_), (np.int64, np.int8),
               (np.int32, np.float32), (np.float64, np.float32), (np.bool_, np.float64)]


@pytest.mark.parametrize("src,dst", CONVERSIONS)
def test_convert_element_type_against_jax(jlax, backend, src, dst):
    """Floats to integers truncate and saturate (nan: 0), as JAX's do."""
    x = np.array([np.nan, np.inf, -np.inf, 3e10, -3e10, -2.7, 2.7, 300.5, -0.5, 0.0, 1e300])
    with np.errstate(all="ignore"):
        x = x.astype(src) if np.dtype(src).kind == "f" else (x[5:10] * 50).astype(src)
        got = backend(lambda v: lax.convert_element_type(v, dst))(x)
        want = _jax(jlax, "convert_element_type", x, dst)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst,shape", [
    (np.float32, np.uint32, (3,)), (np.float64, np.float32, (3,)), (np.float32, np.uint8, (3,)),
    (np.uint8, np.float32, (3, 4)), (np.int16, np.int64, (2, 4)), (np.int64, np.int16, (2,))])
def test_bitcast_convert_type_against_jax(jlax, backend, src, dst, shape):
    x = (np.arange(np.prod(shape)).reshape(shape) * 37 + 3).astype(src)
    got = backend(lambda v: lax.bitcast_convert_type(v, dst))(x)
    want = _jax(jlax, "bitcast_convert_type", x, dst)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_select_select_n_clamp_integer_pow_round_against_jax(jlax, backend):
    import jax.numpy as jnp

    p = np.array([True, False, True])
    a, b, c = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), np.array([7.0, 8.0, 9.0])
    which = np.array([2, 0, 1], np.int32)
    half = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, np.inf, np.nan])
    f = backend(lambda p, a, b, c, w, h: (
        lax.select(p, a, b), lax.select_n(w, a, b, c), lax.select_n(p, a, b),
        lax.clamp(2.0, a, 2.5), lax.integer_pow(a, 5), lax.integer_pow(a, -3),
        lax.integer_pow(a, 0), lax.round(h), lax.round(h, lax.RoundingMethod.TO_NEAREST_EVEN)))
    got = f(p, a, b, c, which, half)
    want = (jlax.select(p, a, b), jlax.select_n(which, a, b, c), jlax.select_n(p, a, b),
            jlax.clamp(2.0, a, 2.5), jlax.integer_pow(a, 5), jlax.integer_pow(a, -3),
            jlax.integer_pow(a, 0), jlax.round(half),
            jlax.round(half, jlax.RoundingMethod.TO_NEAREST_EVEN))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-15, equal_nan=True)
    ints = np.array([2, -3], np.int32)
    np.testing.assert_array_equal(backend(lambda v: lax.integer_pow(v, 7))(ints),
                                  np.asarray(jlax.integer_pow(jnp.asarray(ints), 7)))


def test_python_scalars_are_weak_and_arrays_strict():
    x32 = np.ones(2, np.float32)
    assert lax.add(x32, 2.0).dtype == np.float32
    assert lax.mul(np.ones(2, np.uint8), 3).dtype == np.uint8
    assert lax.add(np.ones((3, 1)), np.ones(4)).shape == (3, 4)
    with pytest.raises(TypeError, match="same dtypes, got float32, float64"):
        lax.add(x32, np.ones(2))
    with pytest.raises(TypeError, match="same dtypes, got int32, float64"):
        lax.mul(np.ones(2, np.int32), 2.5)
    with pytest.raises(TypeError, match=r"incompatible shapes for broadcasting: \(3,\), \(2,\)"):
        lax.sub(np.ones(3), np.ones(2))
    with pytest.raises(TypeError, match="lax.atan2 does not accept dtype int64"):
        lax.atan2(np.ones(2, np.int64), np.ones(2, np.int64))
    with pytest.raises(TypeError, match="lax.add does not accept dtype bool"):
        lax.add(np.array([True]), np.array([False]))
    with pytest.raises(OverflowError):
        lax.add(np.ones(2, np.uint8), 300)
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        rune.jit(lambda n: lax.add(np.ones(2, np.uint8), n))(300)  # a traced weak int
    with pytest.raises(TypeError, match="trailing axis of size 4"):
        lax.bitcast_convert_type(np.ones(3, np.uint8), np.float32)
    with pytest.raises(TypeError, match="bool"):
        lax.bitcast_convert_type(np.ones(3, bool), np.uint8)
    with pytest.raises(TypeError, match="needs a float operand"):
        lax.integer_pow(np.ones(2, np.int32), -1)
    with pytest.raises(TypeError, match="lax.eq requires arguments to have the same dtypes"):
        rune.jit(lambda a, b: lax.eq(a, b))(np.ones(2), np.ones(2, np.float32))


SMOOTH = ["exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos",
          "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "logistic",
          "erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i0e", "bessel_i1e", "square",
          "reciprocal", "abs", "neg"]


@pytest.mark.parametrize("name", SMOOTH)
def test_derivatives_of_smooth_operations(name):
    f = getattr(lax, name)
    rune.check_grads(lambda v: f(v), np.array([0.3, 0.55, 0.8]), modes=("fwd", "rev"))


@pytest.mark.slow
def test_gradients_against_jax(jlax):
    import jax

    x, y = np.array([0.7, 2.5, -1.3]), np.array([1.5, -0.4, 2.0])
    fns = {
        "pow": lambda a, b: lax.pow(lax.abs(a), b), "atan2": lax.atan2, "rem": lax.rem,
        "div": lax.div, "max": lax.max, "clamp": lambda a, b: lax.clamp(-1.0, a * b, 1.0),
        "integer_pow": lambda a, b: lax.integer_pow(a, 3) * b, "acosh": lambda a, b: lax.acosh(
            lax.add(lax.abs(a), 1.5)) * b,
        "round": lambda a, b: lax.round(a) * b, "select": lambda a, b: lax.select(a > 0, a, b),
    }
    jfns = {
        "pow": lambda a, b: jlax.pow(jlax.abs(a), b), "atan2": jlax.atan2, "rem": jlax.rem,
        "div": jlax.div, "max": jlax.max, "clamp": lambda a, b: jlax.clamp(-1.0, a * b, 1.0),
        "integer_pow": lambda a, b: jlax.integer_pow(a, 3) * b, "acosh": lambda a, b: jlax.acosh(
            jlax.abs(a) + 1.5) * b,
        "round": lambda a, b: jlax.round(a) * b, "select": lambda a, b: jlax.select(a > 0, a, b),
    }
    for name, f in fns.items():
        got = rune.jit(rune.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1)))(x, y)
        want = jax.grad(lambda a, b: jfns[name](a, b).sum(), argnums=(0, 1))(x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, err_msg=name)


def test_logistic_is_stable_and_its_gradient_finite():
    x = np.array([-1000.0, 0.0, 1000.0])
    g = rune.grad(lambda v: lax.logistic(v).sum())(x)
    np.testing.assert_allclose(g, [0.0, 0.25, 0.0], atol=1e-300)
    assert lax.logistic(np.float32(-200.0)).dtype == np.float32


def test_jvp_vmap_and_inside_a_scan_step(jlax):
    import jax

    x = np.array([[0.3, 1.2, -0.4], [2.0, -1.5, 0.7]])
    f = lambda v: lax.mul(lax.sin(v), lax.integer_pow(v, 2)) + lax.rem(v, 0.5)  # noqa: E731
    jf = lambda v: jlax.mul(jlax.sin(v), jlax.integer_pow(v, 2)) + jlax.rem(v, 0.5)  # noqa: E731
    out, tan = rune.jit(lambda v, t: rune.jvp(f, (v,), (t,)))(x, np.ones_like(x))
    wout, wtan = jax.jvp(jf, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(out, wout, rtol=1e-13)
    np.testing.assert_allclose(tan, wtan, rtol=1e-13)
    ints = np.array([[5, -7], [9, 3]], np.int32)
    np.testing.assert_array_equal(
        rune.jit(rune.vmap(lambda a: lax.div(a, np.int32(2)) + lax.clz(a)))(ints),
        np.asarray(jax.vmap(lambda a: jlax.div(a, np.int32(2)) + jlax.clz(a))(ints)))
    np.testing.assert_allclose(
        rune.vmap(lambda a, b: lax.atan2(a, b), in_axes=(0, None))(x, x[0]),
        np.arctan2(x, x[0]), rtol=1e-15)

    def step(c, row):
        c = lax.add(c, lax.select(row > 0.0, lax.exp(row), lax.neg(row)))
        return c, lax.convert_element_type(c, np.int32)

    def jstep(c, row):
        c = jlax.add(c, jlax.select(row > 0.0, jlax.exp(row), jlax.neg(row)))
        return c, jlax.convert_element_type(c, np.int32)

    got = rune.jit(lambda xs: rune.scan(step, np.zeros(3), xs))(x)
    want = jlax.scan(jstep, np.zeros(3), x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    np.testing.assert_array_equal(got[1], want[1])
    g = rune.grad(lambda xs: rune.scan(step, np.zeros(3), xs)[0].sum())(x)
    np.testing.assert_allclose(g, jax.grad(lambda xs: jlax.scan(jstep, np.zeros(3), xs)[0]
                                           .sum())(x), rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reduce_precision_against_jax(jlax, backend, dtype):
    """Rounding to nearest even at the mantissa, overflow to inf, underflow to 0, nan kept."""
    x = np.array([1 / 3, 2.5, np.nan, -np.inf, 1e-300, -1e-40, 1e39, -3e38, 65504.0, 65520.0,
                  1 + 2 ** -24, 1 + 3 * 2 ** -24, 6e-8, -0.0, 1e-310, 0.1])
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
    for e, m in [(8, 23), (5, 10), (8, 7), (11, 52), (5, 0), (2, 1)]:
        if e > np.finfo(dtype).iexp:
            continue
        with np.errstate(all="ignore"):
            got = backend(lambda v: lax.reduce_precision(v, e, m))(x)
        want = _jax(jlax, "reduce_precision", x, e, m)
        np.testing.assert_array_equal(got, want, err_msg=f"{e}, {m}")
        assert np.array_equal(np.signbit(got), np.signbit(want))
    assert rune.grad(lambda v: lax.reduce_precision(v * 3.0, 5, 10))(0.1) == 3.0


@pytest.mark.slow
def test_bessel_functions_across_their_two_forms_against_jax(jlax, backend):
    """The power series below |x| = 25 and the asymptotic expansion above, both signs, the
    edges (0, -0.0, inf, nan), and the derivatives (1/2 for i1e at 0) against JAX's."""
    import jax

    x = np.concatenate([np.linspace(-60.0, 60.0, 241), [24.999, 25.001, 1e5, 1e300, np.inf,
                                                        -np.inf, np.nan, -0.0, 1e-300]])
    f = backend(lambda v: (lax.bessel_i0e(v), lax.bessel_i1e(v)))
    for got, name in zip(f(x), ["bessel_i0e", "bessel_i1e"]):
        want = _jax(jlax, name, x)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want)), name
    at = np.array([-30.0, -2.0, 0.0, 0.5, 24.0, 26.0])
    for name in ["bessel_i0e", "bessel_i1e"]:
        got = rune.jit(rune.vmap(rune.grad(getattr(lax, name))))(at)
        np.testing.assert_allclose(got, jax.vmap(jax.grad(getattr(jlax, name)))(at),
                                   rtol=1e-13, atol=1e-16)


def test_vmap_of_every_operation_is_the_operation_of_its_rows():
    """Batched (a compiled vmap, one operand unbatched) = the eager result row by row."""
    x = np.stack([FLOATS, FLOATS[::-1], FLOATS * 0.5])
    i = np.stack([INTS, INTS[::-1]]).astype(np.int32)
    ops = [(UNARY_FLOAT, (x,), (0,)), (BINARY_FLOAT, (x, FLOATS_2), (0, None)),
           (UNARY_INT, (i,), (0,)), (BINARY_INT, (i, INTS_2.astype(np.int32)), (0, None))]
    with np.errstate(all="ignore"):
        for names, args, axes in ops:
            f = _all_of(names, len(args))
            got = rune.jit(rune.vmap(f, in_axes=axes))(*args)
            for row in range(args[0].shape[0]):
                want = f(*[a[row] if ax == 0 else a for a, ax in zip(args, axes)])
                for name in names:
                    np.testing.assert_allclose(got[name][row], want[name], rtol=1e-13,
                                               equal_nan=True, err_msg=name)


def test_select_wants_a_bool_predicate_of_the_cases_shape():
    with pytest.raises(TypeError, match="lax.select: pred must be a bool, got int64"):
        lax.select(np.array([1, 0]), np.ones(2), np.zeros(2))
    with pytest.raises(TypeError, match=r"lax.select: .* one shape .* \[\(2,\), \(3,\)\]"):
        lax.select(np.array([True, False]), np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="lax.select_n: which must be a bool \\(two cases\\)"):
        lax.select_n(np.array(True), np.ones(2), np.ones(2), np.ones(2))
