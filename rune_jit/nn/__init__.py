"""rune_jit.nn: jax.nn's activations, the softmax family and `rune_jit.nn.initializers`.

Each is written with rune_jit.numpy, so it works eagerly, under jit and under every
transformation; derivatives at kinks follow JAX's. Not provided: jax.nn's attention and
scaled-matmul helpers (dot_product_attention, scaled_matmul, scaled_dot_general,
get_scaled_dot_general_config). docs/porting-from-jax.md lists the differences.

>>> import rune_jit.nn as nn
>>> print(np.round(nn.selu(np.array([-1.0, 1.0])), 4))
[-1.1113  1.0507]
"""

from .._src.nn import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh,
                       identity, leaky_relu, log1mexp, log_sigmoid, log_softmax, logmeanexp,
                       logsumexp, mish, one_hot, relu, relu6, selu, sigmoid, silu, soft_sign,
                       softmax, softplus, sparse_plus, sparse_sigmoid, squareplus,
                       standardize, swish, tanh)
from . import initializers

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp", "log_sigmoid",
           "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6",
           "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
           "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh"]
