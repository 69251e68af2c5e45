"""A tour of rune_jit, printed by `python -m rune_jit`."""

from __future__ import annotations

import numpy as np

import rune_jit as rune
import rune_jit.numpy as rnp


def section(title: str) -> None:
    print(f"\n== {title}")


def main() -> None:
    np.set_printoptions(precision=6, suppress=True)
    x = np.array([1.0, 2.0, 3.0])

    def f(x):
        return rnp.sum(rnp.sin(x) * x)

    section("A function and its typed IR")
    print("f(x) =", f(x))
    print(rune.make_ir(f)(x))

    section("Reverse mode: grad is linearize (jvp + partial evaluation) then transpose")
    print("grad(f)(x)          =", rune.grad(f)(x))
    print("cos(x) * x + sin(x) =", np.cos(x) * x + np.sin(x))
    print(rune.make_ir(rune.grad(f))(x))

    section("Forward mode, Hessian-vector product, Hessian")
    print("jvp:", rune.jvp(f, (x,), (np.ones(3),)))
    print("hvp:", rune.jvp(rune.grad(f), (x,), (np.ones(3),))[1])
    print("hessian:\n", rune.hessian(f)(x))

    section("vmap: per-example gradients")
    batch = np.stack([x, 2 * x])
    print(rune.vmap(rune.grad(f))(batch))

    section("cond: a branch chosen at run time, under every transformation")
    g = lambda p, a: rune.cond(p > 0, rnp.sin, lambda a: a * a, a)  # noqa: E731
    print("vmap(grad(g)) with p = [1, -1], a = 0.5:",
          rune.vmap(rune.grad(g, argnums=1))(np.array([1.0, -1.0]), np.array([0.5, 0.5])))

    section("check_grads: derivatives against central differences")
    rune.check_grads(f, x)
    print("ok")
