"""rune_jit.nn.initializers: jax.nn.initializers' builders, init(key, shape, dtype)
drawing JAX's numbers for the same key (float64 unless `dtype` says).

>>> import rune_jit as rune
>>> w = rune.nn.initializers.glorot_uniform()(rune.random.PRNGKey(0), (3, 4))
>>> w.shape, w.dtype
((3, 4), dtype('float64'))
"""

from .._src.initializers import (Initializer, constant, delta_orthogonal, glorot_normal,
                                 glorot_uniform, he_normal, he_uniform, kaiming_normal,
                                 kaiming_uniform, lecun_normal, lecun_uniform, normal, ones,
                                 orthogonal, truncated_normal, uniform, variance_scaling,
                                 xavier_normal, xavier_uniform, zeros)

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]
