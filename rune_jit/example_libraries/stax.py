"""JAX's `example_libraries.stax` for rune_jit: layers as `(init_fun, apply_fun)` pairs
and the combinators `serial`, `parallel`, `FanOut`, `FanInSum`, `FanInConcat`.

>>> from rune_jit.example_libraries import stax
>>> init, apply = stax.serial(stax.Dense(3), stax.Tanh, stax.Dense(1))
>>> out_shape, params = init(rune.random.PRNGKey(0), (-1, 2))
>>> out_shape, apply(params, np.ones((4, 2))).shape
((-1, 1), (4, 1))
"""

from .._src.stax import (Dense, Elu, Exp, FanInConcat, FanInSum, FanOut, Flatten, Gelu,
                         Identity, LeakyRelu, LogSoftmax, Relu, Sigmoid, Softmax, Softplus,
                         Tanh, elementwise, parallel, serial)

__all__ = ["Dense", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
           "Identity", "LeakyRelu", "LogSoftmax", "Relu", "Sigmoid", "Softmax", "Softplus",
           "Tanh", "elementwise", "parallel", "serial"]
