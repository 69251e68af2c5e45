"""The NumPy functions that once refused complex values, and the complex-only names
(sort_complex, isreal, iscomplex, real_if_close), against NumPy on complex64 and
complex128 (NaN and infinite parts included), eagerly and compiled; gradients against
JAX where jax.numpy differentiates the function on complex values, else check_grads;
and under vmap."""

import warnings

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

DTYPES = [np.complex64, np.complex128]


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("jax_enable_x64", True)


def _values(dtype, shape=(3, 6), seed=0, specials=True):
    """Complex values of `dtype`, with NaN and infinite parts in the first row."""
    rng = np.random.default_rng(seed)
    z = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    if specials:
        z[0, :4] = [complex(np.nan, 1), complex(1, np.nan), complex(np.inf, -2),
                    complex(0.5, -np.inf)]
    return z


def _close(got, want, dtype, ulps=8):
    """Equal dtypes, values within `ulps` of the parts' epsilon (relative), NaNs where
    NumPy's are (part by part)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    eps = np.finfo(np.dtype(dtype)).eps
    np.testing.assert_allclose(got, want, rtol=ulps * eps, atol=ulps * eps)
    if got.dtype.kind == "c":
        np.testing.assert_array_equal(np.isnan(got.real), np.isnan(want.real))
        np.testing.assert_array_equal(np.isnan(got.imag), np.isnan(want.imag))


def _numpy(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


def _ours(backend, f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return backend(f)(*args)


# name -> (the function of one complex array, of rnp or np as `m`)
FUNCTIONS = {
    "round": lambda m, z: m.round(z),
    "round_2": lambda m, z: m.round(z, 2),
    "round_-1": lambda m, z: m.around(z, -1),
    "rint": lambda m, z: m.rint(z),
    "sinc": lambda m, z: m.sinc(z),
    "float_power": lambda m, z: m.float_power(z, 2.5),
    "float_power_of": lambda m, z: m.float_power(1.5, z),
    "median": lambda m, z: m.median(z, axis=1),
    "median_even": lambda m, z: m.median(z[:, 1:], axis=1),
    "median_all": lambda m, z: m.median(z[1:]),
    "nanmedian": lambda m, z: m.nanmedian(z, axis=1),
    "nanmedian_odd": lambda m, z: m.nanmedian(z[:, 1:], axis=1),
    "nanvar": lambda m, z: m.nanvar(z, axis=1),
    "nanvar_ddof": lambda m, z: m.nanvar(z, axis=0, ddof=1),
    "nanstd": lambda m, z: m.nanstd(z, axis=1),
    "nanstd_all": lambda m, z: m.nanstd(z),
    "nanmax": lambda m, z: m.nanmax(z, axis=1),
    "nanmin": lambda m, z: m.nanmin(z, axis=1),
    "nanmax_all": lambda m, z: m.nanmax(z),
    "nanmin_keepdims": lambda m, z: m.nanmin(z, axis=0, keepdims=True),
    "nanargmax": lambda m, z: m.nanargmax(z, axis=1),
    "nanargmin": lambda m, z: m.nanargmin(z, axis=1),
    "cov": lambda m, z: m.cov(z[1:]),
    "cov_y": lambda m, z: m.cov(z[1], z[2], bias=True),
    "cov_aweights": lambda m, z: m.cov(z[1:].T, rowvar=False, aweights=np.arange(1.0, 7)),
    "corrcoef": lambda m, z: m.corrcoef(z[1:]),
    "sort_complex": lambda m, z: m.sort_complex(z),
    "isreal": lambda m, z: m.isreal(z),
    "iscomplex": lambda m, z: m.iscomplex(z),
}


# compiled, these give nan + nanj where a part is infinite (pow, sin: docs/semantics.md)
NO_INFINITE_PARTS = {"float_power", "float_power_of", "sinc"}


def _input(name, dtype, seed=0):
    z = _values(dtype, seed=seed)
    z[2, 3] = z[2, 3].real  # a real value among complex ones (isreal, round)
    if name in NO_INFINITE_PARTS:
        z[0, 2:4] = [complex(3, -2), complex(0.5, -1)]  # (the NaNs stay)
    return z


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_dtypes_are_numpys(name, dtype, backend):
    z = _input(name, dtype)
    f = FUNCTIONS[name]
    _close(_ours(backend, lambda z: f(rnp, z), z), _numpy(f, np, z), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_row_of_nans_is_numpys(dtype, backend):
    """median: the row's NaN (its last value sorted); nanmedian: nan + 0j, as NumPy's
    masked-array path; nanmax: the row's first value; nanargmax: -1 under a trace."""
    z = np.array([[complex(np.nan, 1), complex(2, np.nan), complex(np.nan, np.nan)],
                  [1 + 1j, 2 - 1j, complex(np.nan, 0)]], dtype)
    for name in ("median", "nanmedian", "nanmax", "nanmin"):
        f = FUNCTIONS[name]
        _close(_ours(backend, lambda z: f(rnp, z), z), _numpy(f, np, z), dtype)
    got = rune.jit(lambda z: rnp.nanargmax(z, axis=1))(z)
    np.testing.assert_array_equal(got, [-1, 1])
    with pytest.raises(ValueError, match="All-NaN|all-NaN"):
        rnp.nanargmax(z[0])


def test_empty_median_is_nan_nan():
    _close(rnp.median(np.zeros((2, 0), np.complex64), axis=1),
           _numpy(lambda z: np.median(z, axis=1), np.zeros((2, 0), np.complex64)),
           np.complex64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_sort_puts_nan_parts_where_numpy_does(dtype):
    """npysort's order: numbers, then NaN imaginary parts (by real part), then NaN real
    parts (by imaginary part); compiled, a NaN imaginary part once sat among the numbers."""
    rng = np.random.default_rng(3)
    parts = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, -1.0])
    for _ in range(20):
        z = (rng.choice(parts, 12) + 0j).astype(dtype)
        z.imag = rng.choice(parts, 12)
        got = rune.jit(rnp.sort)(z)
        np.testing.assert_array_equal(got.view(got.real.dtype), np.sort(z).view(got.real.dtype))
        np.testing.assert_array_equal(rune.jit(rnp.argsort)(z), np.argsort(z, kind="stable"))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.int32, np.float16,
                                   np.float32, np.float64, np.bool_])
def test_sort_complex_of_real_dtypes(dtype, backend):
    x = np.array([3, 1, 0, 2]).astype(dtype)
    want = np.sort_complex(x)
    got = backend(rnp.sort_complex)(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_isreal_iscomplex_of_real_values_and_scalars(backend):
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(backend(rnp.isreal)(x), [True, True])
    np.testing.assert_array_equal(backend(rnp.iscomplex)(x), [False, False])
    assert bool(rnp.isreal(1 + 0j)) and not bool(rnp.iscomplex(1 + 0j)) and rnp.iscomplex(1j)


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_if_close_is_numpys_outside_a_trace(dtype):
    eps = np.finfo(dtype).eps
    for z in (np.array([2.1 + 50 * eps * 1j, 5.0], dtype), np.array([2.1 + 200 * eps * 1j], dtype)):
        for tol in (100, 1000, 1e-3):
            want = np.real_if_close(z, tol)
            got = rnp.real_if_close(z, tol)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_real_if_close_under_a_trace_real_values_pass_complex_refuse():
    np.testing.assert_array_equal(rune.jit(rnp.real_if_close)(np.ones(2)), np.ones(2))
    with pytest.raises(TypeError, match="depends on the values"):
        rune.jit(rnp.real_if_close)(np.ones(2) + 0j)
    with pytest.raises(TypeError, match="depends on the values"):
        rune.grad(lambda z: rnp.real(rnp.real_if_close(z)).sum())(np.ones(2) + 0j)


def test_functions_numpy_refuses_keep_refusing(backend):
    z = np.eye(2) * (1 + 1j)
    for f in (rnp.deg2rad, rnp.signbit, rnp.isposinf, rnp.cbrt, lambda z: rnp.arctan2(z, z),
              lambda z: rnp.logaddexp(z, z), lambda z: rnp.heaviside(z, 0.5)):
        with pytest.raises(TypeError, match="not (take|accept) complex"):
            backend(f)(z)


# ------------------------------------------------------------- derivatives


def _loss(m, f):
    """A real function of a complex result (a real one: its square)."""
    def loss(z):
        y = f(m, z)
        if np.dtype(y.dtype).kind == "c":
            return m.sum(m.abs(y) ** 2 + m.real(y) * m.imag(y))
        return m.sum(y * y)
    return loss


# differentiable on complex values in jax.numpy too: rune.grad equals jax.grad
WITH_JAX = ["sinc", "float_power", "float_power_of", "cov", "cov_y", "cov_aweights",
            "corrcoef", "nanvar", "nanstd", "nanstd_all", "sort_complex", "round",
            "round_2", "rint"]
# jax.numpy refuses them on complex values (median: "poorly defined"), or gives zero
# (nanmax): check_grads (finite differences) instead
CHECKED = ["median", "median_even", "median_all", "nanmedian", "nanmedian_odd", "nanmax",
           "nanmin", "nanmax_all", "nanmin_keepdims", "nanvar_ddof"]


@pytest.mark.slow  # JAX's side of the comparison is most of its time
@pytest.mark.parametrize("name", WITH_JAX)
def test_gradients_are_jaxs(name, backend):
    z = _values(np.complex128, specials=False) / 2
    z[2, 3] = 0.0  # sinc at 0
    want = jax.grad(_loss(jnp, FUNCTIONS[name]))(z)
    got = backend(rune.grad(_loss(rnp, FUNCTIONS[name])))(z)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", CHECKED)
def test_gradients_pass_check_grads(name):
    z = _values(np.complex128, specials=False)
    z[0, 2] = complex(np.nan, 0.0)  # a NaN the nan* forms skip
    f = _loss(rnp, FUNCTIONS[name])
    if not name.startswith("nan"):
        z = z[1:]
    rune.check_grads(f, z)


# ------------------------------------------------------------- vmap


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_is_the_loop(name):
    zs = np.stack([_input(name, np.complex128, seed=s) for s in range(3)])
    f = FUNCTIONS[name]
    want = np.stack([_numpy(f, np, z) for z in zs])
    got = _ours(lambda g: rune.jit(rune.vmap(g)), lambda z: f(rnp, z), zs)
    _close(got, want, np.complex128)
