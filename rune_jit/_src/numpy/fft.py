"""The implementation of rune_jit.numpy.fft (its docstring is the public module's).

Each function is numpy.fft's, step for step (numpy/fft/_pocketfft.py): a transform along
one axis crops or zero-pads that axis to its length, moves it last and calls the `fft`
primitive (ops/fft.py) with the `norm` factor NumPy computes; an n-dimensional one is
one-axis transforms in NumPy's order.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..dtypes import complex_dtype, real_dtype
from ..ops import complex_parts as cp
from ..ops import fft as fp
from ..ops import shape as sh
from ._core import (accept, as_value, dtype_weak, normalize_axis, shape_of, static,
                    to_dtype)
from .arrange import roll
from .math import divide, multiply

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
           "irfftn", "fft2", "ifft2", "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_SWAP = {"backward": "forward", None: "forward", "ortho": "ortho", "forward": "backward"}


# ------------------------------------------------------------- one axis

def _operand(a: Any, where: str, real: bool) -> tuple[Any, np.dtype]:
    """a in the dtype the transform computes in (complex64 from float16 and float32,
    complex128 from the rest; their real parts with `real`), and NumPy's real dtype of
    the input (result_type(a.real, 1.0): float16 stays float16, in the scale factor and
    in a real result, as NumPy's casts it back)."""
    a = accept(a, where)
    dtype = dtype_weak(a)[0]
    if real and dtype.kind == "c":
        raise TypeError(f"{where}: ufunc 'rfft' not supported for the input types "
                        f"({dtype.name}): the transform of real data takes real input")
    part = real_dtype(dtype) if dtype.kind == "c" else dtype
    part = F32 if part in (F16, F32) else F64
    result_real = F16 if dtype == F16 else part
    return to_dtype(as_value(a), part if real else complex_dtype(part)), result_real


def _factor(norm: str | None, n: int, forward: bool, real: np.dtype) -> float:
    """NumPy's scale of the result, computed as NumPy computes it (in `real`)."""
    if not forward:
        norm = _swap(norm)
    if norm is None or norm == "backward":
        return 1.0
    if norm == "ortho":
        return float(np.reciprocal(np.sqrt(n, dtype=real)))
    if norm == "forward":
        return float(np.reciprocal(n, dtype=real))
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _swap(norm: str | None) -> str:
    try:
        return _SWAP[norm]
    except KeyError:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".') from None


def _raw(a: Any, n: int | None, axis: int, kind: str, forward: bool, norm: str | None,
         where: str) -> Any:
    a, result_real = _operand(a, where, real=kind == "r2c")
    ndim = len(shape_of(a))
    if ndim == 0:
        raise IndexError(f"{where}: a 0-d array has no axis {axis} to transform")
    axis = normalize_axis(axis, ndim, where)
    if n is None:
        n = shape_of(a)[axis] if kind != "c2r" else 2 * (shape_of(a)[axis] - 1)
    n = int(static(n, "the length n", where))
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    part = real_dtype(dtype_weak(a)[0]) if kind != "r2c" else dtype_weak(a)[0]
    scale = _factor(norm, n, forward, result_real)  # in float16 for float16, as NumPy's
    x = sh.transpose(a, _last(ndim, axis))
    y = fp.fft(fp.fit_last(x, fp.in_length(kind, n)), kind, forward, n, scale)
    y = sh.transpose(y, _last(ndim, axis))  # the same swap puts the axis back
    return to_dtype(y, result_real) if kind == "c2r" and result_real != part else y


def _last(ndim: int, axis: int) -> tuple[int, ...]:
    order = list(range(ndim))
    order[axis], order[-1] = order[-1], order[axis]
    return tuple(order)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's fft: the discrete Fourier transform along `axis`, of length `n` (the input
    cropped or zero-padded), scaled by `norm` ("backward": 1, "ortho": 1/sqrt(n),
    "forward": 1/n).

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.fft.fft(np.array([1.0, 2.0, 3.0, 4.0])))
    [10.+0.j -2.+2.j -2.+0.j -2.-2.j]
    """
    return _raw(a, n, axis, "c2c", True, norm, "rune_jit.numpy.fft.fft")


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's ifft: the inverse of `fft` (scaled by 1/n with the default `norm`).

    >>> print(rnp.fft.ifft(np.array([10.0, -2 + 2j, -2.0, -2 - 2j])).real)
    [1. 2. 3. 4.]
    """
    return _raw(a, n, axis, "c2c", False, norm, "rune_jit.numpy.fft.ifft")


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's rfft: the n // 2 + 1 non-negative frequencies of the transform of real
    data (complex input is a TypeError, as in NumPy).

    >>> print(rnp.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0])))
    [10.+0.j -2.+2.j -2.+0.j]
    """
    return _raw(a, n, axis, "r2c", True, norm, "rune_jit.numpy.fft.rfft")


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's irfft: the real signal of length n (default 2 * (m - 1)) whose `rfft` is
    `a`; the imaginary parts of its zero (and, n even, Nyquist) frequencies are ignored.

    >>> print(rnp.fft.irfft(np.array([10.0, -2 + 2j, -2.0])))
    [1. 2. 3. 4.]
    """
    return _raw(a, n, axis, "c2r", False, norm, "rune_jit.numpy.fft.irfft")


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's hfft: the real transform of a signal with Hermitian symmetry, given by its
    first half `a` (irfft of conj(a), with the opposite `norm`).

    >>> print(rnp.fft.hfft(np.array([1.0, 2.0, 3.0])))
    [ 8. -2.  0. -2.]
    """
    where = "rune_jit.numpy.fft.hfft"
    a = accept(a, where)
    conj = cp.conj(a) if dtype_weak(a)[0].kind == "c" else a
    return _raw(conj, n, axis, "c2r", False, _swap(norm), where)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """NumPy's ihfft: the inverse of `hfft` (conj of rfft, with the opposite `norm`).

    >>> print(rnp.fft.ihfft(np.array([8.0, -2.0, 0.0, -2.0])))
    [1.-0.j 2.-0.j 3.-0.j]
    """
    return cp.conj(_raw(a, n, axis, "r2c", True, _swap(norm), "rune_jit.numpy.fft.ihfft"))


# ------------------------------------------------------------- several axes

def _cook(a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, invreal: bool
          ) -> tuple[list[int], list[int]]:
    """NumPy's _cook_nd_args: the lengths and axes of an n-dimensional transform."""
    shape = shape_of(a)
    shapeless = s is None
    if s is None:
        s = list(shape) if axes is None else [shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in "
                          "NumPy 2.0)", DeprecationWarning, stacklevel=4)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (shape[axes[-1]] - 1) * 2
    return [shape[ax] if n in (-1, None) else n for n, ax in zip(s, axes)], axes


def _nd(a: Any, s, axes, norm, forward: bool, where: str) -> Any:
    a = accept(a, where)
    s, axes = _cook(a, s, axes, False)
    for n, ax in reversed(list(zip(s, axes))):
        a = _raw(a, n, ax, "c2c", forward, norm, where)
    return a


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """NumPy's fftn: `fft` along each of `axes` (all by default), of lengths `s`.

    >>> print(rnp.fft.fftn(np.ones((2, 2))).real)
    [[4. 0.]
     [0. 0.]]
    """
    return _nd(a, s, axes, norm, True, "rune_jit.numpy.fft.fftn")


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """NumPy's ifftn: the inverse of `fftn`.

    >>> print(rnp.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real)
    [[1. 1.]
     [1. 1.]]
    """
    return _nd(a, s, axes, norm, False, "rune_jit.numpy.fft.ifftn")


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """NumPy's fft2: `fftn` over the last two axes.

    >>> print(rnp.fft.fft2(np.ones((2, 2))).real)
    [[4. 0.]
     [0. 0.]]
    """
    return _nd(a, s, axes, norm, True, "rune_jit.numpy.fft.fft2")


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """NumPy's ifft2: `ifftn` over the last two axes.

    >>> print(rnp.fft.ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real)
    [[1. 1.]
     [1. 1.]]
    """
    return _nd(a, s, axes, norm, False, "rune_jit.numpy.fft.ifft2")


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """NumPy's rfftn: `rfft` along the last of `axes`, then `fft` along the others.

    >>> print(rnp.fft.rfftn(np.ones((2, 4))).real)
    [[8. 0. 0.]
     [0. 0. 0.]]
    """
    where = "rune_jit.numpy.fft.rfftn"
    a = accept(a, where)
    s, axes = _cook(a, s, axes, False)
    a = _raw(a, s[-1], axes[-1], "r2c", True, norm, where)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        a = _raw(a, n, ax, "c2c", True, norm, where)
    return a


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """NumPy's irfftn: the inverse of `rfftn` (`ifft` along all but the last of `axes`,
    then `irfft`).

    >>> print(rnp.fft.irfftn(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]])))
    [[1. 1. 1. 1.]
     [1. 1. 1. 1.]]
    """
    where = "rune_jit.numpy.fft.irfftn"
    a = accept(a, where)
    s, axes = _cook(a, s, axes, True)
    for n, ax in zip(s[:-1], axes[:-1]):
        a = _raw(a, n, ax, "c2c", False, norm, where)
    return _raw(a, s[-1], axes[-1], "c2r", False, norm, where)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """NumPy's rfft2: `rfftn` over the last two axes.

    >>> print(rnp.fft.rfft2(np.ones((2, 4))).real)
    [[8. 0. 0.]
     [0. 0. 0.]]
    """
    return rfftn(a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """NumPy's irfft2: `irfftn` over the last two axes.

    >>> print(rnp.fft.irfft2(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]])))
    [[1. 1. 1. 1.]
     [1. 1. 1. 1.]]
    """
    return irfftn(a, s, axes, norm)


# ------------------------------------------------------------- frequencies and shifts

def _integers(n: int, half: bool) -> np.ndarray:
    n = int(n)
    if half:
        return np.arange(0, n // 2 + 1)
    return np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])


def _frequencies(n: int, d: Any, dtype: Any, half: bool) -> Any:
    """NumPy's integers times 1 / (n * d), as NumPy computes them."""
    n = int(n)
    ks = np.arange(0, n // 2 + 1) if half else np.concatenate(
        [np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    out = multiply(ks, divide(1.0, multiply(n, d)))
    return out if dtype is None else to_dtype(out, np.dtype(dtype))


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """NumPy's fftfreq: the frequencies of `fft`'s results, in cycles per unit of the
    sample spacing `d` (which may be traced); `dtype` as JAX's.

    >>> print(rnp.fft.fftfreq(5, 0.1))
    [ 0.  2.  4. -4. -2.]
    """
    return _frequencies(n, d, dtype, half=False)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """NumPy's rfftfreq: the frequencies of `rfft`'s results.

    >>> print(rnp.fft.rfftfreq(6))
    [0.         0.16666667 0.33333333 0.5       ]
    """
    return _frequencies(n, d, dtype, half=True)


def _shift(x: Any, axes: Any, sign: int, where: str) -> Any:
    x = accept(x, where)
    ndim = len(shape_of(x))
    axes = tuple(range(ndim)) if axes is None else (
        (axes,) if np.ndim(axes) == 0 else tuple(axes))
    axes = tuple(normalize_axis(int(ax), ndim, where) for ax in axes)
    shape = shape_of(x)
    shifts = [sign * (shape[ax] // 2) for ax in axes]
    return roll(x, shifts, axes) if axes else x


def fftshift(x: Any, axes: Any = None) -> Any:
    """NumPy's fftshift: the zero frequency moved to the centre of `axes` (all by
    default).

    >>> print(rnp.fft.fftshift(np.fft.fftfreq(5)))
    [-0.4 -0.2  0.   0.2  0.4]
    """
    return _shift(x, axes, 1, "rune_jit.numpy.fft.fftshift")


def ifftshift(x: Any, axes: Any = None) -> Any:
    """NumPy's ifftshift: the inverse of `fftshift`.

    >>> print(rnp.fft.ifftshift(np.array([-0.4, -0.2, 0.0, 0.2, 0.4])))
    [ 0.   0.2  0.4 -0.4 -0.2]
    """
    return _shift(x, axes, -1, "rune_jit.numpy.fft.ifftshift")
