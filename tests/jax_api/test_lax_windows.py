"""rune_jit.lax's window and axis reductions: reduce_window, reduce, reduce_sum/prod/
max/min/and/or, argmax, argmin, against NumPy loops and, where installed, jax.lax;
eager, jitted, differentiated, batched and inside a scan."""

import itertools
import operator

import numpy as np
import pytest

import rune_jit as rune
import rune_jit.lax as lax
import rune_jit.numpy as rnp

RNG = np.random.default_rng(39)
X = RNG.normal(size=(4, 7))

OPS = {  # name: (computation, NumPy reduction, init)
    "add": (rnp.add, np.sum, 0.0),
    "max": (np.maximum, np.max, -np.inf),
    "min": (rnp.minimum, np.min, np.inf),
    "mul": (operator.mul, np.prod, 1.0),
}


def window_reference(x, init, reduction, window, strides, pads, base, wdil):
    """reduce_window by loops over the output positions."""
    grown = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    dil = np.full(grown, init)
    dil[tuple(slice(None, None, b) for b in base)] = x
    padded = np.pad(dil, [(max(lo, 0), max(hi, 0)) for lo, hi in pads], constant_values=init)
    padded = padded[tuple(slice(-min(lo, 0), n + min(hi, 0))
                          for (lo, hi), n in zip(pads, padded.shape))]
    spans = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    out_shape = [(n - s) // st + 1 for n, s, st in zip(padded.shape, spans, strides)]
    out = np.empty(out_shape)
    for pos in itertools.product(*(range(m) for m in out_shape)):
        win = padded[tuple(slice(p * st, p * st + s, d)
                           for p, st, s, d in zip(pos, strides, spans, wdil))]
        out[pos] = reduction(np.append(win.ravel(), init))
    return out


WINDOWS = {  # name: (window, strides, padding, base_dilation, window_dilation)
    "valid": ((2, 3), (1, 2), "VALID", None, None),
    "same dilated": ((2, 3), (2, 1), "SAME", (1, 2), (2, 1)),
    "pairs": ((3, 2), (1, 1), ((1, -1), (2, 0)), (2, 1), None),
}


def _pads(x, window, strides, padding, base, wdil):
    if not isinstance(padding, str):
        return list(padding)
    grown = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    return lax.padtype_to_pads(grown, [(w - 1) * d + 1 for w, d in zip(window, wdil)],
                               strides, padding)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", WINDOWS)
def test_reduce_window_matches_loops(op, name):
    computation, reduction, init = OPS[op]
    window, strides, padding, base, wdil = WINDOWS[name]
    base_, wdil_ = base or (1, 1), wdil or (1, 1)
    expected = window_reference(X, init, reduction, window, strides,
                                _pads(X, window, strides, padding, base_, wdil_), base_, wdil_)
    out = lax.reduce_window(X, init, computation, window, strides, padding, base, wdil)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_reduce_window_jit_grad_vmap_and_scan():
    def pool(x):
        return lax.reduce_window(x, -np.inf, np.maximum, (2, 2), (2, 2), "SAME")

    expected = window_reference(X, -np.inf, np.max, (2, 2), (2, 2), [(0, 0), (0, 1)],
                                (1, 1), (1, 1))
    np.testing.assert_allclose(rune.jit(pool)(X), expected)
    rune.check_grads(lambda x: rnp.sum(pool(x) ** 2), X)
    summed = lambda x: lax.reduce_window(x, 0.0, rnp.add, (3,), (1,), "SAME")
    rune.check_grads(lambda x: rnp.sum(rnp.sin(summed(x))), X[0])
    batched = rune.vmap(summed)(X)
    for row, y in zip(X, batched):
        np.testing.assert_allclose(y, summed(row), rtol=1e-12)

    def run(x0):
        def step(h, _):
            h = rnp.tanh(summed(h))
            return h, h[0]
        return rune.scan(step, x0, None, length=3)[1]

    h, firsts = X[0], []
    for _ in range(3):
        h = np.tanh(window_reference(h, 0.0, np.sum, (3,), (1,), [(1, 1)], (1,), (1,)))
        firsts.append(h[0])
    np.testing.assert_allclose(rune.jit(run)(X[0]), firsts, rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(run(x)), X[0])


def test_reduce_window_init_applies_once_per_window_and_to_padding():
    x = np.array([1.0, 2.0, 3.0])
    # windows [pad, 1], [2, 3], each with init 10 folded in once; pads hold 10 too
    out = lax.reduce_window(x, 10.0, rnp.add, (2,), (2,), [(1, 0)])
    np.testing.assert_allclose(out, [21.0, 15.0])


def test_reduce_window_unknown_computation_names_it():
    with pytest.raises(NotImplementedError, match="<lambda>.*lax.add"):
        lax.reduce_window(X, 0.0, lambda a, b: a + b, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="window_dimensions must be 2 positive ints"):
        lax.reduce_window(X, 0.0, rnp.add, (2,), (1, 1), "VALID")


def test_reduce_window_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jl = jax.lax
    theirs = {"add": jl.add, "max": jl.max, "min": jl.min, "mul": jl.mul}
    # each computation with one window configuration (the loops test takes all pairs)
    for (op, (computation, _, init)), (name, args) in zip(OPS.items(),
                                                          itertools.cycle(WINDOWS.items())):
        np.testing.assert_allclose(lax.reduce_window(X, init, computation, *args),
                                   jl.reduce_window(X, init, theirs[op], *args), rtol=1e-12,
                                   err_msg=f"{op} {name}")
    args = WINDOWS["same dilated"]
    ours = rune.grad(lambda x: rnp.sum(lax.reduce_window(x, 0.0, rnp.add, *args) ** 2))(X)
    ref = jax.grad(lambda x: (jl.reduce_window(x, 0.0, jl.add, *args) ** 2).sum())(X)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    args = WINDOWS["valid"]  # JAX has no max gradient with window or base dilation
    ours = rune.grad(lambda x: rnp.sum(lax.reduce_window(x, -np.inf, np.maximum, *args)))(X)
    ref = jax.grad(lambda x: jl.reduce_window(x, -np.inf, jl.max, *args).sum())(X)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


# ------------------------------------------------------------- reduce, reduce_*, argmax


def test_reduce_and_named_reductions():
    np.testing.assert_allclose(lax.reduce(X, 1.0, np.add, (1,)), X.sum(1) + 1.0)
    np.testing.assert_allclose(lax.reduce(X, 0.5, rnp.maximum, (0, 1)), X.max())
    a, b = lax.reduce((X, X.astype(np.int32)), (0.0, 0), (np.add), (0,))
    np.testing.assert_allclose(a, X.sum(0))
    assert b.dtype == np.int32
    np.testing.assert_allclose(lax.reduce_sum(X, (0,)), X.sum(0))
    np.testing.assert_allclose(lax.reduce_prod(X, (1,)), X.prod(1))
    np.testing.assert_allclose(lax.reduce_max(X, (0, 1)), X.max())
    np.testing.assert_allclose(lax.reduce_min(X, (1,)), X.min(1))
    assert lax.reduce_max(np.ones((0, 2)), (0,)).tolist() == [-np.inf, -np.inf]
    assert lax.reduce_min(np.ones((2, 0), np.int32), (1,)).tolist() == [2**31 - 1] * 2
    mask = X > 0
    assert lax.reduce_and(mask, (1,)).tolist() == mask.all(1).tolist()
    assert lax.reduce_or(mask, (0,)).tolist() == mask.any(0).tolist()
    with pytest.raises(TypeError, match="reduce_and: operand dtype float64"):
        lax.reduce_and(X, (0,))
    assert lax.reduce(mask, True, np.logical_and, (1,)).tolist() == mask.all(1).tolist()
    with pytest.raises(TypeError, match="logical and reduction takes bools, got int64"):
        lax.reduce(np.arange(3), 1, np.logical_and, (0,))
    with pytest.raises(NotImplementedError, match="'a?max' is not one rune_jit recognises"):
        lax.reduce(X, -np.inf, rnp.max, (0,))  # a reduction, not a binary maximum
    with pytest.raises(TypeError, match="init_values"):
        lax.reduce((X, X), 0.0, np.add, (0,))


def test_reductions_under_jit_grad_and_vmap():
    f = lambda x: lax.reduce(x, 0.0, np.add, (1,)) * lax.reduce_max(x, (1,))
    np.testing.assert_allclose(rune.jit(f)(X), X.sum(1) * X.max(1), rtol=1e-12)
    rune.check_grads(lambda x: rnp.sum(f(x)), X)
    rune.check_grads(lambda x: lax.reduce_prod(x, (0, 1)), X[:2])
    np.testing.assert_allclose(rune.vmap(lambda r: lax.reduce_min(r, (0,)))(X), X.min(1))


def test_argmax_argmin():
    x = np.array([[1.0, 3.0, 3.0], [np.nan, 0.0, -1.0]])
    out = lax.argmax(x, 1, np.int32)
    assert out.dtype == np.int32 and out.tolist() == [1, 0]
    assert lax.argmin(x, 1, np.int64).tolist() == [0, 0]
    assert rune.jit(lambda x: lax.argmax(x, 0, np.int32))(X).tolist() == X.argmax(0).tolist()
    assert rune.vmap(lambda r: lax.argmin(r, 0, np.int32))(X).tolist() == X.argmin(1).tolist()
    # an argmax used as an index: the gradient flows to the selected entry
    g = rune.grad(lambda r: r[lax.argmax(r, 0, np.int32)] * 2.0)(X[0])
    assert g.tolist() == [2.0 if i == X[0].argmax() else 0.0 for i in range(7)]
    with pytest.raises(TypeError, match="index_dtype must be an integer dtype"):
        lax.argmax(X, 0, np.float32)
