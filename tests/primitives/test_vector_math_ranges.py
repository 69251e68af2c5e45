"""Every input range of issue 41 (bench/math_ranges.py times them one at a time) gives
NumPy's values: results that go subnormal or to 0 or overflow, subnormal arguments, huge
trigonometric arguments, NaN and inf, mixed in one array so that a vector register holds
lanes of several ranges (the vector math's blends, vecmath/kit.py's times_pow2 and
subnormal handling, pio2.py's vector Payne–Hanek), within the documented ulps of the
correctly rounded result, with the same bits on every compiled path (a vectorized loop,
one value at a time, a scan's small carry and vmap's lane blocks; eager calls are
NumPy's own)."""

import mpmath
import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from test_vector_math_exp_log import on_every_path
from ulp_oracle import correctly_rounded, ulp_errors

pytestmark = pytest.mark.skipif(config.math != "own", reason="RUNE_JIT_MATH=libmvec")

DTYPES = [np.float64, np.float32]
ORACLES = {"exp": mpmath.exp, "exp2": lambda x: mpmath.power(2, x), "expm1": mpmath.expm1,
           "log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "log1p": mpmath.log1p,
           "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "tanh": mpmath.tanh,
           "power": mpmath.power}
BOUND = {"tanh": 4.0}  # ulps (docs/accuracy.md); the others' 1


def arguments(name: str, dtype, n: int = 40, seed: int = 0) -> tuple[np.ndarray, ...]:
    """n values from each range, shuffled together: e^x's (and 2^x's, x**y's) results
    near and past the overflow and underflow thresholds and through the subnormals,
    subnormal x, |x| up to 1e22, ±inf and NaN."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    top = float(np.log2(fi.max)) + 1  # 1024, 128
    low = float(np.log2(fi.smallest_subnormal)) - 1  # -1075, -150
    tiny = np.exp2(rng.uniform(low + 1, np.log2(float(fi.tiny)), n)) * rng.choice([-1, 1], n)
    spread = [rng.uniform(-5, 5, n), tiny, np.full(4, np.nan), np.array([np.inf, -np.inf])]
    if name == "power":
        y = np.concatenate([rng.uniform(low - 30, top + 30, n), rng.uniform(-5, 5, n),
                            rng.uniform(0.5, 1.0, n), rng.uniform(-1, 1, 6)])
        x = np.concatenate([np.full(n, 2.0), rng.uniform(0.1, 10, n), np.abs(tiny),
                            [np.nan, 2.0, np.inf, 0.5, -np.inf, 0.0]])
        order = rng.permutation(x.size)
        return x[order].astype(dtype), y[order].astype(dtype)
    scale = {"exp": np.log(2.0), "expm1": np.log(2.0), "exp2": 1.0}.get(name)
    if scale is not None:
        spread.append(rng.uniform(low - 30, top + 30, n) * scale)
    elif name in ("sin", "cos", "tan"):
        spread += [rng.uniform(1e6, 1e7, n), np.exp(rng.uniform(np.log(2.0 ** 30), np.log(1e22),
                                                                n))]
    elif name.startswith("log"):
        spread = [np.abs(v) for v in spread] + [rng.uniform(-1, 0, 4)]
    x = np.concatenate(spread)
    return (x[rng.permutation(x.size)].astype(dtype),)


def check(name: str, xs: tuple, got: np.ndarray) -> None:
    """NumPy's NaN, ±inf and zeros (signed) in the same places; the rest within BOUND ulps
    of the correctly rounded result (subnormals counted in their own ulps: no flush)."""
    numpy_fn = getattr(np, name)
    with np.errstate(all="ignore"):
        want = numpy_fn(*xs)
    exact = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact])
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    rest = [x[~exact] for x in xs]
    oracle = correctly_rounded(ORACLES[name], *rest, dtype=got.dtype, near=numpy_fn)
    errors = ulp_errors(got[~exact], oracle)
    assert errors.max(initial=0) <= BOUND.get(name, 1.0), (name, errors.max())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", ORACLES)
def test_every_range_in_one_array_on_every_path(name, dtype):
    xs = arguments(name, dtype)
    f = getattr(rnp, name)
    jitted = rune.jit(f)
    got = np.asarray(jitted(*xs))
    check(name, xs, got)
    one = np.array([jitted(*(x[i] for x in xs)) for i in range(0, xs[0].size, 7)], dtype)
    np.testing.assert_array_equal(one, got[::7])
    if len(xs) == 1 and dtype == np.float64:
        on_every_path(f, xs[0][:32].reshape(8, 4))
