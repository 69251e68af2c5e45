"""rune_jit.numpy's rounding, inverse, base-2/10 and composed elementwise functions
(_src/numpy/ufuncs.py) against NumPy: every dtype, eagerly, compiled and through NumPy's own
names on traced values (np.floor(x) inside jit); bit for bit where NumPy's result is
exact; derivatives; vmap."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.numpy import ufuncs

DTYPES = [np.dtype(d) for d in ("float64", "float32", "float16", "int64", "int32", "int16",
                                "int8", "uint64", "uint32", "uint16", "uint8", "bool")]
BINARY = {"hypot", "copysign", "fmod", "nextafter", "logaddexp", "logaddexp2", "fmax", "fmin",
          "heaviside", "float_power"}
DOMAIN = {"arccosh": (1.0, 4.0), "arcsin": (-1.0, 1.0), "arccos": (-1.0, 1.0),
          "arctanh": (-0.99, 0.99), "log2": (0.01, 50.0), "log10": (0.01, 50.0)}
TOL = {np.float16: 1e-3, np.float32: 2e-6}


def _draw(rng, name, dtype, n=9):
    if dtype.kind == "f":
        lo, hi = DOMAIN.get(name, (-4.0, 4.0))
        return rng.uniform(lo, hi, n).astype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    x = rng.integers(-5, 6, n)
    return (np.abs(x) if dtype.kind == "u" else x).astype(dtype)


def _args(rng, name, dtype):
    args = [_draw(rng, name, dtype)]
    if name in BINARY:
        y = _draw(rng, name, dtype)
        if name == "fmod" and dtype.kind != "b":
            y = np.where(y == 0, 1, y).astype(dtype)
        args.append(y)
    return args


def _expected(name, args):
    try:
        with np.errstate(all="ignore"):
            return np.asarray(getattr(np, name)(*args))
    except TypeError:
        return TypeError


def _check(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        tol = TOL.get(want.dtype.type, 1e-13)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


RUNS = {
    "eager": lambda name: getattr(rnp, name),
    "jit": lambda name: rune.jit(getattr(rnp, name)),
    "numpy_name_in_jit": lambda name: rune.jit(lambda *a: getattr(np, name)(*a)),
}


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ufuncs.__all__)
def test_matches_numpy(name, dtype, run, rng):
    args = _args(rng, name, dtype)
    want = _expected(name, args)
    f = RUNS[run](name)
    if want is TypeError:
        with pytest.raises(TypeError):
            f(*args)
        return
    with np.errstate(all="ignore"):
        _check(f(*args), want)


@pytest.mark.parametrize("name", sorted(BINARY - {"float_power"}))
@pytest.mark.parametrize("number", [2, -2.5, True])
def test_python_numbers_are_weak(name, number):
    x = np.array([0.5, -1.25, 3.0], np.float32)
    for args in ((x, number), (number, x)):
        _check(rnp.__dict__[name](*args), _expected(name, list(args)))


LIBM = {"logaddexp", "hypot", "sinc", "cbrt"}  # glibc's (vector) functions in compiled code


def backend_name(backend) -> str:
    return "eager" if backend(abs) is abs else "jit"


EDGES = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.5, -2.5,
                  1.7976931348623157e308, 0.49999999999999994])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", ["nextafter", "copysign", "fmod", "heaviside", "fmax", "fmin",
                                  "logaddexp", "hypot"])
def test_binary_edges_bit_for_bit(name, dtype, backend):
    a, b = (v.astype(dtype) for v in np.meshgrid(EDGES, EDGES))
    with np.errstate(all="ignore"):
        got, want = backend(getattr(rnp, name))(a, b), getattr(np, name)(a, b)
    if name in LIBM and (dtype != np.float64 or backend_name(backend) == "jit"):
        np.testing.assert_allclose(got, want, rtol=TOL.get(dtype, 1e-15))  # libmvec's ulps
        return
    np.testing.assert_array_equal(got, want)
    if name in ("nextafter", "copysign"):  # NumPy leaves the sign of fmax(-0, 0) open
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint", "fix", "signbit", "isinf",
                                  "isposinf", "isneginf", "nan_to_num", "sinc", "degrees",
                                  "radians", "reciprocal", "cbrt"])
def test_unary_bit_for_bit(name, dtype, backend, rng):
    x = np.concatenate([EDGES, rng.uniform(-1e3, 1e3, 200)]).astype(dtype)
    with np.errstate(all="ignore"):
        got, want = backend(getattr(rnp, name))(x), getattr(np, name)(x)
    if name in LIBM and (dtype != np.float64 or backend_name(backend) == "jit"):
        np.testing.assert_allclose(got, want, rtol=TOL.get(dtype, 1e-15))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("decimals", [-3, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8,
                                   np.uint16, np.bool_])
def test_round_is_numpys(decimals, dtype, backend, rng):
    x = (rng.uniform(-300, 300, 500) if np.dtype(dtype).kind == "f" else
         rng.integers(0 if np.dtype(dtype).kind in "ub" else -120, 120, 500)).astype(dtype)
    if dtype == np.bool_ and decimals:  # NumPy cannot multiply bools by 10.0 in place
        with pytest.raises(TypeError):
            rnp.round(x, decimals)
        return
    for f in (lambda v: rnp.round(v, decimals), lambda v: np.round(v, decimals),
              lambda v: rnp.around(v, decimals=decimals)):
        got, want = backend(f)(x), np.round(x, decimals)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


SMOOTH = {  # where each is differentiable
    "arcsin": [0.3], "arccos": [-0.4], "arcsinh": [1.7], "arccosh": [2.2], "arctanh": [0.6],
    "cbrt": [2.5], "log2": [3.1], "log10": [0.7], "exp2": [1.3], "hypot": [1.5, -0.4],
    "copysign": [1.5, -0.4], "fmod": [5.3, -1.7], "logaddexp": [0.5, 2.0],
    "logaddexp2": [-1.0, 0.25], "fmax": [0.5, 2.0], "fmin": [0.5, 2.0],
    "float_power": [1.7, 2.2], "degrees": [0.3], "radians": [40.0], "sinc": [0.3],
    "floor": [0.3], "ceil": [0.3], "trunc": [-0.3], "rint": [0.3], "round": [0.37],
    "reciprocal": [0.7], "nan_to_num": [0.7], "heaviside": [0.4, 0.5], "real": [0.3],
    "i0": [1.3],
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_check_grads(name):
    args = [np.array([v, v * 0.5 + 0.1]) for v in SMOOTH[name]]
    rune.check_grads(getattr(rnp, name), *args, modes=("fwd", "rev"))


def test_rounding_and_ties_have_the_stated_derivatives():
    x = np.array([0.5, 1.0, 2.5])
    for f in (rnp.floor, rnp.ceil, rnp.rint, rnp.round, rnp.trunc):
        np.testing.assert_array_equal(rune.grad(lambda v, f=f: f(v).sum())(x), 0.0)
    # a tie of logaddexp and fmax splits as maximum does; nothing is NaN at infinities
    g = rune.grad(lambda a, b: rnp.logaddexp(a, b).sum(), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(g, 0.5)
    g = rune.grad(lambda a: rnp.logaddexp(a, np.inf).sum())(x)
    np.testing.assert_array_equal(g, 0.0)


def test_i0_and_its_derivative_i1(backend):
    import scipy.special as sc

    x = np.array([-700.0, -25.0, -3.0, 0.0, 0.5, 19.9, 20.1, 300.0])
    np.testing.assert_allclose(backend(rnp.i0)(x), np.i0(x), rtol=4e-15)
    g = backend(rune.grad(lambda v: rnp.i0(v).sum()))(x)
    np.testing.assert_allclose(g, sc.i1(x), rtol=1e-13)


@pytest.mark.parametrize("name", ["logaddexp", "hypot", "nextafter", "fmod", "copysign"])
def test_vmap_matches_a_loop(name, backend):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal(3) + 2.0
    f = getattr(rnp, name)
    got = backend(rune.vmap(f, in_axes=(0, None)))(a, b)
    # exact, but for ulps where the batch runs in vectors and each row alone does not:
    # a math function's vector and scalar variants may round differently
    ulps = 2 if name in ("logaddexp", "hypot") else 0
    np.testing.assert_array_max_ulp(got, np.stack([f(r, b) for r in a]), maxulp=ulps)
