"""Complex values through the primitives: values against NumPy, eager (the interpreter)
and compiled (pairs of reals, backend/cpu/codegen/complex_pairs.py), loops with complex carries,
and the bad inputs of issue 34."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp

Z = np.array([1 + 2j, 3 - 1j, 0j, -2 - 0.5j, 0.25 + 4j, -1e-3 + 1e-3j])
W = np.array([0.5 - 1j, -2 + 0.5j, 1 + 1j, 3j, -0.75 + 0j, 2 - 2j])

# name: f(m, z), m the NumPy-like module (rune_jit.numpy or numpy): one spelling for both
UNARY = {
    **{n: (lambda n: lambda m, z: getattr(m, n)(z))(n) for n in (
        "negative", "abs", "sign", "sqrt", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh",
        "real", "imag", "conj", "angle", "square", "isnan", "isfinite", "sum", "mean", "var",
        "std", "flip", "expm1", "exp2", "prod")},
    **{n: (lambda n: lambda m, z: getattr(m, n)(z + 0.5))(n) for n in (
        "log", "reciprocal", "log1p", "log2", "log10")},  # away from 0
    "norm": lambda m, z: m.linalg.norm(z), "cube": lambda m, z: z ** 3,
    "pad": lambda m, z: m.pad(z, 2), "matrix": lambda m, z: z.reshape(2, 3).T,
    "take": lambda m, z: z[np.array([4, 0, 0])], "slice": lambda m, z: z[1::2],
    "astype64": lambda m, z: m.asarray(z, np.complex64).astype(np.complex128),
    "prod_rows": lambda m, z: m.prod(z.reshape(2, 3), axis=1),
    "argsort": lambda m, z: m.argsort(z, kind="stable"),
}
# .at is a method of traced arrays (under jit; the interpreter's eagerly); NumPy's ufunc.at
AT = {"add": (lambda z: z.at[np.array([1, 1])].add(1j), lambda z: np.add.at(z, [1, 1], 1j)),
      "set": (lambda z: z.at[2].set(5 - 5j), lambda z: z.__setitem__(2, 5 - 5j))}


def _numpy_at(update, z):
    out = z.copy()
    update(out)
    return out


BINARY = {
    "add": (rnp.add, np.add), "sub": (rnp.subtract, np.subtract),
    "mul": (rnp.multiply, np.multiply), "div": (rnp.divide, np.divide),
    "pow": (rnp.power, np.power), "eq": (rnp.equal, np.equal),
    "ne": (rnp.not_equal, np.not_equal), "dot": (rnp.dot, np.dot),
    "vdot": (rnp.vdot, np.vdot), "outer": (rnp.outer, np.outer),
    "einsum": (lambda a, b: rnp.einsum("i,j->ij", a, b), lambda a, b: np.einsum("i,j->ij", a, b)),
    "where": (lambda a, b: rnp.where(rnp.abs(a) > 1, a, b),
              lambda a, b: np.where(np.abs(a) > 1, a, b)),
    "concatenate": (lambda a, b: rnp.concatenate([a, b]), lambda a, b: np.concatenate([a, b])),
    "matmul": (lambda a, b: a.reshape(2, 3) @ b.reshape(3, 2),
               lambda a, b: a.reshape(2, 3) @ b.reshape(3, 2)),
}


def _close(got, want, rtol=1e-13):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_numpy(name, backend):
    with np.errstate(all="ignore"):
        want = UNARY[name](np, Z)
    _close(backend(lambda z: UNARY[name](rnp, z))(Z), want)


@pytest.mark.parametrize("op", sorted(AT))
def test_functional_updates_match_numpy(op, backend):
    ours, theirs = AT[op]
    _close(backend(rune.jit(ours))(Z), _numpy_at(theirs, Z))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_match_numpy(name, backend):
    ours, theirs = BINARY[name]
    with np.errstate(all="ignore"):
        want = theirs(Z, W)
    _close(backend(ours)(Z, W), want, rtol=1e-12)


def test_complex64_stays_complex64(backend):
    z = Z.astype(np.complex64)
    got = backend(lambda z: rnp.exp(z) * z / (z + 1))(z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.exp(z) * z / (z + 1), rtol=2e-6)


def test_promotion_is_nep50():
    f32 = np.ones(2, np.float32)
    assert (rnp.asarray(f32) * 1j).dtype == np.complex64  # a Python complex is weak
    assert rnp.add(f32, np.complex128(1j)).dtype == np.complex128
    assert rnp.result_type(np.float32, np.complex64) == np.complex64
    assert rnp.iscomplexobj(rnp.asarray(f32) + 0j) and not rnp.iscomplexobj(f32)


# NumPy's results on the edge cases of division (Smith's algorithm, its order of
# operations), multiplication by infinities, and abs without overflow
EDGE = np.array([1e300 + 1e300j, 1e-300 + 1e-300j, np.inf + 0j, complex(0, np.inf),
                 complex(np.nan, 1), 0j, -0.0 + 0j, 1 + 0j, 3 - 4j, 1e-310 + 1e308j])


EDGE_OPS = {  # f(m, a, b), m rune_jit.numpy or numpy
    "div": lambda m, a, b: a / b, "rdiv": lambda m, a, b: b / a, "mul": lambda m, a, b: a * b,
    "eq": lambda m, a, b: a == b,
    **{n: (lambda n: lambda m, a, b: getattr(m, n)(a))(n) for n in (
        "abs", "exp", "sqrt", "sign", "reciprocal", "isfinite", "isinf", "isnan")},
}


@pytest.mark.parametrize("op", sorted(EDGE_OPS))
def test_edge_cases_match_numpy(op, backend):
    a, b = np.meshgrid(EDGE, EDGE[::-1])
    a, b = a.ravel(), b.ravel()
    if op == "mul":  # a product past the largest float: inf or nan as the CPU fuses it
        with np.errstate(all="ignore"):
            keep = np.abs(a) * np.abs(b) < 1e300
        a, b = a[keep], b[keep]
    with np.errstate(all="ignore"):
        want = np.asarray(EDGE_OPS[op](np, a, b))
        got = np.asarray(backend(lambda a, b: EDGE_OPS[op](rnp, rnp.asarray(a),
                                                            rnp.asarray(b)))(a, b))
    if want.dtype == bool:
        np.testing.assert_array_equal(got, want)
        return
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-14)


@pytest.mark.parametrize("name", ["exp", "sin", "cos", "sinh", "cosh", "tanh"])
def test_results_are_finite_wherever_numpys_are(name, backend):
    """e^x overflows past 709 while e^x cos y may not: scaled exponentials, as NumPy's."""
    z = np.array([710 + 1j, 710 - 1j, 0.1 + 711j, 0.1 - 711j, 1000 + 2j, 2 + 1000j,
                  1400 + 0.1j, -1400 + 3j, 0.5 + 1e-300j, 30 - 2j])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    got = np.asarray(backend(getattr(rnp, name))(z))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-13)


def test_abs_does_not_overflow(backend):
    got = backend(rnp.abs)(np.array([1e300 + 1e300j, 3e-320 + 4e-320j]))
    np.testing.assert_allclose(got, [np.sqrt(2) * 1e300, 5e-320], rtol=1e-14)


# ------------------------------------------------------------- NumPy's order


NAN = np.nan
# ties, NaNs in either part, equal real parts
ORDERED = np.array([1 + 2j, 1 + 1j, 2 - 5j, complex(2, NAN), complex(NAN, 1), 2 - 5j, 0j,
                    -1 + 9j, complex(NAN, NAN), complex(NAN, -3), 1 + 1j, -1 + 9j])
OTHER = np.array([1 + 1j, 2 + 0j, 2 - 5j, 2 + 0j, 3, complex(NAN, 0), complex(0, NAN),
                  -1 + 9j, 1j, complex(NAN, -3), 1 + 1j, -2 + 9j])


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)  # NaNs at the same places


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal",
                                  "maximum", "minimum"])
def test_comparisons_are_numpys_lexicographic_order(name, backend):
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(ORDERED, OTHER)
    _same(backend(getattr(rnp, name))(ORDERED, OTHER), want)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("nans", [True, False])
def test_extrema_are_numpys(name, axis, nans, backend):
    m = np.stack([ORDERED, OTHER, ORDERED[::-1]])
    m = m if nans else m[:, ~np.isnan(m).any(axis=0)]
    _same(backend(lambda x: getattr(rnp, name)(x, axis=axis))(m), getattr(np, name)(m, axis))


def test_sort_and_argsort_are_numpys(backend):
    _same(backend(rnp.sort)(ORDERED), np.sort(ORDERED))
    _same(backend(rnp.argsort)(ORDERED), np.argsort(ORDERED, kind="stable"))
    m = np.stack([ORDERED, OTHER])
    _same(backend(lambda x: rnp.sort(x, axis=0))(m), np.sort(m, axis=0))
    _same(backend(rnp.cumsum)(Z), np.cumsum(Z))


def test_clip_is_numpys(backend):
    _same(backend(lambda z: rnp.clip(z, 0, 1 + 1j))(ORDERED), np.clip(ORDERED, 0, 1 + 1j))


# ------------------------------------------------------------- loops


def _escape(c):
    def step(s):
        z, n = s
        return z * z + c, n + 1

    return rune.iterate(step, (rnp.zeros_like(c), np.int32(0)),
                        until=lambda s: (rnp.abs(s[0]) > 2.0) | (s[1] >= 64), max_steps=65)[1]


def _escape_numpy(c):
    n, z = np.zeros(c.shape, np.int32), np.zeros_like(c)
    alive = np.ones(c.shape, bool)
    for _ in range(64):
        alive &= np.abs(z) <= 2.0
        z = np.where(alive, z * z + c, z)
        n += alive
    return n


def test_mandelbrot_as_vmap_of_iterate(backend):
    x, y = np.meshgrid(np.linspace(-2, 1, 23), np.linspace(-1.5, 1.5, 19))
    c = (x + 1j * y).ravel()
    np.testing.assert_array_equal(backend(rune.vmap(_escape))(c), _escape_numpy(c))


def test_scan_with_complex_carry_and_ys(backend):
    def f(z0, xs):
        return rune.scan(lambda z, x: (z * (0.9 + 0.1j) + x, rnp.conj(z)), z0, xs)

    def ref(z0, xs):
        ys = []
        for x in xs:
            ys.append(np.conj(z0))
            z0 = z0 * (0.9 + 0.1j) + x
        return z0, np.array(ys)

    for got, want in zip(backend(f)(np.complex128(1 + 1j), W), ref(1 + 1j, W)):
        _close(got, want, rtol=1e-12)


def test_while_and_fori_loops_with_complex_carries(backend):
    rotate = np.exp(0.3j)
    f = backend(lambda z: rune.lax.fori_loop(0, 10, lambda i, z: z * rotate, z))
    g = backend(lambda z: rune.lax.while_loop(lambda z: rnp.real(z) > 0, lambda z: z * rotate, z))
    _close(f(np.complex128(2 + 0j)), 2 * rotate ** 10, rtol=1e-12)
    want = 2 + 0j
    while want.real > 0:
        want *= rotate
    _close(g(np.complex128(2 + 0j)), np.complex128(want), rtol=1e-12)


def test_cond_with_complex_operands(backend):
    f = backend(lambda p, z: rune.cond(p, lambda z: z * 1j, lambda z: rnp.conj(z), z))
    _close(f(np.bool_(True), Z), Z * 1j)
    _close(f(np.bool_(False), Z), np.conj(Z))


# ------------------------------------------------------------- properties


PARTS = st.floats(-3, 3, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(PARTS, PARTS), min_size=1, max_size=5),
       st.sampled_from(["mul", "div", "exp", "sin", "tanh", "sqrt", "log", "abs"]))
def test_elementwise_programs_match_numpy(parts, op):
    z = np.array([complex(a, b) for a, b in parts]) + 0.5  # log and div away from 0
    ops = {"mul": (lambda z: z * (z - 1j), lambda z: z * (z - 1j)),
           "div": (lambda z: (z + 2) / z, lambda z: (z + 2) / z),
           "abs": (lambda z: rnp.abs(z) * z, lambda z: np.abs(z) * z)}
    ours, theirs = ops[op] if op in ops else (getattr(rnp, op), getattr(np, op))
    with np.errstate(all="ignore"):
        want = theirs(z)
    finite = np.isfinite(want)
    got = np.asarray(rune.jit(ours)(z))
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------- bad input


def test_casting_complex_to_real_warns_and_keeps_the_real_part(backend):
    with pytest.warns(np.exceptions.ComplexWarning):
        got = backend(lambda z: rnp.asarray(z).astype(np.float64))(Z)
    np.testing.assert_array_equal(got, Z.real)


def test_iterate_until_must_be_bool():
    with pytest.raises(TypeError, match="bool"):
        rune.iterate(lambda z: z * 0.5, np.complex128(1j), until=lambda z: z * 0, max_steps=3)


def test_compiled_code_refuses_what_it_cannot_pair():
    """The scatter primitive that multiplies complex values (`.at[].multiply` is a loop
    over the updates instead: test_at_updates_of_complex_values_combine_in_order)."""
    from rune_jit._src.ops import gather as gt

    idx = np.array([0, 2])
    with pytest.raises(NotImplementedError, match="scatter with op 'mul' of complex values"):
        rune.jit(lambda z: gt.scatter(z, [idx], z[:2], "mul"))(Z)


@pytest.mark.parametrize("op, ufunc", [("multiply", np.multiply), ("max", np.maximum),
                                       ("min", np.minimum)])
def test_at_updates_of_complex_values_combine_in_order(op, ufunc, backend):
    """As NumPy's ufunc.at: repeated positions one after another, NumPy's product and
    its maximum of two (its order, the first NaN wins); out of bounds, the modes'."""
    z = np.array([1 + 2j, 3 - 1j, 0j, -2 - 0.5j, complex(np.nan, 1), 0.25 + 4j])
    idx, u = np.array([1, 1, 3, 0, 1]), np.array([2j, 1 + 1j, -1, 0.5 + 0.5j, 3 - 2j])
    want = z.copy()
    ufunc.at(want, idx, u)
    got = backend(rune.jit(lambda z, u: getattr(z.at[idx], op)(u)))(z, u)
    np.testing.assert_allclose(got, want, rtol=8 * np.finfo(np.float64).eps)  # (FMAs)
    bad = np.array([1, 9])
    dropped = backend(rune.jit(lambda z: getattr(z.at[bad], op)(2j, mode="drop")))(z)
    want = z.copy()
    ufunc.at(want, bad[:1], 2j)
    np.testing.assert_allclose(dropped, want, rtol=8 * np.finfo(np.float64).eps)
    with pytest.raises(IndexError):
        backend(rune.jit(lambda z: getattr(z.at[bad], op)(2j)))(z)
    f = rune.jit(lambda u: rnp.sum(rnp.abs(getattr(rnp.asarray(z[:4]).at[idx], op)(u)) ** 2))
    np.testing.assert_allclose(backend(rune.grad(f))(u), rune.grad(f)(u), rtol=1e-12)


NO_COMPLEX_FORM = {  # (sinc, round, median, cov, nanstd: tests/numpy_api/test_complex_functions.py)
    "erf": rune.scipy.special.erf, "deg2rad": rnp.deg2rad, "signbit": rnp.signbit,
    "isposinf": rnp.isposinf, "logaddexp": lambda z: rnp.logaddexp(z, z),
    "heaviside": lambda z: rnp.heaviside(z, 0.5), "cbrt": rnp.cbrt,
    "arctan2": lambda z: rnp.arctan2(z, z),
}


@pytest.mark.parametrize("name", sorted(NO_COMPLEX_FORM))
def test_functions_without_complex_forms_refuse(name, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: an error, not a dropped part
        with pytest.raises(TypeError, match=r"not (take|accept) complex"):
            backend(NO_COMPLEX_FORM[name])(np.eye(2) * (1 + 1j))


def test_isinf_of_complex_values_is_numpys(backend):
    z = np.array([complex(np.inf, 0), complex(0, -np.inf), complex(np.nan, 1), 1j])
    _close(backend(rnp.isinf)(z), np.isinf(z))


# ------------------------------------------------------------- random


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_normal_is_jaxs_construction(dtype, backend):
    """JAX's: the parts are the normals of the two keys of split(key), over sqrt(2)."""
    key = rune.random.PRNGKey(3)
    k_re, k_im = rune.random.split(key)
    part = np.dtype(dtype).type(0).real.dtype
    want = ((rune.random.normal(k_re, (1000,), part) + 1j * rune.random.normal(
        k_im, (1000,), part)) / np.sqrt(2)).astype(dtype)
    got = backend(lambda k: rune.random.normal(k, (1000,), dtype))(key)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(part).eps)
    assert abs(np.var(got.real) - 0.5) < 0.06 and abs(np.var(got.imag) - 0.5) < 0.06


def test_casting_complex_to_bool_is_nonzero_without_a_warning(backend):
    z = np.array([1j, 0j, 2 + 0j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = backend(lambda z: rnp.asarray(z).astype(bool))(z)
    np.testing.assert_array_equal(got, z.astype(bool))


def test_vmap_of_a_scan_with_complex_carries(backend):
    def one(z0):
        return rune.scan(lambda z, x: (z * x + 1j, rnp.abs(z)), z0, W)

    zs = Z[:4]
    got = backend(rune.vmap(one))(zs)
    for k, z0 in enumerate(zs):
        want_c, want_ys = z0, []
        for x in W:
            want_ys.append(abs(want_c))
            want_c = want_c * x + 1j
        _close(np.asarray(got[0])[k], np.complex128(want_c), rtol=1e-12)
        _close(np.asarray(got[1])[k], np.array(want_ys), rtol=1e-12)


@pytest.mark.parametrize("n", [3, 5, 17, -4])
def test_integer_powers_are_numpys_products(n, backend):
    """A constant integer exponent under 100 multiplies, in NumPy's order."""
    np.testing.assert_array_equal(backend(lambda z: z ** n)(Z[Z != 0]), Z[Z != 0] ** n)


def test_a_complex_number_of_an_array_and_a_zero_scalar_moves_as_one_array():
    """Regression (found by the FFT's tests): reverse mode of real(z.T) builds complex(ct,
    0) with a 0-d zero; compiled, its imaginary part stayed 0-d and its transpose failed
    ("(1, 0) is not a permutation of the axes of float64[]")."""
    z, w = np.ones((2, 3)) * (1 + 2j), np.arange(6.0).reshape(3, 2)
    g = rune.jit(rune.grad(lambda z: rnp.sum(rnp.real(z.T) * w)))(z)
    np.testing.assert_array_equal(g, w.T.astype(complex))


def test_complex_arguments_and_results_cross_the_boundary_as_numpys_memory():
    """Compiled code takes complex arrays as their memory (views) and gives results the
    same way: strided, Fortran-ordered and converted arguments, results that own their
    memory apart from the arguments', float16 parts widened as NumPy's complex64."""
    z = np.arange(12).reshape(3, 4) * (1 - 2j)
    f = rune.jit(lambda a, b: (a * b + 1, a))
    for a in (z, z[:, ::2].T, np.asfortranarray(z), z.astype(np.complex64)):
        got, same = f(a, 0.5j)
        np.testing.assert_array_equal(got, a * 0.5j + 1)
        same[...] = 0
        assert np.any(a != 0)
    h = np.array([1.5, -2.0], np.float16)
    got = rune.jit(lambda x, y: rnp.real(x) + 1j * y)(h, h)
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got, h.astype(np.float32) * (1 + 1j))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cumulative_products_are_numpys_sequential_products(dtype, backend):
    """A scan carrying the running product's parts when compiled: NumPy's sequential
    products (to a few ulps: a CPU's fused multiply-adds round once), its infinities and
    NaNs."""
    rng = np.random.default_rng(5)
    z = (rng.normal(size=(4, 5)) + 1j * rng.normal(size=(4, 5))).astype(dtype)
    z[1, 2], z[2, 0] = np.inf + 1j, complex(0.0, np.inf)
    with np.errstate(invalid="ignore"):
        for axis in (0, 1, None):
            want = np.cumprod(z, axis=axis)
            np.testing.assert_allclose(backend(lambda z: rnp.cumprod(z, axis=axis))(z), want,
                                       rtol=8 * np.finfo(dtype).eps)
    z = (rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))) / 2
    f = lambda z: rnp.sum(rnp.abs(rnp.cumprod(z, axis=1)) ** 2 + rnp.real(rnp.cumprod(z[::-1], 0)))
    np.testing.assert_allclose(backend(rune.grad(f))(z.astype(np.complex128)),
                               rune.grad(f)(z.astype(np.complex128)), rtol=1e-12)
    rune.check_grads(f, z.astype(np.complex128))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_of_complex_values_is_numpys(side, backend):
    """In NumPy's sort order (npysort's: lexicographic, a NaN part after the numbers);
    compiled, it was a TypeError (lt of complex values)."""
    rng = np.random.default_rng(7)
    nans = [complex(np.nan, 0), complex(1, np.nan), complex(np.nan, np.nan), complex(0, np.nan)]
    a = np.sort(np.concatenate([rng.integers(-2, 3, 20) + 1j * rng.integers(-2, 3, 20), nans]))
    v = np.concatenate([rng.integers(-3, 4, 40) + 1j * rng.integers(-3, 4, 40), nans,
                        [complex(2, np.nan), complex(np.nan, 5)]])
    got = backend(lambda a, v: rnp.searchsorted(a, v, side=side))(a, v)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("ufunc", ["maximum", "minimum"])
def test_running_extrema_of_complex_values_are_numpys(ufunc, backend):
    """NumPy's maximum (minimum) of two, accumulated: its order, the first NaN wins
    (compiled, a cumulative max of complex values had no form)."""
    rng = np.random.default_rng(8)
    z = (rng.integers(-2, 3, (4, 6)) + 1j * rng.integers(-2, 3, (4, 6))).astype(complex)
    z[1, 3], z[2, 1] = complex(np.nan, 1), complex(0, np.nan)
    for axis in (0, 1):
        got = backend(lambda z: getattr(rnp, ufunc).accumulate(z, axis=axis))(z)
        np.testing.assert_array_equal(got, getattr(np, ufunc).accumulate(z, axis=axis))
    f = lambda z: rnp.sum(rnp.abs(rnp.maximum.accumulate(z, axis=1)) ** 2)
    w = z[[0, 3]]
    np.testing.assert_allclose(backend(rune.grad(f))(w), rune.grad(f)(w), rtol=1e-12)


def test_widening_a_complex_value_keeps_its_imaginary_part(backend):
    """A regression: the interpreter's convert of complex64 to complex128 kept only the
    real part (eager float_power of complex64 values went wrong through it)."""
    z = np.array([1 + 2j, -3.5 - 0.25j], np.complex64)
    for f in (lambda z: rnp.asarray(z, np.complex128), lambda z: z.astype(np.complex128),
              lambda z: z * np.complex128(1)):
        got = backend(rune.jit(f))(z)
        assert got.dtype == np.complex128
        np.testing.assert_array_equal(got, z.astype(np.complex128))
