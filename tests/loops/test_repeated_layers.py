"""Repeated layers traced as a loop (rune_jit/_src/ops/repeated_layers.py, issue 42 item 4):
the same computation applied K times in a row becomes a scan over the K layers. The
folded programs are checked against NumPy and against the same programs traced with
folding off, on every path, under grad, jvp and vmap, and inside scan and iterate
steps; and what must not fold does not: layers that differ in a shape, a dtype or a
parameter, layers with effects, big elementwise layers (unrolled, they fuse into one
loop over memory), a program without repetition, two layers."""

import functools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rune_jit as rune
import rune_jit.numpy as rnp
from rune_jit._src import config
from loop_helpers import PATHS, assert_trees_close, on, walk
from programs import Program, make_inputs, programs

N, K = 8, 12
RNG = np.random.default_rng(42)
W = RNG.normal(size=(N, N)) / np.sqrt(N)
H0, X = RNG.normal(size=N), RNG.normal(size=N) * 0.1


def network(k: int = K):
    def f(w, h, x):
        for _ in range(k):
            h = rnp.tanh(w @ h + x)
        return h
    return f


def np_network(w, h, x, k: int = K):
    for _ in range(k):
        h = np.tanh(w @ h + x)
    return h


def scans(f, *args) -> list:
    """The scans of f's program, nested ones included."""
    return [e for e in walk(rune.make_ir(f)(*args)) if e.prim.name == "scan"]


def unfolded(f, monkeypatch):
    """`f` traced with folding off, when called."""
    def g(*args):
        monkeypatch.setattr(config, "fold_layers", False)
        try:
            return rune.jit(f)(*args)
        finally:
            monkeypatch.setattr(config, "fold_layers", True)
    return g


def test_layers_fold_into_one_scan_over_them():
    (loop,) = scans(network(), W, H0, X)
    assert loop.params["length"] == K
    step = loop.params["step"]
    assert [e.prim.name for e in step.eqns].count("tanh") == 1


@pytest.mark.parametrize("path", PATHS)
def test_folded_layers_compute_what_numpy_does(path, monkeypatch):
    got = on(path, network(), monkeypatch)(W, H0, X)
    np.testing.assert_allclose(got, np_network(W, H0, X), rtol=1e-13)


def test_folded_layers_derivatives_are_the_unrolled_ones(monkeypatch):
    def loss(w, h, x):
        return rnp.sum(network()(w, h, x) ** 2)

    grads = rune.jit(rune.grad(loss, argnums=(0, 1, 2)))
    assert_trees_close(grads(W, H0, X), unfolded(rune.grad(loss, argnums=(0, 1, 2)),
                                                 monkeypatch)(W, H0, X))
    rune.check_grads(loss, W, H0, X)
    tangent = RNG.normal(size=N)
    jvp = rune.jit(lambda h, t: rune.jvp(lambda h: network()(W, h, X), (h,), (t,)))
    assert_trees_close(jvp(H0, tangent),
                       unfolded(lambda h, t: rune.jvp(lambda h: network()(W, h, X), (h,), (t,)),
                                monkeypatch)(H0, tangent))


def test_folded_layers_under_vmap_and_in_loop_steps(monkeypatch):
    hs = RNG.normal(size=(5, N))
    batched = rune.jit(rune.vmap(network(), in_axes=(None, 0, None)))(W, hs, X)
    np.testing.assert_allclose(batched, [np_network(W, h, X) for h in hs], rtol=1e-13)

    xs = RNG.normal(size=(6, N)) * 0.1

    def rnn(w, h0, xs):
        return rune.scan(lambda h, x: (network()(w, h, x), None), h0, xs)[0]

    def np_rnn(w, h, xs):
        for x in xs:
            h = np_network(w, h, x)
        return h

    assert len(scans(rnn, W, H0, xs)) == 2
    np.testing.assert_allclose(rune.jit(rnn)(W, H0, xs), np_rnn(W, H0, xs), rtol=1e-13)
    loss = rune.jit(rune.grad(lambda w: rnp.sum(rnn(w, H0, xs))))
    assert_trees_close(loss(W), unfolded(rune.grad(lambda w: rnp.sum(rnn(w, H0, xs))),
                                         monkeypatch)(W))

    def settle(h0):  # layers until the state stops moving, lanes apart
        return rune.iterate(lambda h: network(6)(W * 0.5, h, X), h0,
                            until=lambda h: rnp.max(rnp.abs(h - network(6)(W * 0.5, h, X)))
                            < 1e-9, max_steps=200)

    def np_settle(h):
        while not np.max(np.abs(h - np_network(W * 0.5, h, X, 6))) < 1e-9:
            h = np_network(W * 0.5, h, X, 6)
        return h

    starts = RNG.normal(size=(3, N)) * np.array([[0.1], [1.0], [3.0]])
    assert len(scans(rune.vmap(settle), starts)) == 2  # in the step, and in the test
    got = rune.jit(rune.vmap(settle))(starts)
    np.testing.assert_allclose(got, [np_settle(h) for h in starts], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", PATHS)
def test_layers_that_differ_in_a_constant_fold_with_it_as_an_operand(path, monkeypatch):
    scales = [1.0 + 0.25 * i for i in range(K)]

    def f(w, h):
        for s in scales:
            h = rnp.tanh(s * (w @ h))
        return h

    def np_f(w, h):
        for s in scales:
            h = np.tanh(s * (w @ h))
        return h

    (loop,) = scans(f, W, H0)
    assert loop.params["length"] == K
    np.testing.assert_allclose(on(path, f, monkeypatch)(W, H0), np_f(W, H0), rtol=1e-13)
    rune.check_grads(lambda w: rnp.sum(f(w, H0)), W)


def test_a_layer_of_another_dtype_or_shape_is_not_merged():
    def mixed(xp):
        def f(w, h, x):
            for i in range(K):
                h = xp.tanh(w @ h + x)
                if i == K // 2:
                    h = xp.tanh(w.astype(np.float32) @ h.astype(np.float32)).astype(np.float64)
            return h
        return f

    loops = scans(mixed(rnp), W, H0, X)
    assert [loop.params["length"] for loop in loops] == [K // 2 + 1, K - K // 2 - 1]
    for loop in loops:  # the float64 layers on either side, not the float32 one
        assert all(v.type.dtype == np.float64 for e in loop.params["step"].eqns
                   for v in e.outputs)
    np.testing.assert_allclose(rune.jit(mixed(rnp))(W, H0, X), mixed(np)(W, H0, X), rtol=1e-6)

    def growing(h):
        for _ in range(K):
            h = rnp.concatenate([rnp.sin(h), h[:1]])
        return h

    assert not scans(growing, H0)
    h = H0
    for _ in range(K):
        h = np.concatenate([np.sin(h), h[:1]])
    np.testing.assert_allclose(rune.jit(growing)(H0), h, rtol=1e-14)


def test_layers_that_differ_in_a_parameter_are_not_merged():
    def f(h):
        for i in range(20):
            h = rnp.sin(rnp.roll(h, i % 5) * 1.5)  # the shift is the roll's parameter
        return h

    h = H0
    for i in range(20):
        h = np.sin(np.roll(h, i % 5) * 1.5)
    np.testing.assert_allclose(rune.jit(f)(H0), h, rtol=1e-14)
    # five layers, one of each shift, make the layer of the scan
    assert [loop.params["length"] for loop in scans(f, H0)] == [4]


def test_intermediate_layers_read_after_the_run_are_rows_of_the_scan():
    def f(w, h, x):
        seen = []
        for _ in range(K):
            h = rnp.tanh(w @ h + x)
            seen.append(h)
        return rnp.stack(seen[::3]), h

    hs, h = [], H0
    for _ in range(K):
        h = np.tanh(W @ h + X)
        hs.append(h)
    assert scans(f, W, H0, X)
    got = rune.jit(f)(W, H0, X)
    np.testing.assert_allclose(got[0], np.stack(hs[::3]), rtol=1e-13)
    np.testing.assert_allclose(got[1], h, rtol=1e-13)


def test_what_must_stay_unrolled_does():
    def big(x):  # elementwise layers on 1000 elements: one fused loop as written
        for _ in range(K * 3):
            x = rnp.sin(x) * 1.5
        return x

    def printing(h):  # an effect names its line and runs in program order
        for _ in range(K):
            h = rnp.tanh(W @ h)
            rune.debug.print("h0 {}", h[0])
        return h

    def plain(h):  # no repetition
        return rnp.tanh(W @ rnp.sin(h) + rnp.cos(W @ h)) * rnp.exp(-h)

    assert not scans(big, np.ones(1000))
    assert not scans(printing, H0)
    assert not scans(network(2), W, H0, X)
    folded = str(rune.make_ir(plain)(H0))
    config.fold_layers = False
    try:
        assert str(rune.make_ir(plain)(H0)) == folded
    finally:
        config.fold_layers = True


def test_folded_layers_do_not_warn_of_an_unrolled_loop():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rune.jit(network(300))(W, H0, X)


def layered(prog: Program, k: int, xp, seen_inputs: list | None = None):
    """`prog` as a layer applied k times to its first input, `s`: each layer sets
    s = tanh(s + sum of its results / 4) (bounded whatever k), its other inputs read by
    every layer; -> (final s, s after each layer, stacked). `seen_inputs` collects each
    layer's inputs."""
    def f(s, *rest):
        seen = []
        for _ in range(k):
            if seen_inputs is not None:
                seen_inputs.append((s,) + rest)
            env = prog.run(xp, (s,) + rest)
            total = sum(xp.sum(env[i]) for i in prog.sinks)
            s = xp.tanh(s + total * 0.25)
            seen.append(s)
        return s, xp.stack(seen)
    return f


@pytest.mark.parametrize("examples", [pytest.param(6, id="sample"),
                                      pytest.param(30, id="whole", marks=pytest.mark.slow)])
def test_generated_layers_fold_and_agree_with_numpy_and_finite_differences(examples,
                                                                           monkeypatch):
    folded = []

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow,
                                     HealthCheck.function_scoped_fixture])
    @given(prog=programs(min_ops=4, max_ops=10), k=st.integers(3, 7),
           seed=st.integers(0, 2**32 - 1))
    def check(prog, k, seed):
        inputs = make_inputs(prog, seed)
        layers_in: list = []
        want = layered(prog, k, np, layers_in)(*inputs)
        # away from the kinks of every layer (an argmax's ties, a max's), where rounding
        # may choose another branch and differences step over one
        assume(min(prog.kink_distance(x) for x in layers_in) > 1e-2)
        f = layered(prog, k, rnp)
        folded.append(bool(scans(f, *inputs)))
        assert_trees_close(rune.jit(f)(*inputs), want, rtol=1e-9, atol=1e-12)
        loss = rune.grad(lambda *xs: rnp.sum(f(*xs)[1]), argnums=tuple(range(len(inputs))))
        assert_trees_close(rune.jit(loss)(*inputs), unfolded(loss, monkeypatch)(*inputs),
                           rtol=1e-9, atol=1e-12)
        rune.check_grads(lambda *xs: rnp.sum(f(*xs)[1]), *inputs)

    check()
    assert sum(folded) >= len(folded) // 2, folded  # most of them fold


def test_a_weak_int_computed_in_the_layers_is_still_checked():
    """Regression: a Python int argument turned into each layer's own value, then
    converted to int16 (NumPy raises OverflowError where it does not fit), was checked
    by reading that value after the trace; folding removed it (KeyError)."""
    def f(h, n):
        for i in range(K):
            h = (h * 3 + (n * 2 + i)) % 100
        return h

    h = np.arange(4, dtype=np.int16)
    want = h
    for i in range(K):
        want = (want * 3 + (3 * 2 + i)) % 100
    assert scans(f, h, 3)
    np.testing.assert_array_equal(rune.jit(f)(h, 3), want)
    with pytest.raises(OverflowError, match="40000 out of bounds for int16"):
        rune.jit(f)(h, 20000)
    # the values the checks read are rows of the scan, in program order: the same
    # program at every trace (a disk cache's key)
    assert len({str(rune.make_ir(f)(h, 3)) for _ in range(3)}) == 1


def test_a_value_and_its_tangent_are_never_stacked_together():
    """Regression (found by tests/transforms/test_properties.py): a chain of adds whose jvp
    interleaves the value's adds with the tangent's was folded, in the jvp's own trace,
    with a period of three and the value and the tangent stacked as one row: partial
    evaluation then found the value unknown ("a primal output came out unknown"). Now
    passes' traces are left as they build them, and a row whose values come back asks for
    a longer layer."""
    def f(x):
        vs = [rnp.sin(x) for _ in range(14)]
        vs.append(rnp.sin(vs[0]))
        return functools.reduce(lambda a, b: a + b, [rnp.sum(v) for v in vs[1:]])

    rune.check_grads(f, 0.3)
    np.testing.assert_allclose(rune.jit(rune.grad(f))(0.3),
                               np.cos(0.3) * (13 + np.cos(np.sin(0.3))), rtol=1e-12)
