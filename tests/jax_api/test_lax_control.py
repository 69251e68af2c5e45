"""rune_jit.lax's loops and control flow against jax.lax's, eager and compiled, under
grad and vmap; the errors of cond's branches."""

import numpy as np
import pytest

import rune_jit as rune
from rune_jit import lax


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _same(got, want, rtol=1e-13):
    import jax

    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, np.asarray(w), rtol=rtol)


def _programs(L):
    """One program per loop spelling, written once for rune_jit.lax and for jax.lax."""
    def scan(xs):
        step = lambda c, x: ((c[0] * 0.5 + x, c[1] + 1), {"y": L.sin(x) * c[0]})  # noqa: E731
        return L.scan(step, (xs[0] * 0, np.int32(0)), xs, reverse=True)

    return {
        "scan": scan,
        "scan_length": lambda xs: L.scan(lambda c, _: (c * 1.5, c), xs[0], None, length=4),
        "fori_loop": lambda xs: L.fori_loop(
            1, 4, lambda i, c: c + L.dynamic_index_in_dim(xs, i, keepdims=False) * i, xs[0]),
        "while_loop": lambda xs: L.while_loop(lambda c: c[0] < 10.0,
                                              lambda c: (c[0] * 2.0 + 1.0, c[1] + xs[1]),
                                              (xs[0, 0] * 0 + 0.5, xs[2])),
        "cond": lambda xs: L.cond(xs[0, 0] > 0.0, lambda a, b: {"s": a * b},
                                  lambda a, b: {"s": a - b}, xs[1], xs[2]),
        "cond_operand": lambda xs: L.cond(xs[0, 0] < 0.0, lambda a: a * 2.0, lambda a: -a,
                                          operand=xs[1]),
        "switch": lambda xs: L.switch(np.int32(5), [lambda a: a + 1.0, lambda a: L.exp(a)],
                                      xs[1]),
        "map": lambda xs: L.map(lambda r: r * r.sum(), xs),
        "map_batched": lambda xs: L.map(lambda r: (r * 2.0, r.sum()), xs, batch_size=3),
        "map_batched_even": lambda xs: L.map(lambda r: r.sum(), xs, batch_size=2),
        # affine maps composed: associative, not commutative
        "associative_scan": lambda xs: L.associative_scan(
            lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (xs, xs * 2.0), axis=1),
        "associative_scan_reverse": lambda xs: L.associative_scan(
            lambda a, b: (a[0] + b[0], L.max(a[1], b[1])), (xs, -xs), reverse=True),
        "stop_gradient": lambda xs: (xs * L.stop_gradient(xs)).sum(),
    }


XS = np.linspace(-1.0, 1.5, 28).reshape(7, 4)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.slow
def test_loops_against_jax(jax, compiled):
    ours, theirs = _programs(lax), _programs(jax.lax)
    run = lambda xs: {n: f(xs) for n, f in ours.items()}  # noqa: E731
    got = (rune.jit(run) if compiled else run)(XS)
    for name, f in theirs.items():
        _same(got[name], f(XS))


@pytest.mark.parametrize("name", ["scan", "fori_loop", "cond", "cond_operand", "switch",
                                  "map_batched", "associative_scan", "stop_gradient"])
@pytest.mark.slow
def test_gradients_against_jax(jax, name):
    def loss(programs):
        return lambda xs: sum((leaf ** 2).sum() for leaf in jax.tree.leaves(
            programs[name](xs)) if leaf.dtype.kind == "f")

    got = rune.jit(rune.grad(loss(_programs(lax))))(XS)
    _same(got, jax.grad(loss(_programs(jax.lax)))(XS), rtol=1e-12)


def test_vmap_of_cond_switch_and_batched_map(jax):
    x = np.array([-1.0, 0.5, 2.0, 3.0])
    f = lambda L: lambda v: L.cond(v > 0.0, L.sin, L.cos, v) + L.switch(  # noqa: E731
        (v * 2).astype(np.int32), [L.exp, L.neg, L.square], v)
    _same(rune.jit(rune.vmap(f(lax)))(x), jax.vmap(f(jax.lax))(x))
    g = lambda L: lambda m: L.map(lambda r: r * m.sum(), m, batch_size=2)  # noqa: E731
    ms = np.arange(30.0).reshape(2, 5, 3)
    _same(rune.vmap(g(lax))(ms), jax.vmap(g(jax.lax))(ms))


def test_cond_branches_that_differ_name_the_leaf_and_both_types():
    for run in (lambda f: f(), lambda f: rune.jit(f)()):
        with pytest.raises(TypeError, match=r"output\['a'\]\[1\] is float64\[\] in true_fn "
                                            r"but int32\[\] in false_fn"):
            run(lambda: lax.cond(True, lambda x: {"a": (x, x)},
                                 lambda x: {"a": (x, x.astype(np.int32))}, 1.0))
        with pytest.raises(TypeError, match="true_fn returns PyTreeDef\\(\\(\\*, \\*\\)\\)"):
            run(lambda: lax.cond(True, lambda x: (x, x), lambda x: x, 1.0))
    with pytest.raises(TypeError, match="positionally or as operand=, not both"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=2.0)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        lax.map(lambda x: x, np.ones(3), batch_size=0)
