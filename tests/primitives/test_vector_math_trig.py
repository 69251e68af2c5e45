"""sin, cos, tan, arctan, arcsin and arccos of our own (backend/cpu/codegen/vecmath/trig.py,
inverse_trig.py): within 1 ulp of the correctly rounded result (mpmath) in float64 and
float32 over the whole domain, IEEE special values as NumPy's, the same bits on every
path (a vectorized loop, its scalar remainder, one value, a small carry, lane blocks),
and derivatives unaffected."""

import os
import re
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from rune_jit._src.backend.cpu.codegen.vecmath import outlined
from rune_jit._src.backend.cpu.codegen.vecmath.trig import SMALL
from machine_code import CALL, VECTOR_F64, kernel_apart
from ulp_oracle import correctly_rounded, ulp_errors

# these test our own code, which RUNE_JIT_MATH=libmvec replaces by glibc's (tested last)
pytestmark = pytest.mark.skipif(config.math != "own", reason="RUNE_JIT_MATH=libmvec")

FUNCTIONS = {"sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "arctan": mpmath.atan,
             "arcsin": mpmath.asin, "arccos": mpmath.acos}
BOUNDED = ["arcsin", "arccos"]  # defined on [-1, 1]
LIBM = {"arctan": "atan", "arcsin": "asin", "arccos": "acos"}
DTYPES = [np.float64, np.float32]
# the closest doubles come to a multiple of pi/2 (Muller, "Elementary Functions",
# ch. 11), both reductions' bound 2^30 and its neighbours, and the largest float
HARD = [6381956970095103 * 2.0 ** 797, 5.319372648326541e255, 2.0 ** 30,
        np.nextafter(2.0 ** 30, 0), 1e22, 355.0, 1.5707963267948966, 3.141592653589793]


def samples(dtype, n: int, seed: int = 0, name: str = "sin") -> np.ndarray:
    """Log-uniform over every binade (subnormals to the largest float, or to 1 for
    arcsin and arccos), both signs; uniform on [-10, 10] (on [-1, 1]); and the hard
    cases: next to multiples of pi/2 (the reduction's), or next to ±1 and ±1/2."""
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    top = 1.0 if name in BOUNDED else float(info.max)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(top)
    spread = 2.0 ** rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    if name in BOUNDED:
        side = rng.choice([-1.0, 1.0], n // 4)
        hard = np.concatenate([side * (1 - 2.0 ** -rng.uniform(1, 53, n // 4)),
                               side * 0.5 * (1 + rng.uniform(-1e-6, 1e-6, n // 4)),
                               [1.0, -1.0, 0.5, -0.5]])
        middle = rng.uniform(-1, 1, n // 2)
    else:
        hard = np.concatenate([np.round(rng.uniform(-2e6, 2e6, n // 4)) * (np.pi / 2), HARD,
                               [float(info.max), -float(info.max)]])
        middle = rng.uniform(-10, 10, n // 2)
    with np.errstate(over="ignore"):
        x = np.concatenate([spread, middle, hard]).astype(dtype)
    return x[np.isfinite(x)]


def max_ulps(name: str, x: np.ndarray, got: np.ndarray) -> float:
    exact = correctly_rounded(FUNCTIONS[name], x, dtype=x.dtype, near=getattr(np, name))
    return float(ulp_errors(got, exact).max())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_one_ulp_sampled(name, dtype):
    """Compiled code is ours; eager calls are the interpreter's, NumPy's (whose float64
    cos is 8 ulp off on some huge arguments)."""
    x = samples(dtype, 3000, name=name)
    fn = getattr(rnp, name)
    got = rune.jit(fn)(x)
    assert got.dtype == dtype
    assert max_ulps(name, x, got) <= 1.0
    np.testing.assert_array_equal(fn(x), getattr(np, name)(x))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_one_ulp_million(name, dtype):
    x = samples(dtype, 600_000, seed=1, name=name)
    assert max_ulps(name, x, rune.jit(getattr(rnp, name))(x)) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values_as_numpy(name, dtype):
    """NaN gives NaN, ±inf NaN (arctan: ±pi/2); ±0 and subnormals keep their value
    (cos: 1), signs included; the edges of float ranges agree with the oracle."""
    info = np.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    x = np.array([0.0, -0.0, tiny, -tiny, float(info.tiny), -float(info.tiny), 1e-30,
                  np.inf, -np.inf, np.nan, float(info.max), -float(info.max)], dtype)
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(x)
    fn = getattr(rnp, name)
    for got in (rune.jit(fn)(x), np.array([rune.jit(fn)(v) for v in x])):
        np.testing.assert_array_equal(got, want)
        numbers = ~np.isnan(want)  # a NaN's sign is not specified (glibc's varies)
        np.testing.assert_array_equal(np.signbit(got)[numbers], np.signbit(want)[numbers])
    finite = np.isfinite(x)
    assert max_ulps(name, x[finite], rune.jit(fn)(x)[finite]) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_same_bits_on_every_path(name, dtype):
    """A vectorized loop (huge arguments among ordinary ones: the slow reduction runs for
    some lanes of a vector only), its remainder, one value at a time, 8 unrolled
    elements, and lane blocks of a vmapped iterate give each element the same bits."""
    x = samples(dtype, 200, seed=2, name=name)[:203]
    fn = getattr(rnp, name)
    looped = rune.jit(fn)(x)
    one = rune.jit(fn)
    np.testing.assert_array_equal(np.array([one(v) for v in x[:40]]), looped[:40])
    unrolled = np.concatenate([rune.jit(fn)(x[i:i + 8]) for i in range(0, 64, 8)])
    np.testing.assert_array_equal(unrolled, looped[:64])
    laned = rune.jit(rune.vmap(lambda v: rune.iterate(
        lambda c: (fn(c[0]), c[1] + 1), (v, np.int64(0)), until=lambda c: c[1] >= 1,
        max_steps=1)[0]))(x)
    np.testing.assert_array_equal(laned, looped)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_small_arguments_skip_the_reduction_with_its_bits(name):
    """float64 vectors whose lanes are all below trig.SMALL take a branch without the
    reduction (q = 0, r = x): the bits of the same values in vectors that also hold a
    large argument (and so reduce), of one value at a time, and of a scan's scalar step,
    on both sides of the bound."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-0.8, 0.8, 500), 2.0 ** -rng.uniform(0, 40, 100),
                        np.nextafter(SMALL, [0.0, 1.0]), -np.nextafter(SMALL, [0.0, 1.0])])
    fn = rune.jit(getattr(rnp, name))
    alone = fn(x)
    mixed = np.empty(2 * x.size)
    mixed[0::2], mixed[1::2] = x, 3.0
    np.testing.assert_array_equal(fn(mixed)[0::2], alone)
    np.testing.assert_array_equal(np.array([fn(v) for v in x[:50]]), alone[:50])
    stepped = rune.jit(lambda xs: rune.scan(lambda c, v: (c, getattr(rnp, name)(v)), 0.0,
                                            xs)[1])(x)
    np.testing.assert_array_equal(stepped, alone)
    assert max_ulps(name, x, alone) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_in_a_scan_step_and_under_vmap(name, dtype):
    """A small carry (8 elements, unrolled) in the steps of a scan, and vmap of it: the
    same bits as a map of the function, so within an ulp."""
    fn = getattr(rnp, name)
    xs = samples(dtype, 40, seed=3, name=name)[:32].reshape(4, 8)

    def f(xs):
        return rune.scan(lambda h, x: (h + fn(x), fn(x)), rnp.zeros(8, dtype), xs)

    total, ys = rune.jit(f)(xs)
    mapped = rune.jit(fn)(xs)
    np.testing.assert_array_equal(ys, mapped)
    assert max_ulps(name, xs.ravel(), ys.ravel()) <= 1.0
    np.testing.assert_allclose(total, mapped.sum(axis=0, dtype=np.float64), rtol=1e-5)
    laned = rune.jit(rune.vmap(f))(np.stack([xs, xs[::-1]]))[1]
    np.testing.assert_array_equal(laned[0], ys)
    np.testing.assert_array_equal(laned[1], ys[::-1])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_unaffected(name):
    fn = getattr(rnp, name)
    derivative = {"sin": np.cos, "cos": lambda v: -np.sin(v),
                  "tan": lambda v: 1 / np.cos(v) ** 2, "arctan": lambda v: 1 / (1 + v * v),
                  "arcsin": lambda v: 1 / np.sqrt(1 - v * v),
                  "arccos": lambda v: -1 / np.sqrt(1 - v * v)}[name]
    x = np.linspace(-0.9, 0.9, 9) if name in BOUNDED else np.linspace(-1.4, 1.4, 9)
    rune.check_grads(lambda v: rnp.sum(fn(v) * v), x)
    for g in (rune.grad(lambda v: rnp.sum(fn(v))), rune.jit(rune.grad(lambda v: rnp.sum(fn(v))))):
        np.testing.assert_allclose(g(x), derivative(x), rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_vectorized_without_a_call_per_element(name, dtype):
    """A map over 10^5 elements runs vector code, without libm's or libmvec's functions
    and without gathers but in Payne–Hanek's reduction of huge arguments (its table, run
    for a vector only if a lane needs it): sin, cos and tan call their kernel's vector
    definition once per vector (compiled apart: its own code is vector code), as
    float64's arctan does; arcsin, arccos and float32's arctan are inlined."""
    lowered = rune.jit(getattr(rnp, name)).lower(np.zeros(100_000, dtype))
    asm = lowered.asm
    called = set(re.findall(CALL, asm))
    libm = LIBM.get(name, name)
    assert not called & {libm, libm + "f", "_ZGVeN8v_" + libm, "_ZGVdN4v_" + libm}
    if outlined.apart_here(name + ("_kernel" if dtype == np.float64 else "_kernel_short")):
        asm = kernel_apart(lowered, name)
    else:
        assert not re.search(rf"(?m)^\"?rune_{name}\w*\"?:", asm)  # inlined
    assert re.search(VECTOR_F64, asm)
    functions = re.split(r"(?m)^\"?(rune_\w+)\"?:", asm)
    with_gathers = {fn for fn, body in zip(functions[1::2], functions[2::2]) if "gather" in body}
    assert all(re.fullmatch(r"rune_payne_hanek_v\d+f64", fn) for fn in with_gathers), with_gathers


def pairs(dtype, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(y, x) for arctan2: magnitudes log-uniform over every binade, signs random, and
    ratios next to 1 and to the quarters of arctan's table."""
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max))
    sign = lambda: rng.choice([-1.0, 1.0], n)  # noqa: E731
    y, x = 2.0 ** rng.uniform(lo, hi, n) * sign(), 2.0 ** rng.uniform(lo, hi, n) * sign()
    near = 2.0 ** rng.uniform(-60, 60, n)
    ratio = rng.choice([1.0, 0.25, 0.5, 0.75, 1.125], n) * (1 + rng.uniform(-1e-3, 1e-3, n))
    with np.errstate(over="ignore", under="ignore"):
        ys = np.concatenate([y, near * ratio * sign(), rng.uniform(-10, 10, n)]).astype(dtype)
        xs = np.concatenate([x, near * sign(), rng.uniform(-10, 10, n)]).astype(dtype)
    keep = np.isfinite(ys) & np.isfinite(xs)
    return ys[keep], xs[keep]


@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_within_one_ulp(dtype):
    y, x = pairs(dtype, 2000)
    got = rune.jit(rnp.arctan2)(y, x)
    exact = correctly_rounded(mpmath.atan2, y, x, dtype=dtype, near=np.arctan2)
    assert got.dtype == dtype
    assert float(ulp_errors(got, exact).max()) <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_within_one_ulp_million(dtype):
    y, x = pairs(dtype, 340_000, seed=1)
    exact = correctly_rounded(mpmath.atan2, y, x, dtype=dtype, near=np.arctan2)
    assert float(ulp_errors(rune.jit(rnp.arctan2)(y, x), exact).max()) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_special_values_as_numpy(dtype):
    """Every pair of ±0, ±1, ±inf, NaN, a subnormal and the largest float: IEEE's table
    (±0 and ±pi by x's sign for y = ±0, ±pi/4 and ±3pi/4 for infinities...), signs
    included, and the same bits one value at a time."""
    info = np.finfo(dtype)
    v = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(info.smallest_subnormal),
         float(info.max), -3.0]
    y, x = np.array([(a, c) for a in v for c in v], dtype).T
    special = ~(np.isfinite(y) & np.isfinite(x) & (y != 0) & (x != 0))
    want = np.arctan2(y, x)
    exact = correctly_rounded(mpmath.atan2, y, x, dtype=dtype, near=np.arctan2)
    one = rune.jit(rnp.arctan2)
    for got in (rune.jit(rnp.arctan2)(y, x), np.array([one(a, c) for a, c in zip(y, x)])):
        np.testing.assert_array_equal(got[special], want[special])
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got)[numbers], np.signbit(want)[numbers])
        # NumPy's float32 arctan2(1, 1) is an ulp off pi/4: the oracle, not NumPy
        assert float(ulp_errors(got[~special], exact[~special]).max()) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_paths_scan_vmap_and_gradients(dtype):
    """The same bits in a loop, unrolled, in a scan step and under vmap; derivatives
    (x, -y) / (x^2 + y^2) unaffected."""
    y, x = (v[:64] for v in pairs(dtype, 40, seed=2))
    looped = rune.jit(rnp.arctan2)(y, x)
    unrolled = np.concatenate([rune.jit(rnp.arctan2)(y[i:i + 8], x[i:i + 8])
                               for i in range(0, 64, 8)])
    np.testing.assert_array_equal(unrolled, looped)
    ys, xs = y.reshape(8, 8), x.reshape(8, 8)

    def f(ys, xs):
        return rune.scan(lambda h, yx: (h, rnp.arctan2(yx[0], yx[1])), rnp.zeros(8, dtype),
                         (ys, xs))[1]

    np.testing.assert_array_equal(rune.jit(f)(ys, xs), looped.reshape(8, 8))
    np.testing.assert_array_equal(rune.jit(rune.vmap(f))(ys[None], xs[None])[0],
                                  looped.reshape(8, 8))
    a, c = np.linspace(-2, 2, 7), np.linspace(0.5, 3, 7)
    rune.check_grads(lambda p, q: rnp.sum(rnp.arctan2(p, q)), a, c)
    gy, gx = rune.jit(rune.grad(lambda p, q: rnp.sum(rnp.arctan2(p, q)), argnums=(0, 1)))(a, c)
    np.testing.assert_allclose(gy, c / (a * a + c * c), rtol=1e-14)
    np.testing.assert_allclose(gx, -a / (a * a + c * c), rtol=1e-14)


LIBMVEC = """
    import re, numpy as np, rune_jit as rune, rune_jit.numpy as rnp
    x = np.random.default_rng(0).uniform(-1, 1, 10_000)
    worst = 0.0
    for name in ("sin", "cos", "tan", "arctan", "arcsin", "arccos"):
        got, want = rune.jit(getattr(rnp, name))(x), getattr(np, name)(x)
        worst = max(worst, float(np.max(np.abs(got - want) / np.spacing(np.abs(want)))))
        text = rune.jit(getattr(rnp, name)).lower(x).llvm_ir
        assert "rune_" + name + "_kernel" not in text, name
    for fn, want in ((rnp.arctan2, np.arctan2(x, x[::-1])), (rnp.power, (x + 2) ** x[::-1])):
        got = rune.jit(fn)(x + 2 * (fn is rnp.power), x[::-1])
        worst = max(worst, float(np.max(np.abs(got - want) / np.spacing(np.abs(want)))))
    text = (rune.jit(rnp.power).lower(x, x).llvm_ir
            + rune.jit(rune.scipy.special.erf).lower(x).llvm_ir)
    assert "_kernel" not in text  # glibc's pow and erf, not ours compiled apart
    print(worst)
"""


def test_libmvec_still_selectable():
    """RUNE_JIT_MATH=libmvec (read at import: a fresh process) compiles glibc's functions
    instead of ours, within docs/accuracy.md's 4 ulp of NumPy."""
    env = dict(os.environ, RUNE_JIT_MATH="libmvec")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(LIBMVEC)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) <= 4
