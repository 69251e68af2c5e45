"""Every function of our own compiled apart (backend/cpu/codegen/vecmath/outlined.py:
all of float64's, some of float32's: the registry's), float64 and float32: each element gets the same bits
on every path (a vectorized loop, its scalar remainder, one value, 8 unrolled elements,
lane blocks of a vmapped iterate, a small carry of a scan step), the loop calls the
kernel's vector variant once per vector (no call per element), and the interpreter
agrees to an ulp or two. Their accuracy is tested by each family's own file."""

import re

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from rune_jit._src.backend.cpu.codegen.vecmath import outlined
from machine_code import VECTOR_F64, VECTOR_FMA, called, kernel_apart

pytestmark = pytest.mark.skipif(config.math != "own", reason="RUNE_JIT_MATH=libmvec")

APART = sorted(name[:-len("_kernel")] for name in outlined.KERNELS if name.endswith("_kernel"))
NUMPY_NAMES = {"pow": "power"}
BINARY = {"pow", "arctan2"}
DTYPES = [np.float64, np.float32]


def function(name: str):
    name = NUMPY_NAMES.get(name, name)
    return getattr(rnp, name, None) or getattr(rune.scipy.special, name)


def arguments(name: str, dtype, n: int = 203) -> tuple[np.ndarray, ...]:
    """n values: ordinary ones, magnitudes over many binades (huge ones take trig's slow
    reduction in some lanes of a vector only) and the special values, shuffled."""
    rng = np.random.default_rng(7)

    def one(low: float, high: float) -> np.ndarray:
        spread = 2.0 ** rng.uniform(-60, 80, 40) * rng.choice([-1.0, 1.0], 40)
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1e22, -3.0]
        x = np.concatenate([rng.uniform(low, high, n - 50), spread, special])
        with np.errstate(over="ignore"):
            return rng.permutation(x).astype(dtype)
    if name == "pow":
        return np.abs(one(0, 4)), one(-8, 8)  # and some negative x: NaN or a sign
    return tuple(one(-6, 6) for _ in range(2 if name in BINARY else 1))


# the quick run's sample: a kernel of each family (trig's slow path, two arguments,
# float32 widened to float64's kernels, the exp/log tables); -m slow runs them all
QUICK = {"sin", "pow", "erf", "exp", "arcsin", "arctan2"}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow)
                                  for n in APART])
def test_same_bits_on_every_path(name, dtype):
    f = function(name)
    xs = arguments(name, dtype)
    if name == "pow":
        xs = (np.where(np.arange(xs[0].size) % 7 == 0, -xs[0], xs[0]), xs[1])
    with np.errstate(all="ignore"):
        looped = rune.jit(f)(*xs)
        eager = np.asarray(f(*xs))
    one = rune.jit(f)
    np.testing.assert_array_equal(np.array([one(*v) for v in zip(*(x[:40] for x in xs))],
                                           dtype), looped[:40])
    unrolled = np.concatenate([rune.jit(f)(*(x[i:i + 8] for x in xs)) for i in range(0, 64, 8)])
    np.testing.assert_array_equal(unrolled, looped[:64])
    laned = rune.jit(rune.vmap(lambda *v: rune.iterate(  # one step: f of the arguments
        lambda c: ((f(*c[0]),) + c[0][1:], c[1] + 1), (v, np.int64(0)),
        until=lambda c: c[1] >= 1, max_steps=1)[0][0]))(*xs)
    np.testing.assert_array_equal(laned, looped)
    rows = tuple(x[:64].reshape(8, 8) for x in xs)
    scanned = rune.jit(lambda *r: rune.scan(lambda c, v: (c, f(*v)), np.float64(0.0), r)[1])
    np.testing.assert_array_equal(scanned(*rows), looped[:64].reshape(8, 8))
    np.testing.assert_allclose(looped, eager, rtol=4 * np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", APART)
def test_called_once_per_vector(name, dtype):
    """A map over 10^5 elements calls the kernel's vector variant (its code vector
    code, compiled apart) and otherwise only its scalar definition for the remainder;
    a float32 kernel not apart is inlined, its loop vector code without a call."""
    xs = [np.full(100_000, 0.5, dtype)] * (2 if name in BINARY else 1)
    lowered = rune.jit(function(name)).lower(*xs)
    if not outlined.apart_here(name + ("_kernel" if dtype == np.float64 else "_kernel_short")):
        asm = lowered.asm  # inlined (float32, or log where vectors are narrow)
        assert not called(asm) and re.search(VECTOR_FMA, asm), (name, dtype)
    else:
        assert re.search(VECTOR_F64, kernel_apart(lowered, name)), (name, dtype)
