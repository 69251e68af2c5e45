"""Small arrays lowered as LLVM vectors (issue 42): every elementwise primitive and dtype,
jitted, against the NumPy interpreter, at shapes of at most 16 elements (the CPU
backend's unroll limit), alone, under grad and under vmap; a small product's forms;
and code whose size does not grow with the element count."""

from contextlib import contextmanager

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit import config
from rune_jit._src.primitive import Primitive
from primitive_cases import CASES, FLOATS, assert_matches, expected, is_error, run_together

# 16 elements (one AVX-512 pair of float64 vectors), 15 (no power of two) and 3 axes
SMALL_SHAPES = ((16,), (3, 5), (2, 2, 2))
ELEMENTWISE = [c for c in CASES if "elementwise" in Primitive.registry[c.prim].traits]


@contextmanager
def interpreted():
    """The NumPy interpreter as the backend (the oracle), inside the block."""
    saved, config.backend = config.backend, "interpret"
    try:
        yield
    finally:
        config.backend = saved


def outcome(f, args):
    """f(*args), or the kind of error it raises (TypeError, OverflowError or ValueError:
    NumPy's UFuncTypeError, which the interpreter may raise, is a TypeError)."""
    try:
        return np.asarray(f(*args))
    except (TypeError, ValueError, OverflowError) as err:
        return next(e for e in (TypeError, OverflowError, ValueError) if isinstance(err, e))


def assert_same(got, want) -> None:
    if is_error(want):
        assert got is want, f"the interpreter raises {want.__name__}, jit gives {got!r}"
    else:
        assert not is_error(got), f"jit raises {got.__name__}, the interpreter does not"
        assert_matches(got, want)


def _by_dtype(dtypes=None):
    """A test per case and dtype, over SMALL_SHAPES (run as one program)."""
    return [pytest.param(case, dtype, id=f"{case.id}-{dtype}")
            for case in ELEMENTWISE for dtype in (dtypes or case.dtypes) if dtype in case.dtypes]


def _args(case, shape, dtype, rng):
    arity = len(case.shapes[0])
    return case.draw(rng, (shape,) * arity, dtype)


def assert_jit_as_interpreted(calls: list) -> None:
    """Each (f, args) jitted gives the interpreter's outcome; the calls it does not reject
    compiled as one program (primitive_cases.run_together)."""
    with interpreted():
        wants = [outcome(f, args) for f, args in calls]
    good = [k for k, want in enumerate(wants) if not is_error(want)]
    for k in set(range(len(calls))) - set(good):
        assert_same(outcome(rune.jit(calls[k][0]), calls[k][1]), wants[k])
    for k, got in zip(good, run_together(rune.jit, [calls[k] for k in good])):
        assert_same(np.asarray(got), wants[k])


@pytest.mark.parametrize("case,dtype", _by_dtype())
def test_small_elementwise_matches_interpreter(case, dtype, rng):
    assert_jit_as_interpreted([(case.fn, _args(case, shape, dtype, rng))
                               for shape in SMALL_SHAPES])


def _float_in_float_out(case) -> bool:
    return case.id not in {"isnan", "isfinite", "sign", "floor", "ceil", "trunc", "rint"} and (
        expected(case.ref, case.draw(np.random.default_rng(0), case.shapes[-1], np.dtype(
            "float64"))).dtype.kind == "f")


DIFFERENTIABLE = [c for c in ELEMENTWISE if c.dtype.kind == "f" and _float_in_float_out(c)]


def _weighted_sum(f):
    def loss(x, *rest):
        return rnp.sum(f(x, *rest) * np.linspace(0.5, 1.5, x.size).reshape(x.shape)
                       .astype(x.dtype))
    return loss


@pytest.mark.parametrize("case,dtype", [
    p for p in _by_dtype((np.dtype("float64"), np.dtype("float32")))
    if p.values[0] in DIFFERENTIABLE])
def test_small_elementwise_grad_matches_interpreter(case, dtype, rng):
    """The gradient of sum(f(x, ...)) in x: the backward pass's elementwise products of
    the same small shape, vectors too."""
    grad = rune.grad(_weighted_sum(case.fn))
    assert_jit_as_interpreted([(grad, _args(case, shape, dtype, rng)) for shape in SMALL_SHAPES])


@pytest.mark.parametrize("case,dtype", _by_dtype())
def test_small_elementwise_vmap_matches_interpreter(case, dtype, rng):
    """vmap over the leading axis: each lane a smaller array, the batched program one of
    the small shape."""
    assert_jit_as_interpreted([(rune.vmap(case.fn), _args(case, shape, dtype, rng))
                               for shape in SMALL_SHAPES if len(shape) > 1])


def _layers(w, h, x, k=3):
    for _ in range(k):
        h = rnp.tanh(w @ h + x)
    return h


@pytest.mark.parametrize("n", [2, 5, 8, 16])
def test_small_network_layers_match_interpreter(n, rng):
    """W @ h (the dot form), Wᵀ @ g in its gradient (the axpy form) and h @ W."""
    w, h, x = rng.normal(size=(n, n)) / n, rng.normal(size=n), rng.normal(size=n)
    ops = [lambda w, h, x: _layers(w, h, x),
           lambda w, h, x: _layers(w.T, h, x),
           lambda w, h, x: rnp.tanh(h @ w + x),
           rune.grad(lambda w, h, x: rnp.sum(_layers(w, h, x)), argnums=(0, 1)),
           rune.vmap(lambda w, h, x: _layers(w, h, x), in_axes=(None, 0, None))]
    for i, f in enumerate(ops):
        a = (w, np.stack([h, -h, 2 * h]), x) if i == 4 else (w, h, x)
        with interpreted():
            want = f(*a)
        got = rune.jit(f)(*a)
        for g, wv in zip(rune.tree_util.tree_leaves(got), rune.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, wv, rtol=1e-12, atol=1e-13)


def test_small_network_in_a_scan_step_matches_numpy(rng):
    """The program of issue 42 at n = 8, three layers in each of 16 steps, and its
    gradient in W against rune.check_grads."""
    n = 8
    w = rng.normal(size=(n, n)) / np.sqrt(n)
    h0, xs = rng.normal(size=n), rng.normal(size=(16, n)) * 0.1

    def f(w, h0, xs):
        return rnp.sum(rune.scan(lambda h, x: (_layers(w, h, x), None), h0, xs)[0])

    h = h0
    for x in xs:
        for _ in range(3):
            h = np.tanh(w @ h + x)
    np.testing.assert_allclose(rune.jit(f)(w, h0, xs), h.sum(), rtol=1e-12)
    rune.check_grads(rune.jit(lambda w: f(w, h0, xs)), w, modes=("rev",))


def _llvm_lines(f, *args) -> int:
    return len(rune.jit(f).lower(*args).llvm_ir.splitlines())


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_small_elementwise_code_does_not_grow_with_elements(dtype):
    """A chain of elementwise operations on 16 elements is as long in LLVM IR as on 2:
    one vector per operation, not one scalar per element."""
    def f(x, y):
        z = x * y + x
        return (rnp.abs(z) if dtype == "int32" else rnp.tanh(z)) - y

    lines = [_llvm_lines(f, np.ones(n, dtype), np.ones(n, dtype)) for n in (2, 16)]
    assert lines[1] <= lines[0] + 4, lines


def test_small_product_code_grows_with_outputs_not_terms():
    """W @ h at 16 x 16 is at most twice 8 x 8's code (an 8 x 8 product was 600 lines
    unrolled): a vector row per output, whatever its number of terms."""
    def f(w, h):
        return rnp.tanh(w @ h)

    lines = {n: _llvm_lines(f, np.ones((n, n)), np.ones(n)) for n in (8, 16)}
    assert lines[8] < 150 and lines[16] <= 2 * lines[8], lines


def test_small_float_vectors_keep_their_dtype_in_vector_math():
    """float16 and float32 vectors through the math functions (float16: in float32,
    rounded once) give NumPy's values."""
    for dtype in FLOATS:
        x = np.linspace(-2, 2, 16).astype(dtype)
        got = rune.jit(lambda v: rnp.exp(rnp.sin(v)) + rnp.tanh(v))(x)
        wide = x.astype(np.float64)
        want = (np.exp(np.sin(wide)) + np.tanh(wide)).astype(dtype)
        assert got.dtype == dtype
        # a few roundings of terms up to 3.7 (the sum cancels near x = -0.4)
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(got, want, rtol=4 * eps, atol=16 * eps)
