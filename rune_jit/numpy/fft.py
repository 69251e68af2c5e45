"""rune_jit.numpy.fft: numpy.fft's functions, traced and compiled.

Transforms of any length along any axes, with `n`/`s`, `axis`/`axes` and `norm`
("backward", "ortho", "forward") as NumPy's, in complex64 (from float16, float32 and
complex64) or complex128. Compiled code computes complex transforms of power-of-two
lengths with kernels of its own and calls the FFT NumPy calls (its pocketfft loops) for
the rest, so results are NumPy's to rounding. Every transform is linear: jvp transforms the tangent, reverse
mode applies the transpose (JAX's, docs/semantics.md), vmap transforms each lane.
"""

from .._src.numpy.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2,
                              ifftn, ifftshift, ihfft, irfft, irfft2, irfftn, rfft, rfft2,
                              rfftfreq, rfftn)

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]
