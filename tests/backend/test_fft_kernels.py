"""The generated Stockham transforms of power-of-two lengths (codegen/stockham.py) against
numpy.fft: every length they cover, both precisions and directions, every norm, batches,
axes that are not last, vmap and loops; and the lengths they leave to pocketfft.

Tolerance: the forward error bound of a radix-2/4 FFT, ‖ŷ − y‖₂ ≤ c·log2(n)·eps·‖y‖₂
(Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §24.1), for ours and
pocketfft's alike: with c = 5 the difference of the two is within twice that. Never
last-bit equality: the order of the arithmetic is ours, and FMA contraction varies
with the CPU."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src.backend.cpu.codegen import stockham

RNG = np.random.default_rng(11)
LENGTHS = [2 ** k for k in range(1, 17)]


def _signal(shape, dtype):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def _close(got, want, n):
    assert got.dtype == want.dtype and got.shape == want.shape
    eps = np.finfo(want.dtype).eps
    bound = 2 * 5 * max(1, np.log2(n)) * eps * np.linalg.norm(want)
    assert np.linalg.norm(got - want) <= bound, (np.linalg.norm(got - want), bound)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_every_covered_length_is_numpys(n, dtype):
    z = _signal((3, n), dtype)
    for name in ("fft", "ifft"):
        f = rune.jit(getattr(rnp.fft, name))
        _close(f(z), getattr(np.fft, name)(z), n)
    assert "rune_fft_stockham" in rune.jit(rnp.fft.fft).lower(z).llvm_ir


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_norms_scale_the_last_pass(norm):
    z = _signal((2, 64), np.complex128)
    for name in ("fft", "ifft"):
        f = rune.jit(lambda v: getattr(rnp.fft, name)(v, norm=norm))
        _close(f(z), getattr(np.fft, name)(z, norm=norm), 64)


@pytest.mark.parametrize("n", [1, 3, 12, 1000, 2 * stockham.MAX_LENGTH])
def test_lengths_not_covered_call_pocketfft(n):
    z = _signal((2, n), np.complex128)
    f = rune.jit(rnp.fft.fft)
    _close(f(z), np.fft.fft(z), n)
    assert "rune_fft_stockham" not in f.lower(z).llvm_ir
    assert not stockham.covers(n)


def test_an_axis_not_last_and_a_batch_of_several_axes():
    z = _signal((16, 3, 5), np.complex128)
    _close(rune.jit(lambda v: rnp.fft.fft(v, axis=0))(z), np.fft.fft(z, axis=0), 16)
    _close(rune.jit(rnp.fft.fft2)(z[:4, :, :4]), np.fft.fft2(z[:4, :, :4]), 16)


def test_real_input_and_padding_to_a_power_of_two():
    x = RNG.normal(size=(4, 100))
    _close(rune.jit(lambda v: rnp.fft.fft(v, n=128))(x), np.fft.fft(x, n=128), 128)


def test_vmapped_and_in_a_scan_with_its_gradient():
    z = _signal((3, 256), np.complex128)
    k = np.exp(-1j * np.linspace(0.0, 3.0, 256))

    def steps(u):
        def step(c, _):
            c = rnp.fft.ifft(k * rnp.fft.fft(c))
            return c * rnp.exp(1j * 1e-2 * rnp.abs(c) ** 2), None
        return rune.scan(step, u, None, length=20)[0]

    def reference(u):
        for _ in range(20):
            u = np.fft.ifft(k * np.fft.fft(u))
            u = u * np.exp(1j * 1e-2 * np.abs(u) ** 2)
        return u

    _close(rune.jit(rune.vmap(steps))(z), np.stack([reference(u) for u in z]), 256 * 20)
    energy = lambda u: rnp.sum(rnp.abs(steps(u)) ** 2 * np.arange(256))  # noqa: E731
    with pytest.MonkeyPatch.context() as mp:  # the interpreter's: NumPy's pocketfft
        mp.setattr(rune.config, "backend", "interpret")
        want = rune.jit(rune.grad(energy))(z[0])
    got = rune.jit(rune.grad(energy))(z[0])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


KERNEL_FROM_DISK = """
    import numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    from rune_jit._src.backend.cpu.runtime import llvm
    optimized, optimize = [], llvm.optimize
    llvm.optimize = lambda text: optimized.append(1) or optimize(text)
    z = np.exp(1j * np.arange(64.0)).reshape(2, 32)
    got = rune.jit(lambda v: rnp.fft.ifft(rnp.fft.fft(v) * 2))(z)
    assert np.abs(got - 2 * z).max() < 1e-13
    print(len(optimized))
"""


def test_a_kernel_is_compiled_once_and_then_read_from_the_disk_cache(tmp_path):
    """A kernel is code of its own (runtime/fft_kernels.py), kept in the disk cache as a
    program is: the second process compiles neither the program nor the kernel (one for
    both directions)."""
    env = dict(os.environ, RUNE_JIT_CACHE_DIR=str(tmp_path), RUNE_JIT_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", textwrap.dedent(KERNEL_FROM_DISK)],
                           env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    first, second = (int(r.stdout) for r in runs)
    assert first >= 2 and second == 0  # the program (its entry too) and the kernel
