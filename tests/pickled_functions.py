"""Module-level functions for tests/compiler/test_pickle.py: a process that unpickles them (spawn,
forkserver) imports them from here by name."""

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp


@rune.jit
def running_product(x):
    return rune.scan(lambda c, r: (c * r, c), np.float64(1.0), x)[0]


def power_sum(x, n):
    return rnp.sum(x ** n)


power_sum_jit = rune.jit(power_sum, static_argnums=1)
grad_of_power_sum = rune.grad(power_sum)
jit_vmap_grad = rune.jit(rune.vmap(rune.grad(running_product)))


def newton_sqrt(a):
    return rune.iterate(lambda x: (x + a / x) / 2, a, until=lambda x: abs(x * x - a) < 1e-12 * a,
                        max_steps=100)
