"""Derivatives of complex functions: JAX's convention (grad of a real f of z = x + iy is
df/dx - i df/dy; holomorphic=True gives f'(z)), checked against JAX where installed and
against finite differences along the real and the imaginary parts (check_grads); eager
and jitted, under vmap, and through loops with complex carries."""

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp

Z = np.array([1.5 - 0.7j, 0.3 + 2.0j, -1.1 + 0.4j])
W = np.array([0.2 + 0.9j, -0.6 - 0.1j, 1.3 + 0.5j])


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# f(m, z) with m the NumPy-like module (rune_jit.numpy or jax.numpy): one spelling for both
REAL_OF_COMPLEX = {
    "abs2": lambda m, z: m.sum(m.abs(z) ** 2),
    "real_square": lambda m, z: m.sum(m.real(z * z)),
    "imag_exp": lambda m, z: m.sum(m.imag(m.exp(z))),
    "abs_sin": lambda m, z: m.sum(m.abs(m.sin(z))),
    "angle": lambda m, z: m.sum(m.angle(z) * m.real(z)),
    "conj_product": lambda m, z: m.real(m.vdot(z, z * (1 - 2j))),
    "var": lambda m, z: m.var(z),
    "norm": lambda m, z: m.linalg.norm(z * (2 + 1j)),
    "log_abs": lambda m, z: m.sum(m.real(m.log(z)) + m.imag(m.sqrt(z))),
    "division": lambda m, z: m.sum(m.abs(z / (z + 3 - 1j))),
    "parts": lambda m, z: m.sum(m.real(z) * m.imag(z) ** 2),
    "tanh_tan": lambda m, z: m.sum(m.real(m.tanh(z) * m.conj(m.tan(z)))),
    "mean_dot": lambda m, z: m.abs(m.mean(z) * m.dot(z, z)),
}
HOLOMORPHIC = {
    "sin_z": lambda m, z: m.sin(z) * z,
    "exp": lambda m, z: m.exp(z * (0.5 - 1j)),
    "log": lambda m, z: m.log(z),
    "sqrt": lambda m, z: m.sqrt(z),
    "cube": lambda m, z: z ** 3 - 2 * z,
    "inverse": lambda m, z: 1 / (z + 2j),
    "cosh_tanh": lambda m, z: m.cosh(z) + m.tanh(z),
}
Z0 = np.complex128(0.8 - 0.6j)


def _close(got, want, rtol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", sorted(REAL_OF_COMPLEX))
@pytest.mark.slow
def test_grad_of_a_real_function_is_jaxs(name, jax, backend):
    f = REAL_OF_COMPLEX[name]
    want = jax.grad(lambda z: f(jax.numpy, z))(Z)
    _close(backend(rune.grad(lambda z: f(rnp, z)))(Z), want)


@pytest.mark.parametrize("name", sorted(REAL_OF_COMPLEX))
def test_check_grads_of_a_real_function(name):
    rune.check_grads(lambda z: REAL_OF_COMPLEX[name](rnp, z), Z, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_grad_is_the_derivative(name, jax, backend):
    f = HOLOMORPHIC[name]
    want = jax.grad(lambda z: f(jax.numpy, z), holomorphic=True)(Z0)
    _close(backend(rune.grad(lambda z: f(rnp, z), holomorphic=True))(Z0), want)


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_check_grads_of_a_complex_function(name):
    rune.check_grads(lambda z: HOLOMORPHIC[name](rnp, z), Z, rtol=1e-4)


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_holomorphic_jacobians_are_jaxs(mode, jax, backend):
    f = HOLOMORPHIC["sin_z"]
    want = getattr(jax, mode)(lambda z: f(jax.numpy, z[::-1] * z), holomorphic=True)(Z)
    got = backend(getattr(rune, mode)(lambda z: f(rnp, z[::-1] * z), holomorphic=True))(Z)
    _close(got, want)


def test_jacobians_across_real_and_complex_are_jaxs(jax, backend):
    # jacrev of a real output of complex inputs; jacfwd of complex outputs of real inputs
    _close(backend(rune.jacrev(lambda z: rnp.abs(rnp.sin(z))))(Z),
           jax.jacrev(lambda z: jax.numpy.abs(jax.numpy.sin(z)))(Z))
    g = lambda m, x: m.exp(1j * x) * x  # noqa: E731
    x = Z.real.copy()
    _close(backend(rune.jacfwd(lambda x: g(rnp, x)))(x), jax.jacfwd(lambda x: g(jax.numpy, x))(x))


def test_jvp_of_a_function_that_is_not_holomorphic_is_real_linear(jax):
    f = lambda m, z: m.conj(z) * m.abs(z) + m.real(z) * 1j  # noqa: E731
    t = W
    want = jax.jvp(lambda z: f(jax.numpy, z), (Z,), (t,))
    got = rune.jvp(lambda z: f(rnp, z), (Z,), (t,))
    for g, w in zip(got, want):
        _close(g, w)


def test_vjp_and_vmap_of_complex_functions(jax, backend):
    f = lambda m, z, w: m.exp(z) * m.conj(w)  # noqa: E731
    out, pull = rune.vjp(lambda z, w: f(rnp, z, w), Z, W)
    jout, jpull = jax.vjp(lambda z, w: f(jax.numpy, z, w), Z, W)
    _close(out, jout)
    for g, w in zip(pull(W * 1j), jpull(W * 1j)):
        _close(g, w)
    per = backend(rune.vmap(rune.grad(lambda z: rnp.abs(rnp.exp(z * z)))))(Z)
    _close(per, jax.vmap(jax.grad(lambda z: jax.numpy.abs(jax.numpy.exp(z * z))))(Z))


# ------------------------------------------------------------- loops


def test_grad_through_a_scan_with_a_complex_carry(jax, backend):
    def f(m, scan, z0, xs):
        def step(z, x):
            z = z * m.exp(1j * x) + 0.1 * m.conj(z) * x
            return z, m.abs(z)

        z, ys = scan(step, z0, xs)
        return m.real(z * z) + m.sum(ys)

    xs = np.linspace(0.1, 0.9, 6)
    args = (np.complex128(0.7 + 0.2j), xs)
    want = jax.grad(lambda *a: f(jax.numpy, jax.lax.scan, *a), argnums=(0, 1))(*args)
    got = backend(rune.grad(lambda *a: f(rnp, rune.scan, *a), argnums=(0, 1)))(*args)
    for g, w in zip(got, want):
        _close(g, w)
    rune.check_grads(lambda *a: f(rnp, rune.scan, *a), *args, rtol=1e-4)


def test_grad_through_iterate_and_fori_loop_with_complex_carries(jax, backend):
    def contract(z):  # z -> z/2 + c, stopped by a test on |z|
        return rune.iterate(lambda z: z * (0.5 + 0.1j) + 0.3j * rnp.conj(z), z,
                            until=lambda z: rnp.abs(z) < 1e-3, max_steps=200)

    g = backend(rune.grad(lambda z: rnp.real(contract(z) * 1e3) + rnp.imag(
        rune.lax.fori_loop(0, 5, lambda i, z: z * z * 0.5, z))))
    steps = int(np.asarray(rune.jit(lambda z: rune.iterate(
        lambda c: (c[0] * (0.5 + 0.1j) + 0.3j * rnp.conj(c[0]), c[1] + 1), (z, 0),
        until=lambda c: rnp.abs(c[0]) < 1e-3, max_steps=200)[1])(Z0)))

    def reference(z):
        w = jax.lax.fori_loop(0, steps, lambda i, z: z * (0.5 + 0.1j) + 0.3j * jax.numpy.conj(z),
                              z)
        return jax.numpy.real(w * 1e3) + jax.numpy.imag(
            jax.lax.fori_loop(0, 5, lambda i, z: z * z * 0.5, z))

    _close(g(Z0), jax.grad(reference)(Z0))


def test_grad_of_a_vmapped_iterate_with_complex_carries(backend):
    def one(c):  # a Mandelbrot-like escape, at most 5 steps
        z, _ = rune.iterate(lambda s: (s[0] * s[0] * 0.5 + c, s[1] + 1), (0j * c, 0),
                            until=lambda s: (rnp.abs(s[0]) > 1.5) | (s[1] >= 5), max_steps=6)
        return rnp.abs(z)

    g = backend(rune.grad(lambda c: rnp.sum(rune.vmap(one)(c))))
    c = np.array([0.3 + 0.2j, 1.2 - 0.4j, -0.5 + 1.4j])
    eps = 1e-6
    for k, d in enumerate([eps, 1j * eps]):  # real and imaginary directions
        fd = (rnp.sum(rune.vmap(one)(c + d)) - rnp.sum(rune.vmap(one)(c - d))) / (2 * eps)
        part = np.real if k == 0 else lambda v: -np.imag(v)
        np.testing.assert_allclose(np.sum(part(np.asarray(g(c)))), fd, rtol=1e-5)


# ------------------------------------------------------------- bad input


def test_grad_of_a_complex_output_names_holomorphic():
    with pytest.raises(TypeError, match="holomorphic=True"):
        rune.grad(lambda z: z * z)(Z0)
    with pytest.raises(TypeError, match="holomorphic=True"):
        rune.jacrev(lambda z: z * z)(Z)


def test_holomorphic_needs_complex_inputs_and_outputs():
    with pytest.raises(TypeError, match="requires complex inputs"):
        rune.grad(lambda x: x * 1j, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="requires complex outputs"):
        rune.grad(lambda z: rnp.abs(z), holomorphic=True)(Z0)
    with pytest.raises(TypeError, match="holomorphic=True"):
        rune.jacfwd(lambda z: z * 2)(Z)  # complex inputs: holomorphic=True, as JAX's


def test_complex_normal_draws_jaxs_numbers(jax):
    for dtype in (np.complex64, np.complex128):
        want = jax.random.normal(jax.random.PRNGKey(0), (64,), dtype)
        got = rune.random.normal(rune.random.PRNGKey(0), (64,), dtype)
        np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps)


def test_remat_checkpointed_scan_and_custom_derivatives_of_complex_values(jax, backend):
    square = rune.custom_jvp(lambda z: z * z)
    square.defjvp(lambda p, t: (p[0] * p[0], 2 * p[0] * t[0]))
    cube = rune.custom_vjp(lambda z: z * z * z)
    cube.defvjp(lambda z: (z * z * z, z), lambda z, ct: (3 * z * z * ct,))

    def f(z):
        w = rune.remat(lambda v: rnp.sin(v) * v)(z)
        c = rune.scan(lambda c, x: (c * x + 1j, None), z[0], z, checkpoints=2)[0]
        return rnp.sum(rnp.abs(w) ** 2) + rnp.real(c + rnp.sum(square(z) + cube(z)))

    def reference(z):
        jn = jax.numpy
        c = z[0]
        for x in z:
            c = c * x + 1j
        return jn.sum(jn.abs(jn.sin(z) * z) ** 2) + jn.real(c + jn.sum(z * z + z * z * z))

    _close(backend(f)(Z), np.asarray(reference(Z)))
    _close(backend(rune.grad(f))(Z), jax.grad(reference)(Z))


def _complex_sqrt(a):
    """z with z*z = a by Newton's iterations, its derivatives from the residual."""
    return rune.root(lambda z: z * z - a, lambda: rune.iterate(
        lambda z: (z + a / z) / 2, a + 1.0, until=lambda z: rnp.abs(z * z - a) < 1e-13,
        max_steps=100))


def test_root_of_a_complex_residual(jax, backend):
    a = np.complex128(3 + 4j)
    _close(backend(_complex_sqrt)(a), np.complex128(2 + 1j))
    f = lambda m, z: m.real(z) * m.imag(z) ** 2  # noqa: E731
    _close(backend(rune.grad(lambda a: f(rnp, _complex_sqrt(a))))(a),
           jax.grad(lambda a: f(jax.numpy, jax.numpy.sqrt(a)))(a))
    _close(backend(rune.grad(_complex_sqrt, holomorphic=True))(a), 1 / (2 * np.sqrt(a)))
    lanes = np.array([3 + 4j, -1 + 0.5j])
    _close(backend(rune.vmap(_complex_sqrt))(lanes), np.sqrt(lanes))


def test_root_of_a_complex_residual_refuses_other_solvers():
    with pytest.raises(TypeError, match="linear_solver='dense'"):
        rune.root(lambda z: z * z - 1j, lambda: np.sqrt(1j + 0j), linear_solver="diagonal")


# Generated chains of structural operations on a complex matrix, compiled against the
# interpreter, with their gradients: the pairs rewrite (complex values as two real
# arrays in compiled code) must move both parts alike through each of them. Widened
# after complex(x, 0-d zero) kept a 0-d part that a transpose then refused, and with the
# decompositions of complex matrices.
CHAIN_OPS = {
    "T": lambda z: z.T,
    "flip": lambda z: z[::-1],
    "drop_first_row": lambda z: z[1:] if z.shape[0] > 1 else z,
    "ravel_back": lambda z: rnp.reshape(rnp.ravel(z), z.shape),
    "real_complex": lambda z: rnp.real(z) + 0.5j,
    "imag_complex": lambda z: 1.5 + 1j * rnp.imag(z),
    "conj": rnp.conj,
    "rotate": lambda z: z * (0.6 - 0.8j),
    "broadcast_row": lambda z: z + z[:1],
    "fft": lambda z: rnp.fft.fft(z, axis=0, norm="ortho"),
    "rfft_of_real": lambda z: rnp.fft.rfft(rnp.real(z), n=2 * z.shape[-1] - 1),
    "irfft_back": lambda z: rnp.fft.irfft(z, n=z.shape[-1]) * (1 - 1j),
    "sum_keep": lambda z: rnp.sum(z, axis=0, keepdims=True) * z,
    # decompositions (LAPACK's z routines when compiled), through what their vectors'
    # phases do not change
    "gram_solve": lambda z: rnp.linalg.inv(_gram(z)) @ z,
    "cholesky": lambda z: rnp.linalg.cholesky(_gram(z)) @ z,
    "eigh_back": lambda z: (_eigh_back(_gram(z)) @ z) * 0.1,
    "polar": lambda z: _polar(z) * (1.0 + rnp.arange(z.shape[1])),  # singular values apart
    "det_eig": lambda z: z * (rnp.linalg.det(_square(z)) + rnp.sum(rnp.linalg.eigvals(
        _square(z)))) * 0.1,
}
LINALG = {"gram_solve", "cholesky", "eigh_back", "polar", "det_eig"}


def _gram(z):
    return z @ rnp.conj(z).T + 2 * rnp.eye(z.shape[0])


def _eigh_back(h):
    w, v = rnp.linalg.eigh(h)
    return (v * w) @ rnp.conj(v).T


def _polar(z):
    u, _, vh = rnp.linalg.svd(z, full_matrices=False)
    return u @ vh


def _square(z):
    k = min(z.shape)
    return z[:k, :k]


def _chain(names):
    def f(z):
        for name in names:
            z = CHAIN_OPS[name](z)
        return rnp.sum(rnp.abs(z) ** 2 + rnp.real(z) * rnp.imag(z))
    return f


@pytest.mark.parametrize("seed", range(24))
def test_generated_chains_of_complex_structure_compile_as_interpreted(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    names = list(rng.choice(sorted(CHAIN_OPS), size=int(rng.integers(1, 5))))
    z = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    f = _chain(names)
    compiled = rune.jit(f)(z), rune.jit(rune.grad(f))(z)
    monkeypatch.setattr(rune.config, "backend", "interpret")
    interpreted = rune.jit(f)(z), rune.jit(rune.grad(f))(z)
    tol = 1e-9 if LINALG & set(names) else 1e-12  # two LAPACK builds: their rounding
    for got, want in zip(compiled, interpreted):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(names))
