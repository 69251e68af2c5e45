"""The discrete Fourier transform along the last axis: complex to complex (c2c), real to
complex (r2c: the n // 2 + 1 non-negative frequencies) and complex to real (c2r: from
those frequencies), each times a `scale` (the `norm` factor).

The operand's last axis has the transform's length already (the NumPy layer crops or
pads it, and moves the axis last); leading axes are a batch, so vmap only moves its
lanes to axis 0. The impl is NumPy's own pocketfft, the gufunc loops numpy.fft calls,
and so is compiled code's (backend/cpu/rules/fft.py): jit's results are NumPy's.

All three are linear over the reals. Transposes are JAX's, with respect to the pairing
<a, b> = Re(sum(a * b)) of every transpose of rune_jit's (ops/complex_parts.py): the DFT
matrix is symmetric, so c2c is its own transpose; r2c is c2c of the zero-padded
cotangent, real part; c2r is the conjugate of r2c of the cotangent, its frequencies that
stand for two (k and n - k) counted twice.

`fft_parts` is the form compiled code computes, each complex operand or result as its
real and imaginary parts (backend/cpu/codegen/complex_pairs.py): it exists only after
that rewrite, so it has no derivatives (a batch rule, for the tests that bind it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.fft import _pocketfft_umath as pocketfft

from ..dtypes import complex_dtype, real_dtype
from ..ir import Type
from ..primitive import Absent, Primitive
from ..trace import bind, bind1, type_of_value
from . import complex_parts as cp
from . import elementwise as ew
from .jvp_rules import linear_jvp
from .shape import broadcast_in_dim, materialize, pad_p, slice_op

fft_p = Primitive("fft", traits=frozenset({"costly"}))
fft_parts_p = Primitive("fft_parts", traits=frozenset({"costly"}))

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


# ------------------------------------------------------------- fft_parts

def _joined(parts: tuple, kind: str, side: str) -> tuple:
    """The fft's operand (side "in") or result ("out") types from their parts' types."""
    complex_side = kind == "c2c" or (kind == "r2c") == (side == "out")
    if not complex_side:
        return parts
    re, im = parts
    return (Type(complex_dtype(re.dtype), re.shape),)


@fft_parts_p.def_rule("shape")
def _parts_shape(*parts: Type, kind, forward, n, scale) -> list[Type]:
    if parts[0].dtype not in FLOATS or any(p != parts[0] for p in parts):
        raise TypeError(f"fft_parts ({kind}): parts {', '.join(map(str, parts))} must be "
                        "float32 or float64, of one type")
    (whole,) = _fft_shape(*_joined(parts, kind, "in"), kind=kind, forward=forward, n=n,
                          scale=scale)
    if whole.dtype.kind != "c":
        return [whole]
    return [Type(real_dtype(whole.dtype), whole.shape)] * 2


@fft_parts_p.def_rule("impl")
def _parts_impl(*parts, kind, forward, n, scale):
    x = parts[0]
    if len(parts) == 2:  # exactly (re + 1j * im would make inf * 0j a nan)
        x = np.empty(x.shape, complex_dtype(x.dtype))
        x.real, x.imag = parts
    (y,) = _fft_impl(x, kind=kind, forward=forward, n=n, scale=scale)
    return [y.real.copy(), y.imag.copy()] if y.dtype.kind == "c" else [y]


def fft_parts(parts: list, kind: str, forward: bool, n: int, scale: float) -> list:
    return bind(fft_parts_p, *parts, kind=kind, forward=forward, n=n, scale=scale)


def _parts_batch(size, args, dims, **params):
    outs = fft_parts([materialize(a, d, size) for a, d in zip(args, dims)], **params)
    return outs, [0] * len(outs)


fft_parts_p.def_rule("batch", _parts_batch)
_AFTER_PAIRS = Absent("exists only in compiled code's rewrite of complex values into "
                      "parts, after every derivative is taken")
for _slot in ("jvp", "transpose"):
    fft_parts_p.def_rule(_slot, _AFTER_PAIRS)
