"""The inverse trigonometric and hyperbolic functions of complex values: compiled
(backend/cpu/codegen/complex_inverse.py) and eager, against NumPy's, at every magnitude,
on the branch cuts (the sign of a zero part picks the side), at the special values;
their derivatives, and inside scan and vmap.

Errors are counted in ulps of each part relative to the larger part's magnitude, never
as last-bit equality: libm's functions differ between CPUs and builds."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

NAMES = ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh")
DTYPES = (np.complex64, np.complex128)
ULPS = 6  # measured: at most 3 on either dtype (x86-64, glibc 2.36); CPUs and libms differ


def _complex(re, im, dtype) -> np.ndarray:
    """re + i im exactly (`re + 1j * im` would make 1j * inf a NaN real part)."""
    z = np.empty(np.broadcast(re, im).shape, dtype)
    z.real, z.imag = re, im
    return z


def _random_points(dtype, n=4000, seed=0) -> np.ndarray:
    """Both parts of every magnitude the dtype holds (1e-300..1e300 for complex128) and
    of both signs, then points near ±1 and ±i, where the functions are steepest."""
    rng = np.random.default_rng(seed)
    top = np.log10(np.finfo(dtype).max) - 1
    mag = 10.0 ** rng.uniform(-top, top, (2, n)) * rng.choice([-1.0, 1.0], (2, n))
    near = rng.choice([-1.0, 1.0], (2, n)) * 10.0 ** rng.uniform(-17, 0.5, (2, n))
    unit = rng.choice([-1.0, 0.0, 1.0], (2, n))
    return np.concatenate([_complex(*mag, dtype), _complex(*(unit + near), dtype),
                           _complex(*rng.uniform(-3, 3, (2, n)), dtype)])


def _ulps(got, want) -> np.ndarray:
    """The larger part's error, in ulps of the larger part of NumPy's value."""
    part = np.finfo(want.dtype).dtype
    scale = np.maximum(np.maximum(np.abs(want.real), np.abs(want.imag)), np.finfo(part).tiny)
    err = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag))
    return err / (scale * np.finfo(part).eps)


def _assert_parts_match(got, want, where=""):
    """NaN where NumPy's is NaN, NumPy's infinities and signed zeros, and the finite
    values within ULPS."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=where)
        exact = np.isinf(w) | (w == 0)
        np.testing.assert_array_equal(g[exact], w[exact], err_msg=where)
        np.testing.assert_array_equal(np.signbit(g[exact]), np.signbit(w[exact]),
                                      err_msg=where)
    finite = np.isfinite(want.real) & np.isfinite(want.imag)
    with np.errstate(invalid="ignore"):
        err = _ulps(got[finite], want[finite])
    bad = ~(err <= ULPS)
    assert not bad.any(), (where, got[finite][bad][:5], want[finite][bad][:5], err[bad][:5])


def _numpy(name, z):
    with np.errstate(all="ignore"):
        return getattr(np, name)(z)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_values_match_numpy_at_every_magnitude(name, dtype, backend):
    z = _random_points(dtype)
    want = _numpy(name, z)
    got = backend(getattr(rnp, name))(z)
    finite = np.isfinite(want)
    assert np.isfinite(got[finite]).all()
    err = _ulps(got[finite], want[finite])
    assert err.max() <= ULPS, (z[finite][np.argmax(err)], err.max())


CUT = np.array([1.5, 3.0, 1e10, 1e300, 1.0, 1 + 2 ** -30, 0.5, 1e-300])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_branch_cuts_take_the_side_of_the_zeros_sign(name, dtype, backend):
    """On both axes, past ±1 and inside: +0.0 and -0.0 parts give NumPy's sides."""
    along = np.concatenate([CUT, -CUT])
    zeros = np.array([0.0, -0.0])
    a, b = (m.ravel() for m in np.meshgrid(along, zeros))
    with np.errstate(over="ignore"):
        z = np.concatenate([_complex(a, b, dtype), _complex(b, a, dtype)])
    _assert_parts_match(backend(getattr(rnp, name))(z), _numpy(name, z), name)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e-30, -1e30, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_special_values_are_numpys(name, dtype, backend):
    """Every pair of ±0, ±1, ±inf, NaN and ordinary parts: C99's Annex G values, as
    NumPy gives them."""
    a, b = (m.ravel() for m in np.meshgrid(SPECIAL, SPECIAL))
    z = _complex(a, b, dtype)
    _assert_parts_match(backend(getattr(rnp, name))(z), _numpy(name, z), name)


Z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 2.5 - 1.5j, -0.1 - 3.0j])


@pytest.mark.parametrize("name", NAMES)
def test_derivatives_compiled_are_the_interpreters(name):
    f = getattr(rnp, name)

    def real_of(z):
        w = f(z * (1 - 0.5j))
        return rnp.sum(rnp.real(w) * rnp.imag(w) + rnp.abs(w))

    cases = [(rune.grad(real_of), (Z,)), (rune.grad(f, holomorphic=True), (Z[1],)),
             (lambda z, t: rune.jvp(f, (z,), (t,)), (Z, np.full_like(Z, 0.5 - 2j)))]
    for g, args in cases:
        np.testing.assert_allclose(rune.jit(g)(*args), g(*args), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_inside_a_scan_step_and_under_vmap(name, backend):
    f = getattr(rnp, name)

    def step(c, x):
        w = f(c * 0.5 + x)
        return w, f(x) * c

    got_carry, got_ys = backend(lambda c, xs: rune.scan(step, c, xs))(Z[0], Z)
    c, ys = Z[0], []
    for x in Z:
        c, y = _numpy(name, c * 0.5 + x), _numpy(name, x) * c
        ys.append(y)
    np.testing.assert_allclose(got_carry, c, rtol=1e-13)
    np.testing.assert_allclose(got_ys, np.array(ys), rtol=1e-13)
    grid = np.add.outer(Z, 1j * Z.real)
    np.testing.assert_allclose(backend(rune.vmap(f))(grid), _numpy(name, grid), rtol=1e-14)
