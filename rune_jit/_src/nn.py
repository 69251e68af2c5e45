"""rune_jit.nn's implementation: activations and the softmax family, as jax.nn's.

Each is written with rune_jit.numpy, so it works eagerly, under jit and under every
transformation. Stable at extremes: softplus and log_sigmoid of ±1000, softmax and
logsumexp of logits around 1e4, logsumexp of all -inf (-inf, derivative 0) give
finite values and finite derivatives. Derivatives at kinks follow JAX: relu, relu6
and leaky_relu take the derivative of the left piece at 0 (0 for relu).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import numpy as rnp
from .numpy._core import accept, dtype_weak, normalize_axis, shape_of
from .control_flow import stop_gradient
from .scipy.special import erf, logsumexp as _logsumexp

tanh = rnp.tanh


def _float(x: Any) -> Any:
    """x as an array, ints and bools in rune_jit.numpy's float for them (as jax.nn)."""
    x = rnp.asarray(accept(x, "rune_jit.nn"))
    return x if dtype_weak(x)[0].kind == "f" else rnp.astype(x, np.float64)


def relu(x: Any) -> Any:
    """max(x, 0), with derivative 0 at 0 (as jax.nn.relu).

    >>> relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
    """
    x = rnp.asarray(accept(x, "rune_jit.nn.relu"))
    return rnp.where(x > 0, x, 0)


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with derivative 0 at 0 and at 6 (as jax.nn.relu6).

    >>> relu6(np.array([-1.0, 3.0, 8.0]))
    array([0., 3., 6.])
    """
    x = rnp.asarray(accept(x, "rune_jit.nn.relu6"))
    return rnp.where(x > 0, rnp.where(x < 6, x, 6), 0)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow for either sign.

    >>> print(np.round(sigmoid(np.array([-1000.0, 0.0, 1000.0])), 4))
    [0.  0.5 1. ]
    """
    from .scipy.special import expit

    x = _float(x)
    return rnp.astype(expit(x), dtype_weak(x)[0])


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0): softplus(1000) is 1000, softplus(-1000) 0.

    >>> print(np.round(softplus(np.array([-1000.0, 0.0, 1000.0])), 4).tolist())
    [0.0, 0.6931, 1000.0]
    """
    return rnp.logaddexp(_float(x), 0.0)


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x): log_sigmoid(-1000) is -1000.

    >>> print(np.round(log_sigmoid(np.array([-1000.0, 0.0])), 4).tolist())
    [-1000.0, -0.6931]
    """
    return -softplus(-_float(x))


def silu(x: Any) -> Any:
    """x * sigmoid(x) (swish).

    >>> print(np.round(silu(np.array([-1.0, 0.0, 2.0])), 4))
    [-0.2689  0.      1.7616]
    """
    x = _float(x)
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit, as jax.nn.gelu: with `approximate` (the default)
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))), else x (1 + erf(x / sqrt 2)) / 2.

    >>> print(np.round(gelu(np.array([-1.0, 1.0])), 4))
    [-0.1588  0.8412]
    >>> print(np.round(gelu(np.array([-1.0, 1.0]), approximate=False), 4))
    [-0.1587  0.8413]
    """
    x = _float(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + rnp.tanh(inner))
    return rnp.astype(x * (erf(x / math.sqrt(2)) + 1) / 2, dtype_weak(x)[0])


def elu(x: Any, alpha: float = 1.0) -> Any:
    """x for x > 0, alpha (exp(x) - 1) otherwise.

    >>> print(np.round(elu(np.array([-1.0, 2.0])), 4))
    [-0.6321  2.    ]
    """
    x = _float(x)
    safe = rnp.where(x > 0, 0.0, x)  # expm1 of the other side never overflows
    return rnp.where(x > 0, x, alpha * rnp.expm1(safe))


def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise.

    >>> leaky_relu(np.array([-2.0, 3.0]))
    array([-0.02,  3.  ])
    """
    x = _float(x)
    return rnp.where(x >= 0, x, negative_slope * x)


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha expm1(min(x, 0) / alpha), as jax.nn.celu.

    >>> print(np.round(celu(np.array([-1.0, 2.0]), alpha=2.0), 4))
    [-0.7869  2.    ]
    """
    x = _float(x)
    return rnp.maximum(x, 0.0) + alpha * rnp.expm1(rnp.minimum(x, 0.0) / alpha)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalising constants of Klambauer et al.

    >>> print(np.round(selu(np.array([-1.0, 1.0])), 4))
    [-1.1113  1.0507]
    """
    return SELU_SCALE * elu(x, SELU_ALPHA)


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: a * sigmoid(b) for x's two halves a, b along `axis`.

    >>> print(np.round(glu(np.array([1.0, 2.0, 0.0, 100.0])), 4))
    [0.5 2. ]
    """
    x = _float(x)
    size = shape_of(x)[normalize_axis(axis, len(shape_of(x)), "rune_jit.nn.glu")]
    if size % 2:
        raise ValueError(f"rune_jit.nn.glu: the size of axis {axis} must be even, got {size}")
    a, b = rnp.split(x, 2, axis)
    return a * sigmoid(b)


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6, a piecewise-linear sigmoid.

    >>> print(np.round(hard_sigmoid(np.array([-4.0, 0.0, 1.5])), 4))
    [0.   0.5  0.75]
    """
    return relu6(_float(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x) (hard_swish).

    >>> print(np.round(hard_silu(np.array([-4.0, 1.0])), 4))
    [-0.      0.6667]
    """
    x = _float(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1] (derivative 0 outside, as jax.nn.hard_tanh).

    >>> hard_tanh(np.array([-2.0, 0.5, 3.0]))
    array([-1. ,  0.5,  1. ])
    """
    x = _float(x)
    return rnp.where(x > 1, 1.0, rnp.where(x < -1, -1.0, x))


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1).

    >>> soft_sign(np.array([-3.0, 1.0]))
    array([-0.75,  0.5 ])
    """
    x = _float(x)
    return x / (rnp.abs(x) + 1)


def mish(x: Any) -> Any:
    """x * tanh(softplus(x)).

    >>> print(np.round(mish(np.array([-1.0, 1.0])), 4))
    [-0.3034  0.8651]
    """
    x = _float(x)
    return x * rnp.tanh(softplus(x))


def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x² + b)) / 2, a smooth relu.

    >>> print(np.round(squareplus(np.array([-1.0, 0.0, 3.0])), 4))
    [0.618  1.     3.3028]
    """
    x = _float(x)
    return (x + rnp.sqrt(x * x + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, x for x >= 1, (x + 1)² / 4 between (as jax.nn.sparse_plus).

    >>> sparse_plus(np.array([-2.0, 0.0, 2.0]))
    array([0.  , 0.25, 2.  ])
    """
    x = _float(x)
    return rnp.where(x <= -1.0, 0.0, rnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """clip(x + 1, 0, 2) / 2, sparse_plus's derivative.

    >>> sparse_sigmoid(np.array([-2.0, 0.0, 0.5]))
    array([0.  , 0.5 , 0.75])
    """
    return 0.5 * rnp.clip(_float(x) + 1.0, 0.0, 2.0)


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x > 0, accurate at both ends (Mächler's switch at log 2).

    >>> print(np.round(log1mexp(np.array([1e-10, 1.0, 50.0])), 4))
    [-23.0259  -0.4587  -0.    ]
    """
    x = _float(x)
    small = x < math.log(2.0)
    # each branch sees an argument where it is finite, so neither poisons the gradient
    near = rnp.log(-rnp.expm1(-rnp.where(small, x, 1.0)))
    far = rnp.log1p(-rnp.exp(-rnp.where(small, 1.0, x)))
    return rnp.where(small, near, far)


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) along `axis`, over the entries `where` is True (all by default).

    >>> print(np.round(logmeanexp(np.array([0.0, np.log(3.0)])), 4))
    0.6931
    """
    x = _float(x)
    if where is None:
        lse = _logsumexp(x, axis=axis, keepdims=keepdims)
        count = rnp.sum(rnp.ones_like(x), axis=axis, keepdims=keepdims)
    else:
        lse = _logsumexp(rnp.where(where, x, -np.inf), axis=axis, keepdims=keepdims)
        count = rnp.sum(rnp.where(where, 1.0, 0.0), axis=axis, keepdims=keepdims)
    return lse - rnp.log(count)


def identity(x: Any) -> Any:
    """x, as an array (jax.nn.identity, the activation that does nothing).

    >>> identity(np.array([1.0, -2.0]))
    array([ 1., -2.])
    """
    return rnp.asarray(accept(x, "rune_jit.nn.identity"))


def _max_shift(x: Any, axis: Any) -> Any:
    m = rnp.max(x, axis=axis, keepdims=True)
    return stop_gradient(rnp.where(rnp.isfinite(m), m, 0.0))


def softmax(x: Any, axis: Any = -1) -> Any:
    """exp(x) / sum(exp(x)) along `axis`, shifted by the maximum (logits of 1e4 are fine).

    >>> print(np.round(softmax(np.array([1e4, 1e4 + 1.0])), 4))
    [0.2689 0.7311]
    """
    x = _float(x)
    e = rnp.exp(x - _max_shift(x, axis))
    return e / rnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """x - logsumexp(x) along `axis`.

    >>> print(np.round(log_softmax(np.array([0.0, 1e4])), 4).tolist())
    [-10000.0, 0.0]
    """
    x = _float(x)
    shifted = x - _max_shift(x, axis)
    return shifted - rnp.log(rnp.sum(rnp.exp(shifted), axis=axis, keepdims=True))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) along `axis` (jax.nn.logsumexp, scipy.special.logsumexp).

    >>> print(np.round(logsumexp(np.array([1e4, 1e4])), 4))
    10000.6931
    """
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def one_hot(x: Any, num_classes: int, *, dtype: Any = np.float64, axis: int = -1) -> Any:
    """x's integers as one-hot vectors of `num_classes` along a new `axis` (an index out
    of range gives a row of zeros), as jax.nn.one_hot.

    >>> one_hot(np.array([0, 2, 5]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 0., 0.]])
    """
    x = rnp.asarray(accept(x, "rune_jit.nn.one_hot"))
    ndim = len(shape_of(x)) + 1
    axis = normalize_axis(axis, ndim, "rune_jit.nn.one_hot")
    classes = rnp.reshape(rnp.arange(int(num_classes)),
                          tuple(-1 if i == axis else 1 for i in range(ndim)))
    return rnp.astype(rnp.expand_dims(x, axis) == classes, dtype)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: float = 1e-5) -> Any:
    """(x - mean) / sqrt(variance + epsilon), mean and variance along `axis` unless
    given (the variance as E[x²] - E[x]², as jax.nn.standardize).

    >>> print(np.round(standardize(np.array([1.0, 2.0, 3.0])), 4))
    [-1.2247  0.      1.2247]
    """
    x = _float(x)
    if mean is None:
        mean = rnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = rnp.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) / rnp.sqrt(variance + epsilon)


__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax",
           "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid",
           "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]
