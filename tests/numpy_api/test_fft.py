"""rune_jit.numpy.fft against numpy.fft (values, dtypes, errors), eager, interpreted and
jitted; its derivatives against JAX where installed and against finite differences
(check_grads along real and imaginary directions); under vmap and inside scan and
iterate steps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 5, 4))
Z = X + 1j * RNG.normal(size=(3, 5, 4))
NORMS = (None, "backward", "ortho", "forward")
ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
SEVERAL = ("fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2")
REAL_INPUT = ("rfft", "ihfft", "rfftn", "rfft2")


@pytest.fixture(params=["eager", "interpret", "jit"])
def run(request, monkeypatch):
    """f as the user meets it: eager (NumPy), the interpreter, compiled."""
    if request.param == "eager":
        return lambda f: f
    if request.param == "interpret":
        monkeypatch.setattr(rune.config, "backend", "interpret")
    return rune.jit


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _close(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                   want.dtype, want.shape)
    # float16 results are float32's rounded: an ulp of float16 where float32's differ
    tol = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5,
           np.dtype(np.complex64): 2e-5}.get(want.dtype, 1e-12)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("norm", NORMS)
def test_one_axis_transforms_are_numpys(name, norm, run):
    a = X if name in REAL_INPUT else Z
    for kw in (dict(), dict(n=7, axis=1), dict(n=3, axis=0), dict(axis=-2), dict(n=1)):
        want = getattr(np.fft, name)(a, norm=norm, **kw)
        _close(run(lambda a: getattr(rnp.fft, name)(a, norm=norm, **kw))(a), want)


@pytest.mark.parametrize("name", SEVERAL)
def test_several_axes_are_numpys(name, run):
    a = X if name in REAL_INPUT else Z
    for kw in (dict(), dict(axes=(0, 2)), dict(s=(4, 6), axes=(1, 0)), dict(norm="ortho")):
        if name.endswith("2") and "axes" in kw and len(kw.get("s", (0, 0))) != 2:
            continue
        want = getattr(np.fft, name)(a, **kw)
        _close(run(lambda a: getattr(rnp.fft, name)(a, **kw))(a), want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8", "bool",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_dtypes_are_numpys(name, dtype, run):
    a = (np.abs(Z) * 3).astype(dtype) if np.dtype(dtype).kind != "c" else Z.astype(dtype)
    try:
        want = getattr(np.fft, name)(a)
    except TypeError:  # rfft of complex
        with pytest.raises(TypeError, match="rfft"):
            run(lambda a: getattr(rnp.fft, name)(a))(a)
        return
    _close(run(lambda a: getattr(rnp.fft, name)(a))(a), want)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), data=st.data())
def test_generated_transforms_are_numpys(shape, data):
    """Any length (primes, odd, even), axis, n and norm, every kind, compiled."""
    name = data.draw(st.sampled_from(ONE_AXIS))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.one_of(st.none(), st.integers(1, 12)))
    norm = data.draw(st.sampled_from(NORMS))
    rng = np.random.default_rng(len(shape) * 100 + sum(shape))
    a = rng.normal(size=shape)
    a = a if name in REAL_INPUT else a + 1j * rng.normal(size=shape)
    if n is None and name in ("irfft", "hfft") and shape[axis] == 1:
        n = 2  # NumPy's default length 2 * (1 - 1) is an error
    want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
    _close(rune.jit(lambda a: getattr(rnp.fft, name)(a, n=n, axis=axis, norm=norm))(a), want)


def test_frequencies_and_shifts_are_numpys(run):
    for n, d in ((8, 0.5), (7, 1.0), (1, 3.0)):
        _close(run(lambda: rnp.fft.fftfreq(n, d))(), np.fft.fftfreq(n, d))
        _close(run(lambda: rnp.fft.rfftfreq(n, d))(), np.fft.rfftfreq(n, d))
    for axes in (None, 0, (1, 2), -1):
        _close(run(lambda a: rnp.fft.fftshift(a, axes))(X), np.fft.fftshift(X, axes))
        _close(run(lambda a: rnp.fft.ifftshift(a, axes))(X), np.fft.ifftshift(X, axes))
    traced = rune.jit(lambda d: rnp.fft.fftfreq(6, d))(np.float64(0.25))
    _close(traced, np.fft.fftfreq(6, 0.25))
    assert rnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("bad, error, match, numpys", [
    (lambda m, a: m.fft.fft(a, n=0), ValueError, r"Invalid number of FFT data points \(0\)",
     ValueError),
    (lambda m, a: m.fft.irfft(a, n=-2), ValueError, "Invalid number of FFT data points",
     ValueError),
    # NumPy reads the axis's length first: IndexError, which AxisError is
    (lambda m, a: m.fft.fft(a, axis=3), np.exceptions.AxisError, "axis 3 is out of bounds",
     IndexError),
    (lambda m, a: m.fft.fftn(a, s=(2, 2), axes=(0,)), ValueError, "different lengths",
     ValueError),
    (lambda m, a: m.fft.fft(a, norm="both"), ValueError, "Invalid norm value both", ValueError),
    (lambda m, a: m.fft.rfft(a), TypeError, "rfft.*complex128", TypeError),
    (lambda m, a: m.fft.fft(a[0, 0, 0]), IndexError, "0-d array", IndexError),
])
def test_bad_input_is_numpys_error(bad, error, match, numpys, run):
    with pytest.raises(error, match=match):
        run(lambda a: bad(rnp, a))(Z)
    with pytest.raises(numpys):
        bad(np, Z)


def test_a_traced_length_is_refused_by_name():
    """n fixes the result's shape, so it is static (as in JAX, whose message differs)."""
    with pytest.raises(TypeError, match="irfft: the length n must be static"):
        rune.jit(rnp.fft.irfft)(Z[0], 6)


# ------------------------------------------------------------- derivatives

# f(m, a) with m rune_jit.numpy or jax.numpy: real-valued functions of the transforms
REAL_OF = {
    "fft": lambda m, z: m.sum(m.abs(m.fft.fft(z, n=7, norm="ortho")) ** 2 * m.arange(7)),
    "ifft_axis0": lambda m, z: m.sum(m.real(m.fft.ifft(z, axis=0)) * m.imag(m.fft.ifft(z, axis=0))),
    "irfft_even": lambda m, z: m.sum(m.sin(m.fft.irfft(z))),
    "irfft_odd": lambda m, z: m.sum(m.sin(m.fft.irfft(z, n=9, norm="forward"))),
    "hfft": lambda m, z: m.sum(m.fft.hfft(z, n=8) ** 2),
    "fft2": lambda m, z: m.sum(m.real(m.fft.fft2(z)) * m.imag(m.fft.ifft2(z * z))),
    "irfftn": lambda m, z: m.sum(m.cos(m.fft.irfftn(z, s=(4, 6)))),
}
REAL_INPUT_OF = {
    "rfft": lambda m, x: m.sum(m.abs(m.fft.rfft(x, n=5)) ** 3),
    "rfft2": lambda m, x: m.sum(m.abs(m.fft.rfft2(x)) ** 2 * m.cos(m.arange(3))),
    "ihfft": lambda m, x: m.sum(m.imag(m.fft.ihfft(x)) * m.real(m.fft.ihfft(x))),
}
Z2, X2 = Z[0], X[0]


def _cases():
    return [(k, f, Z2) for k, f in REAL_OF.items()] + [(k, f, X2) for k, f in
                                                        REAL_INPUT_OF.items()]


@pytest.mark.parametrize("name, f, a", _cases(), ids=[c[0] for c in _cases()])
def test_gradients_are_jaxs(name, f, a, jax):
    # JAX's side jitted: one XLA compile each rather than one per operation (seconds)
    want = jax.jit(jax.grad(lambda a: f(jax.numpy, a)))(a)
    g = rune.grad(lambda a: f(rnp, a))
    np.testing.assert_allclose(g(a), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rune.jit(g)(a), want, rtol=1e-10, atol=1e-10)
    batch = np.stack([a, 0.5 * a])
    np.testing.assert_allclose(rune.jit(rune.vmap(g))(batch),
                               jax.jit(jax.vmap(jax.grad(lambda a: f(jax.numpy, a))))(batch),
                               rtol=1e-10, atol=1e-10)
    t = (RNG.normal(size=a.shape) + (1j * RNG.normal(size=a.shape) if a.dtype.kind == "c"
                                     else 0)).astype(a.dtype)
    _, got = rune.jvp(lambda a: f(rnp, a), (a,), (t,))
    _, tangent = jax.jit(lambda a, t: jax.jvp(lambda a: f(jax.numpy, a), (a,), (t,)))(a, t)
    np.testing.assert_allclose(got, tangent, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name, f, a", _cases(), ids=[c[0] for c in _cases()])
def test_gradients_are_finite_differences(name, f, a):
    rune.check_grads(lambda a: f(rnp, a), a)
    rune.check_grads(rune.jit(lambda a: f(rnp, a)), a)


def test_holomorphic_transform_has_the_dft_matrix_as_jacobian():
    n = Z2.shape[-1]
    dft = np.fft.fft(np.eye(n), axis=0)
    jac = rune.jacfwd(rnp.fft.fft, holomorphic=True)(Z2[0])
    np.testing.assert_allclose(jac, dft, atol=1e-12)
    jac = rune.jacrev(rnp.fft.ifft, holomorphic=True)(Z2[0])
    np.testing.assert_allclose(jac, np.conj(dft) / n, atol=1e-12)


# ------------------------------------------------------------- in loops

def _split_step(m, scan, u0, steps=6):
    k = 2 * np.pi * np.fft.fftfreq(u0.shape[-1], 0.3)
    linear = np.exp(-0.5j * k ** 2 * 0.01)

    def step(u, _):
        u = m.fft.ifft(linear * m.fft.fft(u))
        u = u * m.exp(0.01j * m.abs(u) ** 2)
        return u, m.sum(m.abs(m.fft.rfft(m.real(u))))

    u, ys = scan(step, u0, None, length=steps)
    return m.sum(m.abs(u) ** 2 * m.arange(u0.shape[-1])) + m.sum(ys)


def test_split_step_solver_in_a_scan(run, jax):
    u0 = Z[0, 0] * 0.5
    want = _split_step(jax.numpy, jax.lax.scan, u0)
    np.testing.assert_allclose(run(lambda u: _split_step(rnp, rune.scan, u))(u0), want,
                               rtol=1e-12)
    g = rune.jit(rune.grad(lambda u: _split_step(rnp, rune.scan, u)))
    np.testing.assert_allclose(g(u0), jax.grad(lambda u: _split_step(
        jax.numpy, jax.lax.scan, u))(u0), rtol=1e-10, atol=1e-12)
    batch = np.stack([u0, 2 * u0])
    np.testing.assert_allclose(rune.jit(rune.vmap(lambda u: _split_step(rnp, rune.scan, u)))(
        batch), jax.vmap(lambda u: _split_step(jax.numpy, jax.lax.scan, u))(batch),
        rtol=1e-12)


def test_transforms_in_vmapped_iterate_lanes_stop_apart(run):
    """Each lane halves its spectrum's energy until it is below its own bound."""
    def lane(x, bound):
        def step(c):
            v, k = c
            return rnp.fft.irfft(rnp.fft.rfft(v) * 0.5, n=v.shape[0]), k + 1
        return rune.iterate(step, (x, 0), until=lambda c: rnp.sum(c[0] ** 2) < bound,
                            max_steps=60)[1]

    xs, bounds = X[:, 0, :], np.array([1e-3, 1e-6, 1.0])
    want = [int(np.ceil(np.log(np.sum(x ** 2) / b) / np.log(4))) for x, b in zip(xs, bounds)]
    got = run(rune.vmap(lane))(xs, bounds)
    assert list(got) == [max(w, 0) for w in want]


def test_fft_of_a_complex_carry_in_a_fori_loop_with_reverse_mode(jax):
    def f(m, fori, z):
        return m.sum(m.abs(fori(0, 4, lambda i, c: m.fft.fft(c, norm="ortho") * (0.9 + 0.1j),
                                z)) ** 2)
    want = jax.grad(lambda z: f(jax.numpy, jax.lax.fori_loop, z))(Z2[1])
    got = rune.jit(rune.grad(lambda z: f(rnp, rune.lax.fori_loop, z)))(Z2[1])
    np.testing.assert_allclose(got, want, rtol=1e-10)
