"""rune_jit.nn against jax.nn (values and derivatives recorded from jax 0.10.2 with x64)
and against NumPy/SciPy, eagerly and compiled, at extremes, under vmap and in a scan."""

import numpy as np
import pytest
import scipy.special as sc

import rune_jit as rune
from rune_jit import nn

X = np.array([-1000.0, -20.0, -3.0, -0.5, 0.0, 0.5, 3.0, 20.0, 1000.0])
# name: (jax.nn.NAME(X), vmap(grad(jax.nn.NAME))(X))
JAX = {
    "relu": ([0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 3.0, 20.0, 1000.0],
             [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
    "relu6": ([0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 3.0, 6.0, 6.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]),
    "sigmoid": ([0.0, 2.0611536181902037e-09, 0.04742587317756678, 0.3775406687981454, 0.5,
                 0.6224593312018546, 0.9525741268224334, 0.9999999979388463, 1.0],
                [0.0, 2.0611536139418496e-09, 0.04517665973091214, 0.2350037122015945, 0.25,
                 0.2350037122015945, 0.045176659730912, 2.0611536879193953e-09, 0.0]),
    "log_sigmoid": ([-1000.0, -20.000000002061153, -3.048587351573742, -0.9740769841801067,
                     -0.6931471805599453, -0.4740769841801067, -0.04858735157374206,
                     -2.061153620314381e-09, -0.0],
                    [1.0, 0.999999997938847, 0.9525741268224333, 0.6224593312018546, 0.5,
                     0.3775406687981454, 0.04742587317756678, 2.061153618190205e-09, 0.0]),
    "softplus": ([0.0, 2.061153620314381e-09, 0.04858735157374206, 0.4740769841801067,
                  0.6931471805599453, 0.9740769841801067, 3.048587351573742,
                  20.000000002061153, 1000.0],
                 [0.0, 2.061153618190205e-09, 0.04742587317756678, 0.3775406687981454, 0.5,
                  0.6224593312018546, 0.9525741268224333, 0.999999997938847, 1.0]),
    "silu": ([-0.0, -4.122307236380407e-08, -0.14227761953270035, -0.1887703343990727, 0.0,
              0.3112296656009273, 2.8577223804673, 19.999999958776925, 1000.0],
             [0.0, -3.916191866064679e-08, -0.08810410601516963, 0.2600388126973482, 0.5,
              0.7399611873026518, 1.0881041060151693, 1.0000000391619202, 1.0]),
    "elu": ([-1.0, -0.9999999979388464, -0.950212931632136, -0.3934693402873665, 0.0, 0.5,
             3.0, 20.0, 1000.0],
            [0.0, 2.0611535811454473e-09, 0.04978706836786395, 0.6065306597126334, 1.0, 1.0,
             1.0, 1.0, 1.0]),
    "leaky_relu": ([-10.0, -0.2, -0.03, -0.005, 0.0, 0.5, 3.0, 20.0, 1000.0],
                   [0.01, 0.01, 0.01, 0.01, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "gelu": ([-0.0, -0.0, -0.003637392081773161, -0.15428599017485609, 0.0, 0.3457140098251439,
              2.996362607918227, 20.0, 1000.0],
             [0.0, 0.0, -0.011584166630970047, 0.1326300964653577, 0.5, 0.8673699035346423,
              1.0115841666309702, 1.0, 1.0]),
    "gelu_exact": ([-0.0, -5.50724823721231e-88, -0.004049694094890279, -0.15426876936299344,
                    0.0, 0.34573123063700656, 2.99595030590511, 20.0, 1000.0],
                   [0.0, -1.1014360483133152e-86, -0.01194564720418392, 0.13250487534383715,
                    0.5, 0.8674951246561629, 1.011945647204184, 1.0, 1.0]),
}
FUNCS = {**{n: getattr(nn, n) for n in JAX if n != "gelu_exact"},
         "gelu_exact": lambda x: nn.gelu(x, approximate=False), "swish": nn.swish}
JAX["swish"] = JAX["silu"]


def _grad(f):
    return rune.grad(lambda v: f(v).sum())


@pytest.mark.parametrize("name", sorted(JAX))
def test_values_and_derivatives_match_jax(name, backend):
    f = FUNCS[name]
    value, deriv = JAX[name]
    np.testing.assert_allclose(backend(f)(X), value, rtol=1e-13, atol=1e-15)
    got = backend(_grad(f))(X)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, deriv, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(JAX))
def test_check_grads(name):
    x = np.array([-2.3, -0.7, 0.4, 1.9, 4.1])
    rune.check_grads(FUNCS[name], x, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["softplus", "sigmoid", "silu", "gelu", "elu"])
def test_float32_stays_float32(name, backend):
    assert backend(FUNCS[name])(X.astype(np.float32)).dtype == np.float32


def test_tanh_is_numpy_tanh():
    np.testing.assert_allclose(nn.tanh(X[2:-2]), np.tanh(X[2:-2]))


LOGITS = np.array([[1e4, 1e4 + 1.0, 1e4 - 2.0, -1e4], [-3.0, 0.5, 2.0, 0.0]])


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_family_of_large_logits(axis, backend):
    want = _np_softmax(LOGITS, axis)
    np.testing.assert_allclose(backend(lambda x: nn.softmax(x, axis=axis))(LOGITS), want,
                               rtol=1e-13)
    np.testing.assert_allclose(backend(lambda x: nn.log_softmax(x, axis=axis))(LOGITS),
                               LOGITS - sc.logsumexp(LOGITS, axis=axis, keepdims=True),
                               rtol=1e-13, atol=1e-11)  # the reference's 1e4 - 1e4
    np.testing.assert_allclose(backend(lambda x: nn.logsumexp(x, axis=axis))(LOGITS),
                               sc.logsumexp(LOGITS, axis=axis), rtol=1e-14)
    g = backend(_grad(lambda x: nn.logsumexp(x, axis=axis)))(LOGITS)
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-300)


def test_softmax_derivatives():
    x = np.array([[0.3, -1.2, 2.0], [1e4, 1e4 - 0.5, 1e4 + 0.25]])
    rune.check_grads(nn.softmax, x, modes=("fwd", "rev"))
    rune.check_grads(nn.log_softmax, x, modes=("fwd", "rev"))
    rune.check_grads(lambda v: nn.logsumexp(v, axis=1), x, modes=("fwd", "rev"))


def test_logsumexp_of_all_minus_infinity(backend):
    x = np.full((2, 3), -np.inf)
    out = backend(lambda v: nn.logsumexp(v, axis=1))(x)
    np.testing.assert_array_equal(out, [-np.inf, -np.inf])
    g = backend(_grad(lambda v: nn.logsumexp(v, axis=1)))(x)
    np.testing.assert_array_equal(g, np.zeros((2, 3)))


@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_weights_and_sign_match_scipy(keepdims, backend):
    a = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 700.0]])
    b = np.array([1.0, -2.0, 0.5])
    for kw in (dict(axis=1), dict(axis=None), dict(axis=0)):
        got = backend(lambda x, w, kw=kw: nn.logsumexp(x, b=w, keepdims=keepdims,
                                                       return_sign=True, **kw))(a, b)
        want = sc.logsumexp(a, b=b, keepdims=keepdims, return_sign=True, **kw)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis, backend):
    labels = np.array([[0, 2], [3, 1], [-1, 5]])
    got = backend(lambda x: nn.one_hot(x, 4, axis=axis))(labels)
    want = np.moveaxis((labels[..., None] == np.arange(4)).astype(np.float64), -1, axis)
    np.testing.assert_array_equal(got, want)
    assert nn.one_hot(labels, 4, dtype=np.int32).dtype == np.int32


def test_standardize(backend):
    x = np.random.default_rng(0).standard_normal((3, 5)) * 4 + 2
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(backend(nn.standardize)(x), want, rtol=1e-10)
    rune.check_grads(nn.standardize, x, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["softplus", "gelu", "relu6", "sigmoid"])
def test_vmap_matches_a_loop(name, backend):
    x = np.random.default_rng(1).standard_normal((4, 3)) * 5
    f = lambda v: nn.log_softmax(FUNCS[name](v))  # noqa: E731
    want = np.stack([f(row) for row in x])
    np.testing.assert_allclose(backend(rune.vmap(f))(x), want, rtol=1e-12, atol=1e-14)


def test_inside_a_scan_step(backend):
    xs = np.random.default_rng(2).standard_normal((5, 3))

    def run(w):
        def step(c, x):
            h = nn.gelu(c * w + x) + nn.softplus(x)
            return nn.log_softmax(h), nn.logsumexp(h)
        return rune.scan(step, np.zeros(3), xs)

    carry, ys = backend(run)(np.float64(0.7))
    c, want = np.zeros(3), []
    for x in xs:
        h = nn.gelu(c * 0.7 + x) + nn.softplus(x)
        c = nn.log_softmax(h)
        want.append(sc.logsumexp(h))
    np.testing.assert_allclose(carry, c, rtol=1e-12)
    np.testing.assert_allclose(ys, want, rtol=1e-12)
    rune.check_grads(lambda w: run(w)[1].sum(), np.float64(0.7), modes=("fwd", "rev"))


# what a fused primitive would keep: the reductions' values, one row (or one column) of
# each, and no temporary of the input's size
FUSED = [("softmax rows", lambda x: nn.softmax(x, axis=-1), lambda x: sc.softmax(x, axis=-1)),
         ("softmax columns", lambda x: nn.softmax(x, axis=0), lambda x: sc.softmax(x, axis=0)),
         ("logsumexp", lambda x: nn.logsumexp(x, axis=1), lambda x: sc.logsumexp(x, axis=1)),
         ("norm", lambda x: rune.numpy.linalg.norm(x, axis=1),
          lambda x: np.linalg.norm(x, axis=1)),
         ("normalize", lambda x: x / rune.numpy.sum(x, axis=1, keepdims=True),
          lambda x: x / np.sum(x, axis=1, keepdims=True))]


@pytest.mark.parametrize("name,f,want", FUSED, ids=[n for n, *_ in FUSED])
def test_compiles_as_a_fused_primitive_would(name, f, want):
    x = np.random.default_rng(0).normal(size=(200, 60))
    lowered = rune.jit(f).lower(x)
    assert lowered.cost()["scratch_bytes"] <= 4 * 8 * 200  # a few rows, never x's size
    np.testing.assert_allclose(rune.jit(f)(x), want(x), rtol=1e-13, atol=1e-15)


def test_an_output_written_over_its_temporary_only_when_no_other_reader_sees_it():
    """The output of e / sum(e) takes e's buffer; where e is also read at another index
    (reversed), returned, or read after, it must keep its own, and the values are right."""
    x = np.random.default_rng(1).normal(size=(30, 7))
    e = np.exp(x)
    cases = [(lambda v: (lambda e: e / rune.numpy.sum(e) + e[::-1])(rune.numpy.exp(v)),
              e / e.sum() + e[::-1]),
             (lambda v: (lambda e: (e / rune.numpy.sum(e), e))(rune.numpy.exp(v)),
              (e / e.sum(), e)),
             (lambda v: (lambda e: (e / rune.numpy.sum(e), e / rune.numpy.sum(e)))(
                 rune.numpy.exp(v)), (e / e.sum(), e / e.sum())),
             (lambda v: (lambda e: (lambda o: (o, o * 2.0))(e / rune.numpy.max(e)))(
                 rune.numpy.exp(v)), (e / e.max(), 2 * e / e.max()))]
    for f, want in cases:
        got = rune.jit(f)(x)
        for g, w in zip(got if isinstance(got, tuple) else [got],
                        want if isinstance(want, tuple) else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-14)
