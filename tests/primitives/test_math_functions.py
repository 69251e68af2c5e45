"""Math of our own (tanh) as internal functions the module defines once per LLVM type and
calls (backend/cpu/codegen/module_functions.py): values within docs/accuracy.md's bounds of
NumPy's on every path, and one definition per type however many uses."""

import re

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from ulp_oracle import correctly_rounded, ulp_errors

# docs/accuracy.md: tanh differs from NumPy's by at most 3 ulp (float64), 2 (float32);
# float16 is computed in float32 and rounded once, as NumPy's is
ULPS = {np.float64: 4, np.float32: 4, np.float16: 1}
SHAPES = [(), (8,), (3, 5), (100_003,)]  # one value, unrolled, a small loop, vectorized


def ulps(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got), np.asarray(want)
    spacing = np.spacing(np.maximum(np.abs(got), np.abs(want))).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing))


def inputs(shape, dtype, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-6, 6, shape).astype(dtype)


def definitions(text: str, name: str) -> list[str]:
    """The types of the module's definitions of our function `name`."""
    return re.findall(rf'^define internal [^@]+ @"?rune_{name}_(\w+?)"?\(', text, re.M)


@pytest.mark.parametrize("dtype", list(ULPS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_tanh_within_bound_of_numpy(shape, dtype):
    x = inputs(shape, dtype)
    want = np.tanh(x)
    for got in (rune.jit(rnp.tanh)(x), rnp.tanh(x)):
        assert got.dtype == dtype and got.shape == shape
        assert ulps(got, want) <= ULPS[dtype]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_layers_in_a_scan_step(dtype):
    """A small carry's tanh is unrolled: each element a call of the scalar function."""
    rng = np.random.default_rng(1)
    W = (rng.standard_normal((8, 8)) / 3).astype(dtype)
    xs = rng.standard_normal((5, 8)).astype(dtype)

    def f(W, xs):
        def step(h, x):
            for _ in range(3):
                h = rnp.tanh(W @ h + x)
            return h, h
        return rune.scan(step, rnp.zeros(8, dtype), xs)[1]

    h, want = np.zeros(8, dtype), []
    for x in xs:
        for _ in range(3):
            h = np.tanh(W @ h + x)
        want.append(h)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(rune.jit(f)(W, xs), np.array(want), rtol=tol, atol=tol)
    np.testing.assert_allclose(f(W, xs), np.array(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_tanh_under_vmap_in_lane_blocks(dtype):
    """A vmapped iterate runs its step on blocks of lanes: vectors, which call the
    vector-typed definition; past the last block, lanes one at a time."""
    x = inputs((37,), dtype, seed=2)

    def two_steps(v):
        step = lambda c: (rnp.tanh(2 * c[0]), c[1] + 1)  # noqa: E731
        return rune.iterate(step, (v, np.int64(0)), until=lambda c: c[1] >= 2,
                            max_steps=4)[0]

    want = np.tanh(2 * np.tanh(2 * x))
    got = rune.jit(rune.vmap(two_steps))(x)
    assert got.dtype == dtype
    assert ulps(got, want) <= 2 * ULPS[dtype]
    text = rune.jit(rune.vmap(two_steps)).lower(x).llvm_ir
    assert re.search(r'call <\d+ x \w+> @"?rune_tanh_v', text)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_same_bits_from_scalar_and_vector_definitions(dtype):
    """Unrolled elements (scalar function), a vectorized loop and lane blocks (vector
    functions) give an element the same bits: the same arithmetic in every definition."""
    x = inputs((4096,), dtype, seed=3)
    looped = rune.jit(rnp.tanh)(x)
    unrolled = np.concatenate([rune.jit(rnp.tanh)(x[i:i + 8]) for i in range(0, 64, 8)])
    np.testing.assert_array_equal(unrolled, looped[:64])
    laned = rune.jit(rune.vmap(lambda v: rune.iterate(
        lambda c: (rnp.tanh(c[0]), c[1] + 1), (v, np.int64(0)), until=lambda c: c[1] >= 1,
        max_steps=1)[0]))(x[:100])
    np.testing.assert_array_equal(laned, looped[:100])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_gradients(dtype):
    f = lambda v: rnp.sum(rnp.tanh(rnp.tanh(v) * 1.5))  # noqa: E731
    rune.check_grads(f, inputs((8,), np.float64, seed=4))
    x = inputs((2, 8), dtype, seed=4)
    t = np.tanh(x)
    want = (1 - np.tanh(1.5 * t) ** 2) * 1.5 * (1 - t ** 2)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for g in (rune.grad(f), rune.jit(rune.grad(f))):
        np.testing.assert_allclose(g(x[0]), want[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(rune.jit(rune.vmap(rune.grad(f)))(x), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(rune.jit(rune.grad(lambda v: rnp.sum(rune.jvp(
        f, (v,), (rnp.ones_like(v),))[1])))(x[0]),
        rune.grad(lambda v: rnp.sum(rune.jvp(f, (v,), (rnp.ones_like(v),))[1]))(x[0]),
        rtol=tol, atol=tol)


def test_ten_uses_one_definition_per_type(monkeypatch):
    """Ten tanh on 8 elements (80 unrolled uses) and a float32 and float16 one: one
    scalar definition per type (float16 computes in float32's), not a copy per use.
    (The ten layers as written: folded into a loop, they would be one use.)"""
    monkeypatch.setattr(config, "fold_layers", False)

    def f(x, y, z):
        for _ in range(10):
            x = rnp.tanh(x * 0.9 + 0.1)
        return x, rnp.tanh(y), rnp.tanh(z)

    args = (np.ones(8), np.ones(8, np.float32), np.ones(8, np.float16))
    text = rune.jit(f).lower(*args).llvm_ir
    found = definitions(text, "tanh")
    assert len(found) == len(set(found))  # one definition per type
    assert sorted({t[-3:] for t in found}) == ["f32", "f64"]  # float16's is float32's
    assert len(re.findall(r'call [^@\n]+@"?rune_tanh_', text)) >= 12
    assert text.count("llvm.fma.f64(") < 20  # tanh's fused multiply-adds: one copy
    got = rune.jit(f)(*args)
    want = f(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3)


def test_tanh_inlined_where_vectorized():
    """LLVM inlines tanh before its vectorizers run (which cannot widen a call of ours:
    module_functions.py), so no definition is left in the machine code of a vectorized
    map, of lane blocks, or of a small carry's unrolled step."""
    x = inputs((10_000,), np.float64, seed=5)

    def lanes(v):
        return rune.iterate(lambda c: (rnp.tanh(2 * c[0]), c[1] + 1), (v, np.int64(0)),
                            until=lambda c: c[1] >= 2, max_steps=4)[0]

    def layers(W, xs):
        def step(h, x):
            for _ in range(4):
                h = rnp.tanh(W @ h + x)
            return h, None
        return rnp.sum(rune.scan(step, rnp.zeros(8), xs)[0])

    programs = [(rnp.tanh, (x,)), (rnp.tanh, (x.astype(np.float32),)),
                (rune.vmap(lanes), (x[:100],)), (layers, (np.eye(8), x[:32].reshape(4, 8)))]
    for f, args in programs:
        lowered = rune.jit(f).lower(*args)
        assert definitions(lowered.llvm_ir, "tanh")
        assert not re.search(r"(?m)^\"?rune_tanh\w*\"?:", lowered.asm)


def test_the_oracle_rounds_once():
    """exp(1) rounded from 200 bits is NumPy's float64 e; an error of one spacing is 1."""
    import mpmath

    e = correctly_rounded(mpmath.exp, np.array([1.0]))
    assert e[0] == np.e
    assert ulp_errors(np.nextafter(e, 3.0), e)[0] == 1.0


def test_the_oracle_rounds_subnormal_results_once():
    """Regression: mpmath's float() rounds to 53 bits, then to the subnormal's 52 here
    (k + 0.6875 -> k + 0.5 -> k, even), where rounding once gives k + 1."""
    import mpmath

    k = 3296796636312894
    got = correctly_rounded(lambda x: x * mpmath.ldexp(k + mpmath.mpf(0.6875), -1074),
                            np.array([1.0]))
    assert got[0] == (k + 1) * 2.0 ** -1074


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_oracle_at_first_precision_is_its_precision_bit_for_bit(dtype, monkeypatch):
    """Points rounded from FIRST bits are those PRECISION gives (digamma and loggamma
    next to their zeros, sin of huge arguments, subnormal results, a point at 2^k)."""
    import mpmath
    import ulp_oracle

    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(-20, 20, 150), 2.0 ** rng.uniform(-1074, 1000, 100),
                        [-2.4570247382208006, -0.5040830082644554, 1.4616321449683622,
                         1e22, 2.0 ** -1074, 0.0, 1.0, 2.0]]).astype(dtype)
    fns = [mpmath.digamma, lambda v: mpmath.re(mpmath.loggamma(v)), mpmath.sin,
           lambda v: v * mpmath.ldexp(mpmath.mpf(0.6875), -1070)]
    fast = [correctly_rounded(fn, x, dtype=dtype) for fn in fns]
    monkeypatch.setattr(ulp_oracle, "FIRST", ulp_oracle.PRECISION)
    for fn, got in zip(fns, fast):
        np.testing.assert_array_equal(got, correctly_rounded(fn, x, dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["exp", "cos", "log1p", "tan", "power", "arctan2"])
def test_the_oracle_in_long_double_is_mpmaths_bit_for_bit(name, dtype):
    """The fast path (long double, mpmath where its rounding could differ) returns what
    mpmath alone does: on every binade, the edges, and results that are 1 or a power of
    two (where the ulp below is half the one above)."""
    import mpmath

    fns = {"exp": mpmath.exp, "cos": mpmath.cos, "log1p": mpmath.log1p, "tan": mpmath.tan,
           "power": mpmath.power, "arctan2": mpmath.atan2}
    rng = np.random.default_rng(7)
    fi = np.finfo(dtype)
    x = np.concatenate([np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)),
                                           np.log(float(fi.max)), 1500)),
                        rng.uniform(-30, 30, 500), np.arange(-40.0, 40.0) / 4,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.max)]]).astype(dtype)
    xs = (x, np.abs(rng.permutation(x)) % 8) if name in ("power", "arctan2") else (x,)
    fast = correctly_rounded(fns[name], *xs, dtype=dtype, near=getattr(np, name))
    slow = correctly_rounded(fns[name], *xs, dtype=dtype)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(slow))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_results_in_doubt_settled_by_the_tested_values_give_the_same_verdict(dtype):
    """Given `got`, the oracle skips mpmath where long double leaves two neighbours in
    doubt and `got` is one of them: every point's verdict (within 1 ulp or not) is the
    one the correctly rounded array gives, for results 0, 1 or 2 ulps off either way."""
    import mpmath

    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-30, 30, 3000), rng.uniform(-1, 1, 3000)]).astype(dtype)
    exact = correctly_rounded(mpmath.log1p, x, dtype=dtype)
    got = exact.copy()
    for _ in range(2):  # 0, 1 or 2 steps, each way
        step = rng.integers(-1, 2, x.size)
        got = np.where(step == 0, got, np.nextafter(got, np.where(step > 0, np.inf, -np.inf)
                                                    .astype(dtype)))
    with np.errstate(invalid="ignore"):
        settled = correctly_rounded(mpmath.log1p, x, dtype=dtype, near=np.log1p, got=got)
        np.testing.assert_array_equal(ulp_errors(got, settled) <= 1,
                                      ulp_errors(got, exact) <= 1)
    moved = ~((settled == exact) | np.isnan(exact))
    assert (settled[moved] == got[moved]).all()
    assert moved.any() or dtype == np.float32  # (float32's doubt is 2^-35 of an ulp)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_square_is_a_product_and_numpys_bits(dtype):
    """x ** 2 is x * x (pow's correctly rounded square), not a call of pow: 27 times
    faster at 65536 float64 (400 us before), and the bits of NumPy's square."""
    x = np.concatenate([inputs((1000,), np.float64, seed=9),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e200, -1e-200, 5e-324]])
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        want = np.square(x)
    f = rune.jit(lambda v: v ** 2)
    np.testing.assert_array_equal(f(x), want)
    lowered = f.lower(x)
    assert "pow" not in lowered.llvm_ir
    g = rune.jit(rune.grad(lambda v: rnp.sum(v ** 2)))(x[:10].astype(np.float64))
    np.testing.assert_array_equal(g, 2 * x[:10].astype(np.float64))


def test_first_power_is_the_operand():
    """x ** 1.0 is x itself (NaN, infinities and -0.0 too), not a call of pow per
    element: the derivative of x ** 2, 2 * x ** 1.0, is in every gradient of a square
    (the NLS bench's |u| ** 2 spent 40% of its gradient's time in pow)."""
    x = np.concatenate([inputs((1000,), np.float64, seed=4),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e300]])
    f = rune.jit(lambda v: v ** 1.0)
    got = f(x)
    np.testing.assert_array_equal(got, x ** 1.0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(x))
    assert "pow" not in f.lower(x).llvm_ir
    g = rune.jit(rune.grad(lambda v: rnp.sum(rnp.abs(v) ** 2)))
    assert "pow" not in g.lower(x).llvm_ir
