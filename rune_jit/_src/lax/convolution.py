"""lax's convolutions: conv_general_dilated and its spellings (conv,
conv_with_general_padding, conv_transpose), dimension numbers, and the shape helpers,
for any number of spatial dimensions.

Built as im2col from existing primitives: the input is put in (N, C, spatial...) order,
dilated and padded (`pad`), cut into one strided `slice` per kernel offset, stacked, and
contracted with the kernel by one `dot_general` over (input features, kernel offsets),
batched over feature groups. Derivatives (both operands), vmap and the compiled product
all come from those primitives. Cost: the stacked patches take prod(kernel spatial)
times the output's spatial size times N*C memory, for one large product instead of
prod(kernel spatial) small ones; a direct convolution loop would need a new primitive
with all its rules. batch_group_count > 1 raises NotImplementedError.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..numpy import _core
from ..ops import linalg as la
from ..ops.shape import reshape, rev, transpose
from ..trace import type_of_value
from .contractions import canonical_precision, operands
from .windows import dilate_pad, dilated, pairs, padtype_to_pads, stacked, window_views

WHERE = "rune_jit.lax.conv_general_dilated"


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits in a convolution's operands (lax.ConvDimensionNumbers):
    `lhs_spec` is (batch, feature, spatial...) axes of the input, `rhs_spec` (output
    feature, input feature, spatial...) of the kernel, `out_spec` (batch, feature,
    spatial...) of the result.

    >>> ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)).rhs_spec
    (0, 1, 2)
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The (lhs, rhs, out) axis orders that strings such as ("NHWC", "HWIO", "NHWC")
    name; spatial axes go in the order the kernel's string lists them.

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs, rhs, out = dimension_numbers
    roles = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(dimension_numbers, roles)):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{i}] must contain {a!r} and "
                            f"{b!r} exactly once and no repeated character, got {spec!r}")
    if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers must each have the same spatial "
                        f"characters, got {tuple(dimension_numbers)}")

    def order(spec: str, role: tuple[str, str]) -> tuple[int, ...]:
        spatial = sorted((i for i, c in enumerate(spec) if c not in role),
                         key=lambda i: rhs.index(spec[i]))
        return (spec.index(role[0]), spec.index(role[1]), *spatial)

    return tuple(order(s, r) for s, r in zip(dimension_numbers, roles))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings, or a ConvDimensionNumbers) as a
    ConvDimensionNumbers; None means ("NCH...", "OIH...", "NCH...").

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs of the same ndim, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3 or any(
            not isinstance(s, str) or len(s) != len(lhs_shape) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers must be None, a ConvDimensionNumbers "
                        f"or three strings of length {len(lhs_shape)} (the operands' ndim), "
                        f"got {dimension_numbers!r}")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The output shape of a convolution of operands in (N, C, spatial...) and (O, I,
    spatial...) order (lax.conv_shape_tuple).

    >>> conv_shape_tuple((1, 2, 5, 5), (4, 2, 3, 3), (1, 1), "SAME")
    (1, 4, 5, 5)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = pairs(pads, len(lhs_shape) - 2, "rune_jit.lax.conv_shape_tuple")
    space = tuple(0 if n + lo + hi < k else (n + lo + hi - k) // s + 1
                  for n, (lo, hi), k, s in zip(lhs_shape[2:], pads, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of conv_general_dilated without dilation.

    >>> conv_general_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (1, 1), "VALID",
    ...                          ("NHWC", "HWIO", "NHWC"))
    (1, 3, 3, 8)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, dn.lhs_spec).tolist(),
                           np.take(rhs_shape, dn.rhs_spec).tolist(), window_strides, padding)
    return tuple(int(out[i]) for i in np.argsort(dn.out_spec))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None, *, out_sharding: Any = None
                         ) -> Any:
    """lax.conv_general_dilated: a cross-correlation of `lhs` with the kernel `rhs` over
    any number of spatial dimensions, with strides, padding ("SAME", "SAME_LOWER",
    "VALID" or (low, high) pairs), input (`lhs_dilation`) and kernel (`rhs_dilation`)
    dilation, layouts from `dimension_numbers`, and feature groups.

    >>> x, k = np.arange(5.0).reshape(1, 1, 5), np.ones((1, 1, 2))
    >>> print(conv_general_dilated(x, k, (1,), "VALID"))
    [[[1. 3. 5. 7.]]]
    """
    canonical_precision(precision, WHERE)
    lhs, rhs = operands(_core.accept(lhs, WHERE), _core.accept(rhs, WHERE),
                        preferred_element_type, WHERE)
    ls, rs = type_of_value(lhs).shape, type_of_value(rhs).shape
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    x, k = transpose(lhs, dn.lhs_spec), transpose(rhs, dn.rhs_spec)
    groups = _groups(type_of_value(x).shape, type_of_value(k).shape, feature_group_count,
                     batch_group_count, ls, rs)
    n_space = len(ls) - 2
    strides = _spatial(window_strides, n_space, "window_strides")
    base = _spatial(lhs_dilation, n_space, "lhs_dilation")
    kdil = _spatial(rhs_dilation, n_space, "rhs_dilation")
    pads = _pads(padding, type_of_value(x).shape[2:], type_of_value(k).shape[2:], strides,
                 base, kdil)
    zero = np.zeros((), type_of_value(x).dtype)
    x = dilate_pad(x, [(0, 0)] * 2 + pads, (1, 1) + base, zero, WHERE)
    y = _correlate(x, k, groups, strides, kdil)
    return transpose(y, np.argsort(dn.out_spec))


def _groups(xs: tuple, ks: tuple, features: int, batches: int, ls: tuple, rs: tuple) -> int:
    """The feature group count, checked against the operands in canonical order."""
    if int(batches) != 1:
        raise NotImplementedError(f"{WHERE}: batch_group_count={batches} > 1 is not "
                                  "supported (only 1)")
    g = int(features)
    if g < 1 or xs[1] != ks[1] * g or ks[0] % g:
        raise TypeError(f"{WHERE}: with feature_group_count={g}, the input's {xs[1]} "
                        f"features must be {g} times the kernel's input features ({ks[1]}) "
                        f"and its {ks[0]} output features a multiple of {g}: lhs of shape "
                        f"{ls}, rhs of shape {rs}")
    return g


def _spatial(value: Any, n: int, name: str) -> tuple[int, ...]:
    out = (1,) * n if value is None else tuple(int(v) for v in value)
    if len(out) != n or any(v < 1 for v in out):
        raise TypeError(f"{WHERE}: {name} must be {n} positive ints (one per spatial "
                        f"dimension), got {value!r}")
    return out


def _pads(padding: Any, space: tuple, kspace: tuple, strides: tuple, base: tuple,
          kdil: tuple) -> list[tuple[int, int]]:
    if not isinstance(padding, str):
        return pairs(padding, len(space), WHERE)
    if set(base) != {1} and space:
        raise ValueError(f"{WHERE}: string padding with lhs_dilation is not supported (as in "
                         "JAX): give the padding as (low, high) pairs, or use conv_transpose")
    return padtype_to_pads(space, [dilated(w, d) for w, d in zip(kspace, kdil)], strides,
                           padding)


def _correlate(x: Any, k: Any, groups: int, strides: tuple, kdil: tuple) -> Any:
    """The grouped cross-correlation of padded x (N, C, spatial...) with k (O, I,
    spatial...), as (N, O, out spatial...)."""
    (n, c, *_), (o, i, *kspace) = type_of_value(x).shape, type_of_value(k).shape
    views, out = window_views(x, (1, 1, *kspace), (1, 1, *strides), (1, 1, *kdil))
    offsets = len(views)
    patches = reshape(stacked(views, out), (offsets, n, groups, c // groups, *out[2:]))
    kern = reshape(k, (groups, o // groups, i, offsets))
    # (G, N, out spatial..., O/G): batch G, then the patches' free axes, then the kernel's
    y = la.dot_general(patches, kern, ((0, 3), (3, 2)), ((2,), (0,)))
    last = len(out)  # the O/G axis
    y = transpose(y, (1, 0, last, *range(2, last)))
    return reshape(y, (n, o, *out[2:]))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """lax.conv: conv_general_dilated in (N, C, spatial...) and (O, I, spatial...)
    layouts with no dilation.

    >>> print(conv(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), (1, 1), "VALID"))
    [[[[4. 4.]
       [4. 4.]]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """lax.conv_with_general_padding: conv with explicit padding and dilations.

    >>> print(conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,),
    ...                                 [(1, 1)], None, None))
    [[[1. 2. 2. 1.]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


# Layouts conv_transpose takes when not told, by operand ndim (as JAX's).
TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                     4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The (low, high) padding of the dilated input that makes conv_transpose the
    gradient of a forward convolution padded by `padding` ("SAME", "VALID" or a pair)."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total, low = k + s - 2 + max(k - s, 0), k - 1
    elif isinstance(padding, tuple):
        low, total = k - padding[0] - 1, 2 * k - padding[0] - padding[1] - 2
    else:
        raise ValueError(f"rune_jit.lax.conv_transpose: padding must be 'SAME', 'VALID' or "
                         f"(low, high) pairs, got {padding!r}")
    return low, total - low


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None, use_consistent_padding: bool = False
                   ) -> Any:
    """lax.conv_transpose: the "deconvolution" (input dilated by `strides`), with
    Keras's Conv2DTranspose output padding; layouts default to ("NHWC", "HWIO", "NHWC")
    and their 1-d and 3-d forms. `transpose_kernel` flips the kernel's spatial axes and
    swaps its feature axes, making this the gradient of conv_general_dilated.

    >>> print(conv_transpose(np.ones((1, 2, 1)), np.ones((2, 1, 1)), (2,), "VALID")[..., 0])
    [[1. 1. 1. 1.]]
    """
    where = "rune_jit.lax.conv_transpose"
    ls, rs = (_core.shape_of(_core.as_value(_core.accept(v, where))) for v in (lhs, rhs))
    if len(ls) != len(rs) or len(ls) < 2:
        raise TypeError(f"{where}: lhs and rhs need the same ndim >= 2, got shapes {ls} "
                        f"and {rs}")
    if dimension_numbers is None:
        if len(ls) not in TRANSPOSE_LAYOUTS:
            raise ValueError(f"{where}: no default dimension_numbers for {len(ls)}-d operands")
        dimension_numbers = TRANSPOSE_LAYOUTS[len(ls)]
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    kspace = [rs[a] for a in dn.rhs_spec[2:]]
    kdil = _spatial(rhs_dilation, len(kspace), "rhs_dilation")
    pads = padding
    if use_consistent_padding or padding in ("SAME", "VALID"):
        each = [padding] * len(kspace) if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = [conv_transpose_padding(dilated(k, d), s, p)
                for k, d, s, p in zip(kspace, kdil, strides, each)]
    if transpose_kernel:
        rhs = _flipped_kernel(_core.as_value(_core.accept(rhs, where)), dn)
    return conv_general_dilated(lhs, rhs, (1,) * len(kspace), pads, strides, kdil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _flipped_kernel(rhs: Any, dn: ConvDimensionNumbers) -> Any:
    """The kernel with its spatial axes reversed and its two feature axes swapped."""
    o, i = dn.rhs_spec[:2]
    perm = list(range(len(dn.rhs_spec)))
    perm[o], perm[i] = i, o
    return transpose(rev(rhs, tuple(dn.rhs_spec[2:])), perm)


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of conv_transpose (lax.conv_transpose_shape_tuple).

    >>> conv_transpose_shape_tuple((1, 2, 1), (2, 1, 1), (2,), "VALID", ("NHC", "HIO", "NHC"))
    (1, 4, 1)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lt, rt = np.take(lhs_shape, dn.lhs_spec).tolist(), np.take(rhs_shape, dn.rhs_spec).tolist()
    if isinstance(padding, str):
        padding = [conv_transpose_padding(k, s, padding) for k, s in zip(rt[2:], window_strides)]
    space = [(i - 1) * s - k + 2 + sum(p)
             for i, k, s, p in zip(lt[2:], rt[2:], window_strides, padding)]
    out = [lt[0], rt[0], *space]
    return tuple(int(out[i]) for i in np.argsort(dn.out_spec))

