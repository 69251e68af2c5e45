"""No size limit (issue 18): lowering, the passes and printing have no recursion whose
depth grows with a program, so long fused chains, long polynomials and long loop steps
compile and agree with the interpreter. Their times (a 2-core Zen 5, the test's whole
run: the interpreter's too) are in each docstring, as budgets to watch, not asserted. A
long region is lowered in parts, each an LLVM function of its own (backend/cpu/codegen/chunks.py,
tests/backend/test_long_regions_in_parts.py), so LLVM's time grows linearly with it."""

import warnings

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config

# compiled as traced: their repeated operations, not a loop over them
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("layers_as_written")]


def _agree(f, *args, rtol=1e-12):
    with warnings.catch_warnings():  # the unrolled-loop warning is meant for these
        warnings.simplefilter("ignore")
        got = rune.jit(f)(*args)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(config, "backend", "interpret")
            want = rune.jit(f)(*args)
    np.testing.assert_allclose(got, want, rtol=rtol)
    return got


def test_a_fused_chain_of_ten_thousand_operations():
    """sin and a multiply alternated 5000 times over 64 elements: one fused loop body of
    10,000 operations (a chain of ~325 once raised RecursionError). About 3.5 s."""
    def chain(x):
        for _ in range(5000):
            x = rnp.sin(x) * 1.0001
        return x

    _agree(chain, np.linspace(0.1, 1.0, 64))


def test_a_horner_polynomial_of_degree_two_thousand():
    """acc = acc * x + c, 2000 times, on 8 elements. About 2 s."""
    coefs = np.random.default_rng(0).normal(size=2001) / 2001

    def horner(x):
        acc = x * 0.0
        for c in coefs:
            acc = acc * x + c
        return acc

    got = _agree(horner, np.linspace(-0.9, 0.9, 8))
    np.testing.assert_allclose(got, np.polyval(coefs, np.linspace(-0.9, 0.9, 8)), rtol=1e-10)


def test_a_scan_step_of_five_thousand_operations_and_its_gradient():
    """A step of 5000 operations (1667 sin-multiply-adds) on a scalar carry, 10 steps, and
    the gradient of the loss. About 14 s in all; compiling takes 0.7 s, and 2.4 s for
    the gradient (as one LLVM function: 2 s and 14 s)."""
    def step(c, x):
        for _ in range(1667):
            c = rnp.sin(c) * 1.0001 + x
        return c, c

    def loss(c0, xs):
        return rnp.sum(rune.scan(step, c0, xs)[1])

    c0, xs = np.float64(0.3), np.full(10, 0.01)
    _agree(loss, c0, xs)
    _agree(rune.grad(loss), c0, xs, rtol=1e-10)
