"""The discrete Fourier transform along the last axis: complex to complex (c2c), real to
complex (r2c: the n // 2 + 1 non-negative frequencies) and complex to real (c2r: from
those frequencies), each times a `scale` (the `norm` factor).

The operand's last axis has the transform's length already (the NumPy layer crops or
pads it, and moves the axis last); leading axes are a batch, so vmap only moves its
lanes to axis 0. The impl is NumPy's own pocketfft, the gufunc loops numpy.fft calls;
compiled code calls them too, or kernels of its own for complex transforms of
power-of-two lengths (backend/cpu/rules/fft.py): jit's results are NumPy's to rounding.

All three are linear over the reals. Transposes are JAX's, with respect to the pairing
<a, b> = Re(sum(a * b)) of every transpose of rune_jit's (ops/complex_parts.py): the DFT
matrix is symmetric, so c2c is its own transpose; r2c is c2c of the zero-padded
cotangent, real part; c2r is the conjugate of r2c of the cotangent, its frequencies that
stand for two (k and n - k) counted twice.

`fft_memory` is the form compiled code computes, where complex values are pairs of
real arrays (backend/cpu/codegen/complex_pairs.py): a complex operand or result is
NumPy's memory of it, a real array with a last axis of 2 (real, imaginary), which
the transform reads and writes. It exists only after that rewrite, so it has no derivatives
(a batch rule, for the tests that bind it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.fft import _pocketfft_umath as pocketfft

from ..dtypes import complex_dtype, real_dtype
from ..ir import Type
from ..primitive import Absent, Primitive
from ..trace import bind1, type_of_value
from . import complex_parts as cp
from . import elementwise as ew
from .jvp_rules import linear_jvp
from .shape import broadcast_in_dim, pad_p, slice_op

fft_p = Primitive("fft", traits=frozenset({"costly"}))
fft_memory_p = Primitive("fft_memory", traits=frozenset({"costly"}))

KINDS = ("c2c", "r2c", "c2r")
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def in_length(kind: str, n: int) -> int:
    """The length of the operand's last axis for a transform of length n."""
    return n // 2 + 1 if kind == "c2r" else n


def out_length(kind: str, n: int) -> int:
    return n // 2 + 1 if kind == "r2c" else n


def gufunc(kind: str, forward: bool, n: int) -> np.ufunc:
    """The numpy.fft gufunc that computes the transform."""
    if kind == "c2c":
        return pocketfft.fft if forward else pocketfft.ifft
    if kind == "r2c":
        return pocketfft.rfft_n_even if n % 2 == 0 else pocketfft.rfft_n_odd
    return pocketfft.irfft


# ------------------------------------------------------------- fft

@fft_p.def_rule("shape")
def _fft_shape(x: Type, *, kind, forward, n, scale) -> list[Type]:
    if kind not in KINDS:
        raise ValueError(f"fft: kind must be one of {KINDS}, got {kind!r}")
    wants_complex = kind != "r2c"
    real = real_dtype(x.dtype) if x.dtype.kind == "c" else x.dtype
    if (x.dtype.kind == "c") != wants_complex or real not in FLOATS:
        raise TypeError(f"fft ({kind}): operand {x} must be "
                        f"{'complex64 or complex128' if wants_complex else 'float32 or float64'}")
    if n < 1 or x.ndim < 1 or x.shape[-1] != in_length(kind, n):
        raise ValueError(f"fft ({kind}) of length {n}: operand {x} must have "
                         f"{in_length(kind, n)} elements on its last axis")
    dtype = real if kind == "c2r" else complex_dtype(real)
    return [Type(dtype, x.shape[:-1] + (out_length(kind, n),))]


@fft_p.def_rule("impl")
def _fft_impl(x, *, kind, forward, n, scale):
    (out,) = _fft_shape(Type(x.dtype, x.shape), kind=kind, forward=forward, n=n, scale=scale)
    factor = np.asarray(scale, real_dtype(out.dtype) if out.dtype.kind == "c" else out.dtype)
    return [gufunc(kind, forward, n)(x, factor, out=np.empty(out.shape, out.dtype))]


def fft(x: Any, kind: str, forward: bool, n: int, scale: float = 1.0) -> Any:
    return bind1(fft_p, x, kind=kind, forward=bool(forward), n=int(n), scale=float(scale))


def fit_last(x: Any, length: int) -> Any:
    """x's last axis cropped, or padded with zeros, to `length`."""
    shape = type_of_value(x).shape
    if shape[-1] > length:
        return slice_op(x, (0,) * len(shape), shape[:-1] + (length,))
    if shape[-1] < length:
        return bind1(pad_p, x, shape=shape[:-1] + (length,), starts=(0,) * len(shape),
                     strides=(1,) * len(shape))
    return x


@fft_p.def_rule("transpose")
def _fft_transpose(cts, x, *, kind, forward, n, scale):
    ct = cts[0]
    if kind == "c2c":
        return [fft(ct, "c2c", forward, n, scale)]
    if kind == "r2c":
        return [cp.real(fft(fit_last(ct, n), "c2c", True, n, scale))]
    spectrum = cp.conj(fft(ct, "r2c", True, n, scale))
    twice = np.full(n // 2 + 1, 2.0)
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    t = type_of_value(spectrum)
    counts = broadcast_in_dim(twice.astype(t.dtype), t.shape, (len(t.shape) - 1,))
    return [ew.mul(spectrum, counts)]


linear_jvp(fft_p)
fft_p.def_rule("batch", lambda size, args, dims, **params: ([bind1(fft_p, args[0], **params)],
                                                           [0]))


# ------------------------------------------------------------- fft_memory

def _as_complex_side(t: Type, complex_side: bool) -> Type:
    """The fft's type of a side of fft_memory: (..., m, 2) reals are (..., m) complex."""
    if not complex_side:
        return t
    if t.ndim < 1 or t.shape[-1] != 2:
        raise ValueError(f"fft_memory: {t} is not complex numbers' memory (a last axis of 2)")
    return Type(complex_dtype(t.dtype), t.shape[:-1])


def _complex_in(kind: str) -> bool:
    return kind != "r2c"


@fft_memory_p.def_rule("shape")
def _memory_shape(x: Type, *, kind, forward, n, scale) -> list[Type]:
    if x.dtype not in FLOATS:
        raise TypeError(f"fft_memory ({kind}): operand {x} must be float32 or float64")
    (out,) = _fft_shape(_as_complex_side(x, _complex_in(kind)), kind=kind, forward=forward,
                        n=n, scale=scale)
    return [Type(real_dtype(out.dtype), out.shape + (2,)) if out.dtype.kind == "c" else out]


@fft_memory_p.def_rule("impl")
def _memory_impl(x, *, kind, forward, n, scale):
    if _complex_in(kind):
        x = np.ascontiguousarray(x).view(complex_dtype(x.dtype))[..., 0]
    (y,) = _fft_impl(x, kind=kind, forward=forward, n=n, scale=scale)
    if y.dtype.kind == "c":
        y = y.view(real_dtype(y.dtype)).reshape(y.shape + (2,))
    return [y]


def fft_memory(x: Any, kind: str, forward: bool, n: int, scale: float) -> Any:
    return bind1(fft_memory_p, x, kind=kind, forward=forward, n=n, scale=scale)


fft_memory_p.def_rule("batch", lambda size, args, dims, **params: (
    [fft_memory(args[0], **params)], [0]))
_AFTER_PAIRS = Absent("exists only in compiled code's rewrite of complex values into "
                      "parts, after every derivative is taken")
for _slot in ("jvp", "transpose"):
    fft_memory_p.def_rule(_slot, _AFTER_PAIRS)
