"""JAX's `example_libraries.optimizers`, written for rune_jit: each optimizer is a triple
`(init, update, get_params)` over a pytree of parameters, its state a pytree (so it can
be a `jit` argument, a loop carry, and flow through every transformation).

An optimizer is written for one array (`init(x) -> state`, `update(i, g, state) ->
state`, `get_params(state) -> x`); `optimizer` lifts it to pytrees of arrays. Step sizes
are numbers or schedules (`i -> step size`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from . import numpy as rnp
from . import tree as pytree

Schedule = Callable[[Any], Any]


class OptimizerState(NamedTuple):
    """The state of every parameter (a list, one state per leaf of the parameters) and
    the parameters' structure. A pytree whose leaves are the states' arrays."""

    states: list
    treedef: Any


pytree.register(OptimizerState, lambda s: ((s.states,), s.treedef),
                lambda treedef, kids: OptimizerState(kids[0], treedef))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]) -> Callable:
    """Lift an optimizer written for one array to pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def init_fn(params: Any) -> OptimizerState:
            leaves, treedef = pytree.flatten(params)
            return OptimizerState([init(x) for x in leaves], treedef)

        def update_fn(i: Any, grads: Any, state: OptimizerState) -> OptimizerState:
            g_leaves = pytree.flatten_as(state.treedef, grads, "grads")
            return OptimizerState([update(i, g, s) for g, s in zip(g_leaves, state.states)],
                                  state.treedef)

        def params_fn(state: OptimizerState) -> Any:
            return pytree.unflatten(state.treedef, [get_params(s) for s in state.states])

        return Optimizer(init_fn, update_fn, params_fn)

    return tree_opt_maker


def make_schedule(step_size: float | Schedule) -> Schedule:
    """`step_size` as a schedule: a callable is one already, a number is constant."""
    return step_size if callable(step_size) else constant(step_size)


def constant(step_size: float) -> Schedule:
    """The schedule `i -> step_size`."""
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """`i -> step_size * decay_rate ** (i / decay_steps)`."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """`i -> step_size / (1 + decay_rate * i / decay_steps)` (floored with staircase)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * rnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps, as `(1 - t)**power`."""
    def schedule(i: Any) -> Any:
        t = rnp.minimum(i, decay_steps) / decay_steps
        return (step_size - final_step_size) * (1 - t) ** power + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """`values[k]` for steps from `boundaries[k-1]` up to `boundaries[k]`."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(f"piecewise_constant: {boundaries.shape[0]} boundaries need "
                         f"{boundaries.shape[0] + 1} values, got {values.shape[0]}")
    return lambda i: rnp.asarray(values)[rnp.sum(i > boundaries)]


@optimizer
def sgd(step_size: float | Schedule):
    """Stochastic gradient descent: `x - step_size(i) * g`."""
    step = make_schedule(step_size)
    return (lambda x: x), (lambda i, g, x: x - step(i) * g), (lambda x: x)


def _heavy_ball(step_size: float | Schedule, mass: float, lookahead: bool):
    step = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step(i) * (mass * v + g if lookahead else v), v
    return (lambda x: (x, rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def momentum(step_size: float | Schedule, mass: float):
    """Heavy-ball momentum: `v = mass * v + g; x - step_size(i) * v`."""
    return _heavy_ball(step_size, mass, lookahead=False)


@optimizer
def nesterov(step_size: float | Schedule, mass: float):
    """Nesterov's accelerated gradient: the step looks ahead along `v`."""
    return _heavy_ball(step_size, mass, lookahead=True)


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9):
    """Adagrad with momentum: steps scaled by the root of the summed squared gradients."""
    step = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        safe = rnp.where(g_sq > 0, g_sq, 1.0)
        m = (1 - momentum) * rnp.where(g_sq > 0, g / rnp.sqrt(safe), 0.0) + momentum * m
        return x - step(i) * m, g_sq, m
    return (lambda x: (x, rnp.zeros_like(x), rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8):
    """RMSProp: steps scaled by a running root mean square of the gradients."""
    step = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + g * g * (1 - gamma)
        return x - step(i) * g / rnp.sqrt(avg_sq + eps), avg_sq
    return (lambda x: (x, rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9):
    """RMSProp with momentum."""
    step = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + g * g * (1 - gamma)
        mom = momentum * mom + step(i) * g / rnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return (lambda x: (x, rnp.zeros_like(x), rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """Adam (Kingma and Ba, 2015), with bias-corrected moments."""
    step = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        t = rnp.asarray(i) + 1
        m_hat = m / (1 - rnp.asarray(b1, x.dtype) ** t)
        v_hat = v / (1 - rnp.asarray(b2, x.dtype) ** t)
        return x - step(i) * m_hat / (rnp.sqrt(v_hat) + eps), m, v
    return (lambda x: (x, rnp.zeros_like(x), rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8):
    """Adamax: Adam with the infinity norm of the gradients."""
    step = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = rnp.maximum(b2 * u, rnp.abs(g))
        t = rnp.asarray(i) + 1
        return x - step(i) / (1 - rnp.asarray(b1, x.dtype) ** t) * m / (u + eps), m, u
    return (lambda x: (x, rnp.zeros_like(x), rnp.zeros_like(x))), update, (lambda s: s[0])


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9):
    """SM3 (Anil et al., 2019): one accumulator per axis of each parameter."""
    step = make_schedule(step_size)

    def init(x):
        x = rnp.asarray(x)
        vs = [rnp.zeros(n, x.dtype) for n in x.shape]
        return x, rnp.zeros_like(x), vs

    def update(i, g, state):
        x, m, vs = state
        ndim = len(vs)
        axes = [[-1 if d == k else 1 for d in range(ndim)] for k in range(ndim)]
        v = (functools.reduce(rnp.minimum, [rnp.reshape(v, a) for v, a in zip(vs, axes)])
             if ndim else rnp.zeros_like(x))
        v = v + g * g
        safe = rnp.where(v > 0, v, 1.0)
        m = (1 - momentum) * rnp.where(v > 0, g / rnp.sqrt(safe), 0.0) + momentum * m
        vs = [rnp.max(v, axis=tuple(d for d in range(ndim) if d != k)) for k in range(ndim)]
        return x - step(i) * m, m, vs
    return init, update, (lambda s: s[0])


def l2_norm(tree: Any) -> Any:
    """The Euclidean norm of all of a pytree's leaves together."""
    return rnp.sqrt(sum(rnp.sum(rnp.square(x)) for x in pytree.leaves(tree)))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled down so that their joint norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    scale = rnp.where(norm < max_norm, 1.0, max_norm / norm)
    return pytree.tree_map(lambda g: g * scale, grad_tree)


class JoinPoint:
    """One parameter's state, held as a leaf where the parameter was (so that a state of
    tuples is not read as part of the parameters' structure)."""

    def __init__(self, state: Any):
        self.state = state


def unpack_optimizer_state(state: OptimizerState) -> Any:
    """The per-parameter states in the parameters' structure, each in a `JoinPoint`."""
    return pytree.unflatten(state.treedef, [JoinPoint(s) for s in state.states])


def pack_optimizer_state(marked: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    joins, treedef = pytree.flatten(marked)
    return OptimizerState([j.state for j in joins], treedef)
