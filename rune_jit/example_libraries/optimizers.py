"""JAX's `example_libraries.optimizers` for rune_jit: `(init, update, get_params)`
triples over pytrees of parameters.

>>> from rune_jit.example_libraries import optimizers
>>> init, update, get_params = optimizers.adam(0.1)
>>> state = init({"w": np.ones(2)})
>>> state = update(0, {"w": np.array([1.0, -1.0])}, state)
>>> np.round(get_params(state)["w"], 3)
array([0.9, 1.1])
"""

from .._src.optimizers import (JoinPoint, Optimizer, OptimizerState, Schedule, adagrad, adam,
                               adamax, clip_grads, constant, exponential_decay,
                               inverse_time_decay, l2_norm, make_schedule, momentum, nesterov,
                               optimizer, pack_optimizer_state, piecewise_constant,
                               polynomial_decay, rmsprop, rmsprop_momentum, sgd, sm3,
                               unpack_optimizer_state)

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "Schedule", "adagrad", "adam", "adamax",
           "clip_grads", "constant", "exponential_decay", "inverse_time_decay", "l2_norm",
           "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
           "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd",
           "sm3", "unpack_optimizer_state"]
