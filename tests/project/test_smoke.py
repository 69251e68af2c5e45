import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp


def test_grad_of_sin_times_x(backend):
    f = backend(rune.grad(lambda x: rnp.sum(rnp.sin(x) * x)))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(f(x), np.cos(x) * x + np.sin(x), rtol=1e-14)


def test_results_are_writable_ndarrays():
    out = rune.vmap(lambda x: x * 2)(np.ones(3))
    assert isinstance(out, np.ndarray) and out.flags.writeable


def test_compiled_fft_calls_this_numpys_pocketfft(backend):
    """Compiled code calls the FFT loops NumPy's ufunc objects hold (their struct read
    by address: runtime/pocketfft.py), on every Python and NumPy CI installs."""
    z = np.exp(1j * np.arange(6.0)) + np.arange(6.0)
    np.testing.assert_allclose(backend(rnp.fft.fft)(z), np.fft.fft(z), rtol=1e-12)
    np.testing.assert_allclose(backend(lambda a: rnp.fft.irfft(a, 6))(z[:4]),
                               np.fft.irfft(z[:4], 6), rtol=1e-12)
