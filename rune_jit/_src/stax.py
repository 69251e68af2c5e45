"""JAX's `example_libraries.stax`, written for rune_jit: a layer is a pair
`(init_fun, apply_fun)`, `init_fun(key, input_shape) -> (output_shape, params)` and
`apply_fun(params, inputs, **kwargs) -> outputs`; combinators build networks from layers.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from . import initializers, nn
from . import random
from . import numpy as rnp

Layer = tuple[Callable, Callable]


def Dense(out_dim: int, W_init: Callable | None = None, b_init: Callable | None = None
          ) -> Layer:
    """A fully connected layer, `inputs @ W + b` (W by Glorot's normal rule, b normal
    with scale 1e-6, as JAX's)."""
    W_init = W_init or initializers.glorot_normal()
    b_init = b_init or initializers.normal(1e-6)

    def init_fun(key, input_shape):
        k1, k2 = random.split(key)
        return (*input_shape[:-1], out_dim), (W_init(k1, (input_shape[-1], out_dim)),
                                              b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return rnp.dot(inputs, W) + b
    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A layer applying `fun` to its input, with no parameters."""
    return (lambda key, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(rnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(rnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Gelu = elementwise(nn.gelu)


def Identity() -> Layer:
    """A layer returning its input."""
    return elementwise(lambda x: x)


def Flatten() -> Layer:
    """A layer flattening all but the leading (batch) axis."""
    def init_fun(key, input_shape):
        return (input_shape[0], functools.reduce(lambda a, b: a * b, input_shape[1:], 1)), ()
    return init_fun, lambda params, inputs, **kwargs: rnp.reshape(inputs, (inputs.shape[0], -1))


def FanOut(num: int) -> Layer:
    """A layer giving `num` copies of its input (for `parallel`)."""
    return (lambda key, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def FanInSum() -> Layer:
    """A layer summing its list of inputs."""
    return (lambda key, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis: int = -1) -> Layer:
    """A layer concatenating its list of inputs along `axis`."""
    def init_fun(key, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return (*input_shape[0][:ax], size, *input_shape[0][ax + 1:]), ()
    return init_fun, lambda params, inputs, **kwargs: rnp.concatenate(inputs, axis)


def serial(*layers: Layer) -> Layer:
    """The layers one after the other."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(key, input_shape):
        params = []
        for init in init_funs:
            key, layer_key = random.split(key)
            input_shape, param = init(layer_key, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        keys = _keys(kwargs.pop("rng", None), len(apply_funs))
        for fun, param, key in zip(apply_funs, params, keys):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side, the i-th applied to the i-th of a list of inputs."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(key, input_shape):
        keys = random.split(key, len(init_funs))
        shapes, params = zip(*[init(k, s) for init, k, s in zip(init_funs, keys, input_shape)])
        return list(shapes), list(params)

    def apply_fun(params, inputs, **kwargs):
        keys = _keys(kwargs.pop("rng", None), len(apply_funs))
        return [f(p, x, rng=k, **kwargs) for f, p, x, k in zip(apply_funs, params, inputs, keys)]
    return init_fun, apply_fun


def _keys(key: Any, n: int) -> list:
    return list(random.split(key, n)) if key is not None else [None] * n
