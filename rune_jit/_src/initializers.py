"""jax.nn.initializers over rune_jit.random: each builder returns init(key, shape,
dtype) drawing JAX's numbers for the same key (float64 unless `dtype` says, JAX's
default with x64)."""

from __future__ import annotations

import math
import operator
from typing import Any, Protocol, Sequence

import numpy as np

from . import numpy as rnp
from . import random

F64 = np.dtype(np.float64)
TRUNCATED_STDDEV = 0.87962566103423978  # of a standard normal truncated to (-2, 2)
Axes = int | Sequence[int]


class Initializer(Protocol):
    """What the builders return: init(key, shape, dtype=float64) -> array."""

    def __call__(self, key: Any, shape: Any, dtype: Any = None) -> Any: ...


def _dtype(dtype: Any) -> np.dtype:
    return F64 if dtype is None else np.dtype(dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    items = (shape,) if isinstance(shape, (int, np.integer)) else shape
    return tuple(operator.index(s) for s in items)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (the key is unused).

    >>> zeros(None, (2,))
    array([0., 0.])
    """
    return np.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Any, dtype: Any = None) -> Any:
    """An array of ones (the key is unused).

    >>> ones(None, (2,), np.float32)
    array([1., 1.], dtype=float32)
    """
    return np.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling the shape with `value`.

    >>> constant(-7.0)(None, (2,))
    array([-7., -7.])
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return rnp.full(_shape(shape), value, dtype=_dtype(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale).

    >>> print(np.round(uniform(1.0)(random.PRNGKey(0), (2,)), 4))
    [0.4185 0.2163]
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and `stddev`.

    >>> print(np.round(normal(1.0)(random.PRNGKey(0), (2,)), 4))
    [-0.2058 -0.7848]
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)

    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer drawing stddev * (a standard normal truncated to (lower, upper)).

    >>> print(np.round(truncated_normal(1.0)(random.PRNGKey(0), (2,)), 4))
    [-0.1964 -0.7415]
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        draws = random.truncated_normal(key, lower, upper, shape, dtype)
        return draws * np.asarray(stddev, dtype)

    return init


def _size(shape: tuple[int, ...], axes: Axes) -> int:
    if isinstance(axes, (int, np.integer)):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _fans(shape: tuple[int, ...], in_axis: Axes, out_axis: Axes,
          batch_axis: Axes) -> tuple[float, float]:
    """(fan_in, fan_out) as JAX counts them: the in and out sizes times the receptive
    field (what is left of the shape after the in, out and batch axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"rune_jit.nn.initializers: cannot compute the fans of a "
                         f"{len(shape)}-dimensional shape {shape} with the default in_axis; "
                         "give in_axis (and out_axis) or a shape of at least 2 axes")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * field, out_size * field


MODES = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
         "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: (i * o) ** 0.5}
DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: Axes = -2,
                     out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: Any = None) -> Initializer:
    """An initializer whose draws have variance scale / n, n the fan `mode` picks
    ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"), from `distribution`
    ("truncated_normal" to (-2, 2) rescaled, "normal" or "uniform").

    >>> w = variance_scaling(2.0, "fan_in", "normal")(random.PRNGKey(0), (400, 300))
    >>> print(round(float(w.var() * 400), 1))
    2.0
    """
    where = "rune_jit.nn.initializers.variance_scaling"
    if mode not in MODES:
        raise ValueError(f"{where}: invalid mode {mode!r}; expected one of {sorted(MODES)}")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"{where}: invalid distribution {distribution!r}; expected one of "
                         f"{list(DISTRIBUTIONS)}")

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        variance = np.asarray(scale / MODES[mode](*_fans(shape, in_axis, out_axis,
                                                          batch_axis)), dtype)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * np.sqrt(3 * variance)

    return init


def _scaled(scale: float, mode: str, distribution: str, doc: str):
    def builder(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)

    builder.__doc__ = doc
    return builder


glorot_uniform = _scaled(1.0, "fan_avg", "uniform", """variance_scaling(1, "fan_avg",
    "uniform") (Glorot and Bengio's).

    >>> glorot_uniform()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal", """variance_scaling(1,
    "fan_avg", "truncated_normal").

    >>> glorot_normal()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
lecun_uniform = _scaled(1.0, "fan_in", "uniform", """variance_scaling(1, "fan_in",
    "uniform").

    >>> lecun_uniform()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal", """variance_scaling(1, "fan_in",
    "truncated_normal").

    >>> lecun_normal()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
he_uniform = _scaled(2.0, "fan_in", "uniform", """variance_scaling(2, "fan_in", "uniform")
    (He et al.'s).

    >>> he_uniform()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
he_normal = _scaled(2.0, "fan_in", "truncated_normal", """variance_scaling(2, "fan_in",
    "truncated_normal").

    >>> he_normal()(random.PRNGKey(0), (3, 4)).shape
    (3, 4)
    """)
for _f, _n in ((glorot_uniform, "glorot_uniform"), (glorot_normal, "glorot_normal"),
               (lecun_uniform, "lecun_uniform"), (lecun_normal, "lecun_normal"),
               (he_uniform, "he_uniform"), (he_normal, "he_normal")):
    _f.__name__ = _f.__qualname__ = _n
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (scaled) matrices with orthonormal columns along `column_axis`,
    the other axes flattened into rows (random.orthogonal's draws).

    >>> w = orthogonal()(random.PRNGKey(0), (4, 3))
    >>> print(np.round(w.T @ w, 6) + 0.0)
    [[1. 0. 0.]
     [0. 1. 0.]
     [0. 0. 1.]]
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"rune_jit.nn.initializers.orthogonal: needs a shape of at "
                             f"least 2 axes, got {shape}")
        if 0 in shape:
            return np.zeros(shape, dtype)
        cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // cols, (), dtype, cols)
        q = rnp.reshape(q, tuple(np.delete(shape, column_axis)) + (cols,))
        return np.asarray(scale, dtype) * rnp.moveaxis(q, -1, column_axis)

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1,
                     dtype: Any = None) -> Initializer:
    """An initializer for 3-, 4- or 5-axis convolution kernels: zero but for an
    orthogonal [in, out] matrix at the spatial centre (Xiao et al.'s delta-orthogonal).

    >>> w = delta_orthogonal()(random.PRNGKey(0), (3, 2, 2))
    >>> print(np.round(np.abs(w).sum(axis=(1, 2)), 1) > 0)
    [False  True False]
    """
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        where = "rune_jit.nn.initializers.delta_orthogonal"
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"{where}: needs a 3, 4 or 5-axis shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"{where}: fan_in (shape[-2] = {shape[-2]}) must be at most "
                             f"fan_out (shape[-1] = {shape[-1]})")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = np.zeros(shape[:-2] + (1, 1), dtype)
        centre[tuple((k - 1) // 2 for k in shape[:-2])] = 1
        return centre * matrix

    return init


__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]
